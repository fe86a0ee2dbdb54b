/* evolver.c -- transient editing: the internal builder and the public
 * Evolver.  Mirrors frozenmap/_pycore/evolver.py; see "Transient ownership"
 * in the essay at the top of frozendict.c.
 *
 * Every edit locates first (champ_find runs the keys' __hash__/__eq__),
 * updates the hash accumulator (a value's __hash__), and only then changes
 * the tries, with no user code left to run.  The two trie edits are each
 * failure-atomic (see keytrie.c); when the second one fails (MemoryError)
 * the first is undone on the path it just made owned, which needs no
 * allocation, so a failed edit leaves the transient exactly as it was.
 */
#include "cfrozenmap.h"
#include "docstrings.h"

#if FM_FREE_THREADED
#  define FM_BEGIN_CS(op) Py_BEGIN_CRITICAL_SECTION(op)
#  define FM_END_CS() Py_END_CRITICAL_SECTION()
#else
#  define FM_BEGIN_CS(op) {
#  define FM_END_CS() }
#endif

/* --- the transient ------------------------------------------------------- */

int
transient_init(fm_state *st, transient *t, champ_node *root, order_node *order, Py_ssize_t len,
               uint64_t next_seq, Py_uhash_t acc, int acc_valid)
{
    if (root == NULL) {
        root = champ_empty_root();
        if (root == NULL) {
            t->root = NULL;
            t->order = NULL;
            return -1;
        }
        order = NULL;
        len = 0;
    }
    else {
        champ_incref(root);
    }
    t->root = root;
    t->order = (order_node *)Py_XNewRef(order);
    t->len = len;
    t->next_seq = next_seq;
    t->acc = acc;
    t->acc_valid = acc_valid;
    t->owner = 1; /* may edit what only it references (see keytrie.c) */
    t->shared = 0;
    return 0;
}

void
transient_clear(transient *t)
{
    champ_clear(&t->root);
    Py_CLEAR(t->order);
}

/* tp_traverse of a transient's references (the order trie owns the items). */
static int
transient_traverse(transient *t, visitproc visit, void *arg)
{
    /* Key-trie nodes are not GC objects; the order trie owns the items. */
    Py_VISIT(t->order);
    return 0;
}

static int
transient_ensure_root(fm_state *st, transient *t)
{
    if (t->root == NULL) { /* cleared by the GC: behave as empty */
        t->root = champ_empty_root();
        if (t->root == NULL) {
            return -1;
        }
        Py_CLEAR(t->order);
        t->len = 0;
    }
    return 0;
}

/* Find key: -1, 0, 1 (*entry).  Computes the key hash into *h. */
static int
transient_lookup(transient *t, PyObject *key, Py_uhash_t *h, champ_entry **entry)
{
    if (hashing_key_hash_fast(key, h) < 0) {
        return -1;
    }
    return champ_find(t->root, *h, key, entry);
}

/* The write phase of an edit runs no user code of its own, but allocating an
 * order node can start a GC run, whose finalizers could read or freeze() an
 * Evolver whose tries are half-updated -- and publish a version that then
 * changes, or whose key trie borrows a value the edit releases.  So an
 * Evolver's write phase pauses the collector (the pure core does the same).
 * Private transients (builders, one-shot derivations) are out of any
 * finalizer's reach and skip it.  1 when it paused the collector. */
static inline int
transient_gc_pause(transient *t)
{
    return t->shared ? PyGC_Disable() : 0;
}

static inline void
transient_gc_resume(int paused)
{
    if (paused) {
        PyGC_Enable();
    }
}

static int
transient_write_new(fm_state *st, transient *t, Py_uhash_t h, PyObject *key, PyObject *value)
{
    uint64_t seq = t->next_seq;
    champ_entry entry = {h, seq, key, value};
    order_node *order = order_insert(st, t->order, seq, key, value, t->owner);
    if (order == NULL) {
        return -1;
    }
    champ_node *root = champ_put(t->root, 0, &entry, NULL, t->owner);
    if (root == NULL) {
        int in_place = order == t->order;
        Py_DECREF(order);
        if (in_place) {
            /* Edited in place (t->order is referenced once again now that
             * our reference is gone): take the item out again, in place. */
            order_node *back;
            if (order_remove(st, t->order, seq, t->owner, &back) == 0) {
                Py_XDECREF(back);
            }
        }
        return -1;
    }
    /* Install every field, then release what the old state held. */
    champ_node *old_root = t->root;
    order_node *old_order = t->order;
    t->root = root;
    t->order = order;
    t->next_seq = seq + 1;
    t->len++;
    champ_xdecref(old_root);
    Py_XDECREF(old_order);
    return 0;
}

int
transient_put_new(fm_state *st, transient *t, Py_uhash_t h, PyObject *key, PyObject *value)
{
    if (transient_ensure_root(st, t) < 0) {
        return -1;
    }
    int paused = transient_gc_pause(t);
    int r = transient_write_new(st, t, h, key, value);
    transient_gc_resume(paused);
    return r;
}

/* transient_assoc for a key whose hash h is known. */
static int
transient_assoc_hashed(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                       PyObject *value)
{
    champ_entry *found;
    if (transient_ensure_root(st, t) < 0) {
        return -1;
    }
    int r = champ_find(t->root, h, key, &found);
    if (r < 0) {
        return -1;
    }
    Py_uhash_t acc = t->acc;
    int acc_valid = t->acc_valid;
    if (r == 0) {
        if (hashing_acc_replace(&acc, &acc_valid, h, NULL, value) < 0) {
            return -1;
        }
        if (transient_put_new(st, t, h, key, value) < 0) {
            return -1;
        }
        t->acc = acc;
        t->acc_valid = acc_valid;
        return 1;
    }
    if (found->value == value) {
        return 0;
    }
    champ_entry old = *found;
    /* Keep the old value alive until both tries are updated. */
    Py_INCREF(old.value);
    if (hashing_acc_replace(&acc, &acc_valid, h, old.value, value) < 0) {
        Py_DECREF(old.value);
        return -1;
    }
    champ_entry entry = {h, old.seq, old.key, value}; /* the first key stays */
    int paused = transient_gc_pause(t);
    int result = -1;
    order_node *order = order_replace(st, t->order, old.seq, value, t->owner);
    if (order != NULL) {
        champ_node *root = champ_put(t->root, 0, &entry, found, t->owner);
        if (root == NULL) {
            int in_place = order == t->order;
            Py_DECREF(order);
            if (in_place) { /* edited in place: put the old value back */
                order_node *back = order_replace(st, t->order, old.seq, old.value, t->owner);
                Py_XDECREF(back);
            }
        }
        else {
            champ_node *old_root = t->root;
            order_node *old_order = t->order;
            t->root = root;
            t->order = order;
            t->acc = acc;
            t->acc_valid = acc_valid;
            champ_xdecref(old_root);
            Py_XDECREF(old_order);
            result = 1;
        }
    }
    transient_gc_resume(paused);
    Py_DECREF(old.value);
    return result;
}

int
transient_assoc(fm_state *st, transient *t, PyObject *key, PyObject *value)
{
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return -1;
    }
    return transient_assoc_hashed(st, t, h, key, value);
}

/* Remove the entry found by lookup: 0 or -1 (unchanged on error).  The old
 * key and value are returned as new refs if the out pointers are not NULL. */
static int
transient_remove_entry(fm_state *st, transient *t, champ_entry *found, PyObject **old_key,
                       PyObject **old_value)
{
    champ_entry old = *found;
    Py_INCREF(old.key);
    Py_INCREF(old.value);
    Py_uhash_t acc = t->acc;
    int acc_valid = t->acc_valid;
    if (hashing_acc_replace(&acc, &acc_valid, old.hash, old.value, NULL) < 0) {
        goto error;
    }
    int paused = transient_gc_pause(t);
    if (t->owner != 0) {
        /* Make the order path editable first (same contents), so that the
         * removal below is done in place and cannot fail after the key trie
         * has changed. */
        order_node *owned = order_replace(st, t->order, old.seq, old.value, t->owner);
        if (owned == NULL) {
            transient_gc_resume(paused);
            goto error;
        }
        Py_XSETREF(t->order, owned);
    }
    champ_node *root = champ_remove(t->root, 0, found, t->owner);
    order_node *order;
    if (root == NULL || order_remove(st, t->order, old.seq, t->owner, &order) < 0) {
        champ_xdecref(root);
        transient_gc_resume(paused);
        goto error;
    }
    champ_node *old_root = t->root;
    order_node *old_order = t->order;
    t->root = root;
    t->order = order;
    t->len--;
    t->acc = acc;
    t->acc_valid = acc_valid;
    champ_xdecref(old_root);
    Py_XDECREF(old_order);
    transient_gc_resume(paused);
    if (old_key != NULL) {
        *old_key = old.key;
    }
    else {
        Py_DECREF(old.key);
    }
    if (old_value != NULL) {
        *old_value = old.value;
    }
    else {
        Py_DECREF(old.value);
    }
    return 0;
error:
    Py_DECREF(old.key);
    Py_DECREF(old.value);
    return -1;
}

int
transient_dissoc(fm_state *st, transient *t, PyObject *key, PyObject **old_value)
{
    Py_uhash_t h;
    champ_entry *found;
    int r = transient_lookup(t, key, &h, &found);
    if (r <= 0) {
        return r;
    }
    if (transient_remove_entry(st, t, found, NULL, old_value) < 0) {
        return -1;
    }
    return 1;
}

PyObject *
transient_publish(fm_state *st, transient *t, PyTypeObject *tp)
{
    if (transient_ensure_root(st, t) < 0) {
        return NULL;
    }
    /* The version's references on the roots make later edits copy.  Take
     * them (and copy every field) before allocating the version: the
     * allocation can run the GC, whose finalizers may edit an Evolver. */
    champ_node *root = champ_xnewref(t->root);
    order_node *order = (order_node *)Py_XNewRef(t->order);
    PyObject *fd = fd_from_parts(tp, root, order, t->len, t->next_seq, t->acc, t->acc_valid);
    champ_xdecref(root);
    Py_XDECREF(order);
    return fd;
}

/* --- merge_into ---------------------------------------------------------- */

static PyObject *
transient_sequence_error(Py_ssize_t index)
{
    PyObject *exc = PyObject_CallFunction(PyExc_TypeError, "s", "object is not iterable");
    if (exc == NULL) {
        return NULL;
    }
    PyObject *note = PyUnicode_FromFormat(
        "Cannot convert dictionary update sequence element #%zd to a sequence", index);
    PyObject *notes = note ? PyList_New(1) : NULL;
    if (notes == NULL) {
        Py_XDECREF(note);
        Py_DECREF(exc);
        return NULL;
    }
    PyList_SET_ITEM(notes, 0, note);
    int r = PyObject_SetAttrString(exc, "__notes__", notes);
    Py_DECREF(notes);
    if (r < 0) {
        Py_DECREF(exc);
        return NULL;
    }
    return exc;
}

/* Fill an empty transient from an exact dict, whose keys are distinct: the
 * order trie is built bottom-up and the key trie by one radix partition,
 * with no lookups and no __eq__ calls. */
static int
transient_bulk_load(fm_state *st, transient *t, PyObject *source)
{
    Py_ssize_t n = PyDict_GET_SIZE(source);
    if (n == 0) {
        return 0;
    }
    PyObject **objs = PyMem_Malloc(2 * n * sizeof(PyObject *));
    champ_entry *entries = PyMem_Malloc(n * sizeof(champ_entry));
    Py_ssize_t got = 0;
    int result = -1;
    if (objs == NULL || entries == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (got < n && PyDict_Next(source, &pos, &k, &v)) {
            objs[got] = Py_NewRef(k);
            objs[n + got] = Py_NewRef(v);
            got++;
        }
    }
    if (got != n) {
        PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) { /* may raise: nothing built yet */
        Py_uhash_t h;
        if (hashing_key_hash_fast(objs[i], &h) < 0) {
            goto done;
        }
        entries[i].hash = h;
        entries[i].seq = (uint64_t)i;
        entries[i].key = objs[i];
        entries[i].value = objs[n + i];
    }
    order_node *order = order_build(st, objs, objs + n, n, t->owner);
    if (order == NULL) {
        goto done;
    }
    champ_node *root = champ_build(entries, n);
    if (root == NULL) {
        Py_DECREF(order);
        goto done;
    }
    champ_node *old_root = t->root;
    order_node *old_order = t->order;
    t->root = root;
    t->order = order;
    t->len = n;
    t->next_seq = (uint64_t)n;
    t->acc_valid = 0; /* unknown until someone hashes the result */
    champ_xdecref(old_root);
    Py_XDECREF(old_order);
    result = 0;
done:
    if (objs != NULL) {
        for (Py_ssize_t i = 0; i < got; i++) {
            Py_DECREF(objs[i]);
            Py_DECREF(objs[n + i]);
        }
    }
    PyMem_Free(objs);
    PyMem_Free(entries);
    return result;
}

/* for key, value in iterable_of_pairs: assoc */
static int
transient_merge_pairs_iter(fm_state *st, transient *t, PyObject *it)
{
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            Py_DECREF(item);
            PyErr_SetString(PyExc_TypeError, "items() must yield (key, value) pairs");
            return -1;
        }
        int r = transient_assoc(st, t, PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1));
        Py_DECREF(item);
        if (r < 0) {
            return -1;
        }
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* Merge base.items(arg): arg read through its base type's own storage, as
 * dict_merge reads a dict (never a subclass's items(), keys() or
 * __getitem__). */
static int
transient_merge_items_of(fm_state *st, transient *t, PyObject *base, PyObject *arg)
{
    PyObject *items = PyObject_CallMethodOneArg(base, st->str_items, arg);
    if (items == NULL) {
        return -1;
    }
    PyObject *it = PyObject_GetIter(items);
    Py_DECREF(items);
    if (it == NULL) {
        return -1;
    }
    int r = transient_merge_pairs_iter(st, t, it);
    Py_DECREF(it);
    return r;
}

static int
transient_collect_entry(champ_entry *e, void *arg)
{
    return champ_difflist_append((champ_difflist *)arg, e) < 0 ? -1 : 0;
}

/* hasattr(obj, name) as Python spells it: only AttributeError means no. */
static int
transient_hasattr(PyObject *obj, PyObject *name, PyObject **out)
{
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            *out = NULL;
            return 0;
        }
        return -1;
    }
    *out = v;
    return 1;
}

/* Whether tp iterates as base does (it does not override __iter__): then
 * dict_merge reads it from base's storage.  1, 0 or -1. */
static int
transient_default_iter(PyTypeObject *tp, PyObject *base)
{
    PyObject *mine = fm_type_lookup(tp, "__iter__");
    if (mine == NULL && PyErr_Occurred()) {
        return -1;
    }
    PyObject *theirs = fm_type_lookup((PyTypeObject *)base, "__iter__");
    if (theirs == NULL && PyErr_Occurred()) {
        return -1;
    }
    return mine == theirs;
}

/* Add a version's items in its order with their stored hashes: stored keys
 * are never hashed again (the entries borrow from src, held by the caller). */
static int
transient_merge_version(fm_state *st, transient *t, fd_object *src)
{
    champ_difflist entries = {0};
    int r = champ_foreach(src->root, transient_collect_entry, &entries);
    if (r == 0 && entries.len > 1) {
        qsort(entries.items, entries.len, sizeof(champ_entry), fd_compare_seq);
    }
    for (Py_ssize_t i = 0; r == 0 && i < entries.len; i++) {
        champ_entry *e = &entries.items[i];
        r = transient_assoc_hashed(st, t, e->hash, e->key, e->value) < 0 ? -1 : 0;
    }
    champ_difflist_free(&entries);
    return r;
}

static int
transient_merge_arg(fm_state *st, transient *t, PyObject *arg)
{
    int is_fd = fd_type_check(st, arg);
    if (is_fd) {
        fd_object *src = (fd_object *)arg;
        if (t->len == 0 && t->next_seq == 0 && src->root != NULL) {
            /* Adopt the version's roots: O(1), the same items and order. */
            champ_setref(&t->root, champ_newref(src->root));
            Py_XSETREF(t->order, (order_node *)Py_XNewRef(src->order));
            t->len = src->len;
            t->next_seq = src->next_seq;
            t->acc_valid = fd_acc(src, &t->acc);
            return 0; /* src's references on the roots make edits copy */
        }
        return transient_merge_version(st, t, src);
    }
    if (PyDict_CheckExact(arg)) {
        if (t->len == 0 && t->next_seq == 0) {
            return transient_bulk_load(st, t, arg);
        }
        return transient_merge_items_of(st, t, (PyObject *)&PyDict_Type, arg);
    }
    /* A dict subclass, or another core's or the builtin frozendict (any
     * subclass), that does not override __iter__: read from its storage, as
     * dict_merge does.  Otherwise the generic paths below. */
    PyObject *base =
        PyDict_Check(arg) ? Py_NewRef((PyObject *)&PyDict_Type) : fd_foreign_base(st, arg);
    if (base == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (base != NULL) {
        int plain = transient_default_iter(Py_TYPE(arg), base);
        int r = plain > 0 ? transient_merge_items_of(st, t, base, arg) : plain;
        Py_DECREF(base);
        if (plain != 0) {
            return r;
        }
    }
    PyObject *keys_method;
    int has = transient_hasattr(arg, st->str_keys, &keys_method);
    if (has < 0) {
        return -1;
    }
    if (has) {
        PyObject *keys = PyObject_CallNoArgs(keys_method);
        Py_DECREF(keys_method);
        if (keys == NULL) {
            return -1;
        }
        PyObject *it = PyObject_GetIter(keys);
        if (it == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
#if PY_VERSION_HEX >= 0x030F0000
            /* dict's (and the builtin frozendict's) message on 3.15 */
            PyObject *mapping_name = fm_type_fullname(Py_TYPE(arg));
            PyObject *keys_name = fm_type_fullname(Py_TYPE(keys));
            if (mapping_name != NULL && keys_name != NULL) {
                PyErr_Format(PyExc_TypeError, "%U.keys() must return an iterable, not %U",
                             mapping_name, keys_name);
            }
            Py_XDECREF(mapping_name);
            Py_XDECREF(keys_name);
#else
            PyErr_Clear(); /* dict's own message (PyMapping_Keys) */
            PyErr_Format(PyExc_TypeError, "%s.keys() returned a non-iterable (type %s)",
                         Py_TYPE(arg)->tp_name, Py_TYPE(keys)->tp_name);
#endif
        }
        Py_DECREF(keys);
        /* All the keys first, then the lookups, as dict_merge does. */
        PyObject *list = it == NULL ? NULL : PySequence_List(it);
        Py_XDECREF(it);
        if (list == NULL) {
            return -1;
        }
        int r = 0;
        for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(list); i++) {
            PyObject *key = Py_NewRef(PyList_GET_ITEM(list, i));
            PyObject *value = PyObject_GetItem(arg, key);
            r = value == NULL || transient_assoc(st, t, key, value) < 0 ? -1 : 0;
            Py_XDECREF(value);
            Py_DECREF(key);
        }
        Py_DECREF(list);
        return r;
    }
    PyObject *it = PyObject_GetIter(arg);
    if (it == NULL) {
        return -1;
    }
    PyObject *element;
    Py_ssize_t index = 0;
    for (; (element = PyIter_Next(it)) != NULL; index++) {
        PyObject *pair;
        if (PyTuple_CheckExact(element)) {
            pair = element;
        }
        else {
            pair = PySequence_Tuple(element);
            Py_DECREF(element);
            if (pair == NULL) {
                if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                    PyObject *type, *value, *tb;
                    PyErr_Fetch(&type, &value, &tb);
                    PyErr_NormalizeException(&type, &value, &tb);
                    PyObject *exc = transient_sequence_error(index);
                    if (exc != NULL) {
                        /* raise ... from None */
                        PyException_SetContext(exc, Py_XNewRef(value));
                        PyException_SetCause(exc, NULL);
                        PyErr_SetObject(PyExc_TypeError, exc);
                        Py_DECREF(exc);
                    }
                    Py_XDECREF(type);
                    Py_XDECREF(value);
                    Py_XDECREF(tb);
                }
                Py_DECREF(it);
                return -1;
            }
        }
        if (PyTuple_GET_SIZE(pair) != 2) {
            PyErr_Format(PyExc_ValueError,
                         "dictionary update sequence element #%zd has length %zd; "
                         "2 is required",
                         index, PyTuple_GET_SIZE(pair));
            Py_DECREF(pair);
            Py_DECREF(it);
            return -1;
        }
        int r = transient_assoc(st, t, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        Py_DECREF(pair);
        if (r < 0) {
            Py_DECREF(it);
            return -1;
        }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

int
transient_merge(fm_state *st, transient *t, PyObject *arg, PyObject *kwargs,
                PyObject *const *kwvalues, PyObject *kwnames)
{
    if (transient_ensure_root(st, t) < 0) {
        return -1;
    }
    if (arg != NULL && transient_merge_arg(st, t, arg) < 0) {
        return -1;
    }
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        if (t->len == 0 && t->next_seq == 0) {
            return transient_bulk_load(st, t, kwargs);
        }
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(kwargs, &pos, &k, &v)) {
            if (transient_assoc(st, t, k, v) < 0) {
                return -1;
            }
        }
    }
    if (kwnames != NULL) {
        Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (transient_assoc(st, t, PyTuple_GET_ITEM(kwnames, i), kwvalues[i]) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* --- the Evolver --------------------------------------------------------- */

#define EV(o) ((evolver_object *)(o))

int
evolver_check(fm_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, st->evolver_type);
}

/* The edit lock.  Edits of one Evolver are serialised across threads, on
 * GIL builds too: an edit runs user code (a key's __eq__, a value's
 * __hash__) between locating and writing, and the GIL switches threads
 * there.  An edit from another thread waits (with the GIL released) until
 * the running one ends; an edit from the thread that is already inside one
 * (re-entry from that user code) raises RuntimeError.  The lock is
 * recursive for the thread holding it, so freeze() and a finalizer's edit
 * run while that thread holds it outside an edit's busy phase still work.
 * Reads take no lock: they hold references on the roots instead (see
 * evolver_lookup). */
static int
evolver_lock(evolver_object *self)
{
    unsigned long me = PyThread_get_thread_ident();
    if (self->depth > 0 && self->holder == me) {
        self->depth++;
        return 0;
    }
    if (self->lock == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver is not initialised");
        return -1;
    }
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        PyLockStatus got;
        do {
            Py_BEGIN_ALLOW_THREADS
            got = PyThread_acquire_lock_timed(self->lock, -1, 1);
            Py_END_ALLOW_THREADS
            if (got == PY_LOCK_INTR && Py_MakePendingCalls() < 0) {
                return -1; /* a signal handler raised (KeyboardInterrupt) */
            }
        } while (got != PY_LOCK_ACQUIRED);
    }
    self->holder = me;
    self->depth = 1;
    return 0;
}

static void
evolver_unlock(evolver_object *self)
{
    if (--self->depth == 0) {
        self->holder = 0;
        PyThread_release_lock(self->lock);
    }
}

/* Forget a cached freeze(), releasing it last (its release can run
 * finalizers, which see a consistent evolver). */
static void
evolver_forget_frozen(evolver_object *self)
{
    PyObject *frozen = self->frozen;
    self->frozen = NULL;
    Py_XDECREF(frozen);
}

static int
evolver_begin(evolver_object *self)
{
    if (self->busy && self->depth > 0 && self->holder == PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver edited from inside one of its own edits");
        return -1;
    }
    if (evolver_lock(self) < 0) {
        return -1;
    }
    self->busy = 1;
    return 0;
}

/* End an edit that changed the contents or not (a failed edit changes
 * nothing).  A freeze() cached before the edit, or taken by user code
 * during it, shows the state before it: kept only when that is still the
 * state, so that evolve() ... freeze() with no change returns the source. */
static void
evolver_finish(evolver_object *self, int changed)
{
    self->busy = 0;
    if (changed) {
        self->edits++;
        evolver_forget_frozen(self);
    }
    evolver_unlock(self);
}

static void
evolver_end(evolver_object *self)
{
    evolver_finish(self, 1);
}

/* Install source's contents (a frozendict), then release the old ones: the
 * finalizers that release runs see the new state, never a half-made one.
 * Called with the edit lock held (or on an evolver no one else can see). */
static int
evolver_start(fm_state *st, evolver_object *self, PyObject *source)
{
    fd_object *fd = (fd_object *)source;
    transient t;
    Py_uhash_t acc = 0;
    int acc_valid = fd_acc(fd, &acc);
    if (transient_init(st, &t, fd->root, fd->order, fd->len, fd->next_seq, acc, acc_valid)
        < 0) {
        return -1;
    }
    t.shared = 1;
    transient old = self->t;
    PyObject *old_frozen = self->frozen, *old_origin = self->origin;
    self->t = t;
    self->frozen = Py_IS_TYPE(source, st->frozendict_type) ? Py_NewRef(source) : NULL;
    self->origin = Py_XNewRef(self->frozen);
    transient_clear(&old);
    Py_XDECREF(old_frozen);
    Py_XDECREF(old_origin);
    return 0;
}

/* The fields of a new evolver, before its contents are installed. */
static int
evolver_init_fields(evolver_object *self)
{
    memset(&self->t, 0, sizeof(self->t));
    self->t.acc_valid = 1; /* the empty map's accumulator is 0 */
    self->t.shared = 1;
    self->busy = 0;
    self->resized = 0;
    self->edits = 0;
    self->frozen = NULL;
    self->origin = NULL;
    self->holder = 0;
    self->depth = 0;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

PyObject *
evolver_new_from(fm_state *st, PyObject *fd)
{
    evolver_object *self = PyObject_GC_New(evolver_object, st->evolver_type);
    if (self == NULL) {
        return NULL;
    }
    int r = evolver_init_fields(self);
    PyObject_GC_Track(self);
    if (r < 0 || evolver_start(st, self, fd) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *
evolver_tp_new(PyTypeObject *tp, PyObject *args, PyObject *kwds)
{
    evolver_object *self = (evolver_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        return NULL;
    }
    if (evolver_init_fields(self) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* Evolver(source): also a clean restart of a live evolver (not from inside
 * one of its own edits: RuntimeError there). */
static int
evolver_tp_init(PyObject *op, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"source", NULL};
    PyObject *source = NULL;
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = EV(op);
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Evolver", kwlist, &source)) {
        return -1;
    }
    PyObject *fd;
    if (source == NULL) {
        fd = PyObject_CallNoArgs((PyObject *)st->frozendict_type);
    }
    else if (fd_type_check(st, source)) {
        fd = Py_NewRef(source);
    }
    else {
        fd = PyObject_CallOneArg((PyObject *)st->frozendict_type, source);
    }
    if (fd == NULL) {
        return -1;
    }
    int r = -1;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        r = evolver_start(st, self, fd);
        if (r == 0) {
            self->resized++; /* iterators over the old contents stop */
        }
        /* As evolver_end, but keeping the frozen source evolver_start set:
         * it is the evolver's contents now. */
        self->busy = 0;
        self->edits++;
        evolver_unlock(self);
    }
    FM_END_CS();
    Py_DECREF(fd);
    return r;
}

static int
evolver_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    Py_VISIT(EV(op)->frozen);
    Py_VISIT(EV(op)->origin);
    return transient_traverse(&EV(op)->t, visit, arg);
}

/* tp_clear: empty the evolver completely before releasing anything (the
 * order trie owns the keys and values the key trie borrows; a weakref
 * callback run by the release may find this evolver and read it). */
static int
evolver_clear(PyObject *op)
{
    evolver_object *self = EV(op);
    transient old = self->t;
    PyObject *frozen = self->frozen, *origin = self->origin;
    self->t.root = NULL;
    self->t.order = NULL;
    self->t.len = 0;
    self->t.acc = 0;
    self->t.acc_valid = 1;
    self->frozen = NULL;
    self->origin = NULL;
    self->resized++;
    transient_clear(&old); /* key trie first: it borrows from the order trie */
    Py_XDECREF(frozen);
    Py_XDECREF(origin);
    return 0;
}

static void
evolver_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, evolver_dealloc)
    evolver_clear(op);
    if (EV(op)->lock != NULL) {
        PyThread_free_lock(EV(op)->lock);
        EV(op)->lock = NULL;
    }
    tp->tp_free(op);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

order_node *
evolver_snapshot(PyObject *op, uint64_t *resized)
{
    order_node *order;
    FM_BEGIN_CS(op);
    /* The snapshot's reference makes later edits copy the order path. */
    order = (order_node *)Py_XNewRef(EV(op)->t.order);
    *resized = EV(op)->resized;
    FM_END_CS();
    return order;
}

uint64_t
evolver_resized(PyObject *op)
{
    return EV(op)->resized;
}

Py_ssize_t
evolver_len(PyObject *op)
{
    return EV(op)->t.len;
}

/* --- reads --------------------------------------------------------------- */

static Py_ssize_t
evolver_length(PyObject *op)
{
    return EV(op)->t.len;
}

int
evolver_lookup(PyObject *op, PyObject *key, PyObject **value)
{
    evolver_object *self = EV(op);
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return -1;
    }
    /* Hold both roots while the keys' __eq__ runs.  An edit made meanwhile
     * (by that __eq__, a finalizer or another thread) then copies the paths
     * it changes instead of editing them in place, and nothing this walk
     * reads is released: the key trie's nodes are held by the root, and the
     * keys and values they borrow by the order trie's root. */
    champ_node *root;
    order_node *order;
    FM_BEGIN_CS(op);
    root = champ_xnewref(self->t.root); /* NULL after tp_clear: a miss */
    order = (order_node *)Py_XNewRef(self->t.order);
    FM_END_CS();
    champ_entry *e;
    int r = champ_find(root, h, key, &e);
    if (r > 0) {
        *value = Py_NewRef(e->value);
    }
    champ_xdecref(root);
    Py_XDECREF(order); /* last: may run finalizers */
    return r;
}

static PyObject *
evolver_subscript(PyObject *op, PyObject *key)
{
    PyObject *value;
    int r = evolver_lookup(op, key, &value);
    if (r > 0) {
        return value;
    }
    if (r == 0) {
        PyObject *exc = PyObject_CallOneArg(PyExc_KeyError, key);
        if (exc != NULL) {
            PyErr_SetObject(PyExc_KeyError, exc);
            Py_DECREF(exc);
        }
    }
    return NULL;
}

static PyObject *
evolver_get(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("get", nargs, 1, 2) < 0) {
        return NULL;
    }
    PyObject *value;
    int r = evolver_lookup(op, args[0], &value);
    if (r > 0) {
        return value;
    }
    if (r == 0) {
        return Py_NewRef(nargs > 1 ? args[1] : Py_None);
    }
    return NULL;
}

static int
evolver_contains(PyObject *op, PyObject *key)
{
    PyObject *value;
    int r = evolver_lookup(op, key, &value);
    if (r > 0) {
        Py_DECREF(value);
    }
    return r;
}

static PyObject *
evolver_richcompare(PyObject *op, PyObject *other, int cmp)
{
    if (cmp != Py_EQ && cmp != Py_NE) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *r = fd_mapping_equal(fm_state_of_type(Py_TYPE(op)), op, other);
    if (r == NULL || r == Py_NotImplemented || cmp == Py_EQ) {
        return r;
    }
    int truth = r == Py_True;
    Py_DECREF(r);
    return Py_NewRef(truth ? Py_False : Py_True);
}

static PyObject *
evolver_repr(PyObject *op)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *name = PyUnicode_FromString("Evolver");
    if (name == NULL) {
        return NULL;
    }
    PyObject *r = fd_items_repr(st, op, name);
    Py_DECREF(name);
    return r;
}

/* dict(self._items()) */
static PyObject *
evolver_as_dict(fm_state *st, PyObject *op)
{
    uint64_t resized;
    order_node *order = evolver_snapshot(op, &resized);
    PyObject *d = order_as_dict(order);
    Py_XDECREF(order);
    /* The keys' __hash__ ran: a change meanwhile stops it, as in iteration. */
    if (d != NULL && evolver_resized(op) != resized) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver changed size during iteration");
        Py_CLEAR(d);
    }
    return d;
}

static PyObject *
evolver_reduce(PyObject *op, PyObject *unused)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *d = evolver_as_dict(st, op);
    if (d == NULL) {
        return NULL;
    }
    return Py_BuildValue("O(Ns)", st->restore_evolver, d, "c");
}

/* --- edits --------------------------------------------------------------- */

static int
evolver_setitem_locked(fm_state *st, evolver_object *self, PyObject *key, PyObject *value)
{
    if (evolver_begin(self) < 0) {
        return -1;
    }
    Py_ssize_t len = self->t.len;
    int r = transient_assoc(st, &self->t, key, value);
    if (r >= 0 && self->t.len != len) {
        self->resized++;
    }
    evolver_finish(self, r > 0);
    return r < 0 ? -1 : 0;
}

/* Returns 1 removed (*old_value new ref if wanted), 0 absent, -1 error. */
static int
evolver_pop_entry_locked(fm_state *st, evolver_object *self, PyObject *key,
                         PyObject **old_value)
{
    if (evolver_begin(self) < 0) {
        return -1;
    }
    int r = transient_dissoc(st, &self->t, key, old_value);
    if (r > 0) {
        self->resized++;
    }
    evolver_finish(self, r > 0);
    return r;
}

static int
evolver_ass_subscript(PyObject *op, PyObject *key, PyObject *value)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    int r;
    FM_BEGIN_CS(op);
    if (value != NULL) {
        r = evolver_setitem_locked(st, EV(op), key, value);
    }
    else {
        r = evolver_pop_entry_locked(st, EV(op), key, NULL);
        if (r == 0) {
            PyObject *exc = PyObject_CallOneArg(PyExc_KeyError, key);
            if (exc != NULL) {
                PyErr_SetObject(PyExc_KeyError, exc);
                Py_DECREF(exc);
            }
            r = -1;
        }
    }
    FM_END_CS();
    return r < 0 ? -1 : 0;
}

static PyObject *
evolver_set(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("set", nargs, 2, 2) < 0) {
        return NULL;
    }
    if (evolver_ass_subscript(op, args[0], args[1]) < 0) {
        return NULL;
    }
    return Py_NewRef(op);
}

static PyObject *
evolver_discard(PyObject *op, PyObject *key)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    int r;
    FM_BEGIN_CS(op);
    r = evolver_pop_entry_locked(st, EV(op), key, NULL);
    FM_END_CS();
    if (r < 0) {
        return NULL;
    }
    return Py_NewRef(op);
}

static PyObject *
evolver_pop(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("pop", nargs, 1, 2) < 0) {
        return NULL;
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *old = NULL;
    int r;
    FM_BEGIN_CS(op);
    r = evolver_pop_entry_locked(st, EV(op), args[0], &old);
    FM_END_CS();
    if (r < 0) {
        return NULL;
    }
    if (r > 0) {
        return old;
    }
    if (nargs > 1) {
        return Py_NewRef(args[1]);
    }
    PyObject *exc = PyObject_CallOneArg(PyExc_KeyError, args[0]);
    if (exc != NULL) {
        PyErr_SetObject(PyExc_KeyError, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

static PyObject *
evolver_popitem(PyObject *op, PyObject *unused)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = EV(op);
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    PyObject *k, *v;
    /* The last item is read under the edit lock: another thread's edit may
     * run until we hold it. */
    if (evolver_begin(self) == 0) {
        if (!order_last(self->t.order, &k, &v)) {
            PyErr_SetString(PyExc_KeyError, "popitem(): evolver is empty");
            evolver_finish(self, 0);
        }
        else {
            Py_INCREF(k);
            Py_INCREF(v);
            /* As dict.popitem, the key is not hashed again: its entry is
             * found by identity (see champ_find_stored). */
            Py_uhash_t h;
            int known = hashing_pure_key_hash(k, &h);
            champ_entry *e = champ_find_stored(self->t.root, known ? &h : NULL, k);
            if (e == NULL && known) {
                e = champ_find_stored(self->t.root, NULL, k);
            }
            int r = 1;
            if (e == NULL) {
                PyErr_SetString(PyExc_SystemError, "popitem: tries disagree");
                r = -1;
            }
            if (r > 0 && transient_remove_entry(st, &self->t, e, NULL, NULL) == 0) {
                self->resized++;
                result = PyTuple_Pack(2, k, v);
            }
            evolver_finish(self, result != NULL);
            Py_DECREF(k);
            Py_DECREF(v);
        }
    }
    FM_END_CS();
    return result;
}

static PyObject *
evolver_setdefault(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("setdefault", nargs, 1, 2) < 0) {
        return NULL;
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = EV(op);
    PyObject *key = args[0], *dflt = nargs > 1 ? args[1] : Py_None;
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        Py_uhash_t h;
        champ_entry *e;
        int r = transient_ensure_root(st, &self->t) < 0
                    ? -1
                    : transient_lookup(&self->t, key, &h, &e);
        if (r > 0) {
            result = Py_NewRef(e->value);
        }
        else if (r == 0) {
            Py_uhash_t acc = self->t.acc;
            int acc_valid = self->t.acc_valid;
            if (hashing_acc_replace(&acc, &acc_valid, h, NULL, dflt) == 0
                && transient_put_new(st, &self->t, h, key, dflt) == 0) {
                self->t.acc = acc;
                self->t.acc_valid = acc_valid;
                self->resized++;
                result = Py_NewRef(dflt);
            }
        }
        evolver_end(self);
    }
    FM_END_CS();
    return result;
}

static PyObject *
evolver_update(PyObject *op, PyObject *args, PyObject *kwargs)
{
    PyObject *arg = NULL;
    if (!PyArg_UnpackTuple(args, "update", 0, 1, &arg)) {
        return NULL;
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = EV(op);
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        transient saved = self->t;
        champ_xnewref(saved.root);
        Py_XINCREF(saved.order); /* and so the merge copies what it edits */
        int changed = 0;
        if (transient_merge(st, &self->t, arg, kwargs, NULL, NULL) < 0) {
            /* Roll back: put the saved state in place first, then release
             * the partial merge (finalizers see the state before update). */
            transient partial = self->t;
            self->t = saved;
            transient_clear(&partial);
        }
        else {
            if (self->t.len != saved.len || self->t.next_seq != saved.next_seq) {
                self->resized++;
            }
            /* The saved references made every change copy its root. */
            changed = self->t.root != saved.root || self->t.order != saved.order;
            transient_clear(&saved);
            result = Py_NewRef(Py_None);
        }
        evolver_finish(self, changed);
    }
    FM_END_CS();
    return result;
}

static PyObject *
evolver_clear_method(PyObject *op, PyObject *unused)
{
    evolver_object *self = EV(op);
    PyObject *result = NULL;
    FM_BEGIN_CS(op);
    if (evolver_begin(self) == 0) {
        champ_node *root = champ_empty_root();
        if (root != NULL) {
            if (self->t.len) {
                self->resized++;
            }
            champ_node *old_root = self->t.root;
            order_node *old_order = self->t.order;
            self->t.root = root;
            self->t.order = NULL;
            self->t.len = 0;
            self->t.acc = 0;
            self->t.acc_valid = 1;
            Py_XDECREF(old_order); /* may run finalizers: state is consistent */
            champ_xdecref(old_root);
            result = Py_NewRef(Py_None);
        }
        evolver_end(self);
    }
    FM_END_CS();
    return result;
}

/* freeze(): waits for an edit running in another thread (as the pure
 * core's lock does); from inside an edit of this thread it publishes the
 * state before that edit, and evolver_end then forgets it. */
static PyObject *
evolver_freeze(PyObject *op, PyObject *unused)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    evolver_object *self = EV(op);
    PyObject *r = NULL;
    FM_BEGIN_CS(op);
    if (evolver_lock(self) == 0) {
        r = Py_XNewRef(self->frozen);
        fd_object *origin = (fd_object *)self->origin;
        if (r == NULL && origin != NULL && origin->len == self->t.len
            && champ_identical(origin->root, self->t.root)) {
            /* Edits that cancel out: the last version published is still
             * the contents (the walk visits only what the edits copied). */
            r = Py_NewRef(self->origin);
            if (!self->busy) {
                self->frozen = Py_NewRef(r);
            }
        }
        if (r == NULL) {
            uint64_t edits = self->edits;
            int busy = self->busy;
            r = transient_publish(st, &self->t, st->frozendict_type);
            /* Cache it unless a finalizer run by the allocation edited or
             * froze the evolver meanwhile. */
            if (r != NULL && !busy && self->edits == edits && self->frozen == NULL) {
                self->frozen = Py_NewRef(r);
                Py_XSETREF(self->origin, Py_NewRef(r));
            }
        }
        evolver_unlock(self);
    }
    FM_END_CS();
    return r;
}

static PyObject *
evolver_copy(PyObject *op, PyObject *unused)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *fd = evolver_freeze(op, NULL);
    if (fd == NULL) {
        return NULL;
    }
    PyObject *r = evolver_new_from(st, fd);
    Py_DECREF(fd);
    return r;
}

static PyObject *
evolver_call_on_frozen(PyObject *op, const char *name)
{
    PyObject *fd = evolver_freeze(op, NULL);
    if (fd == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallMethod(fd, name, NULL);
    Py_DECREF(fd);
    return r;
}

static PyObject *
evolver_check_method(PyObject *op, PyObject *unused)
{
    return evolver_call_on_frozen(op, "_check");
}

static PyObject *
evolver_node_ids(PyObject *op, PyObject *unused)
{
    return evolver_call_on_frozen(op, "_node_ids");
}

static PyObject *
evolver_dump(PyObject *op, PyObject *unused)
{
    return evolver_call_on_frozen(op, "_dump");
}

static PyMethodDef evolver_methods[] = {
    {"get", (PyCFunction)(void (*)(void))evolver_get, METH_FASTCALL,
     "get($self, key, default=None, /)\n--\n\n" EV_DOC_GET},
    {"keys", view_mapping_keys, METH_NOARGS, EV_DOC_KEYS},
    {"values", view_mapping_values, METH_NOARGS, EV_DOC_VALUES},
    {"items", view_mapping_items, METH_NOARGS, EV_DOC_ITEMS},
    {"__reversed__", view_mapping_reversed, METH_NOARGS, NULL},
    {"__reduce__", evolver_reduce, METH_NOARGS, NULL},
    {"set", (PyCFunction)(void (*)(void))evolver_set, METH_FASTCALL,
     "set($self, key, value, /)\n--\n\n" EV_DOC_SET},
    {"discard", evolver_discard, METH_O, "discard($self, key, /)\n--\n\n" EV_DOC_DISCARD},
    {"pop", (PyCFunction)(void (*)(void))evolver_pop, METH_FASTCALL,
     "pop($self, key, default=<unrepresentable>, /)\n--\n\n" EV_DOC_POP},
    {"popitem", evolver_popitem, METH_NOARGS, EV_DOC_POPITEM},
    {"setdefault", (PyCFunction)(void (*)(void))evolver_setdefault, METH_FASTCALL,
     "setdefault($self, key, default=None, /)\n--\n\n" EV_DOC_SETDEFAULT},
    {"update", (PyCFunction)(void (*)(void))evolver_update, METH_VARARGS | METH_KEYWORDS,
     EV_DOC_UPDATE},
    {"clear", evolver_clear_method, METH_NOARGS, EV_DOC_CLEAR},
    {"get_in", (PyCFunction)(void (*)(void))path_py_get_in, METH_FASTCALL | METH_KEYWORDS,
     "get_in($self, path, default=None)\n--\n\n" EV_DOC_GET_IN},
    {"set_in", (PyCFunction)(void (*)(void))path_py_set_in, METH_FASTCALL,
     "set_in($self, path, value, /)\n--\n\n" EV_DOC_SET_IN},
    {"update_in", (PyCFunction)(void (*)(void))path_py_update_in, METH_VARARGS | METH_KEYWORDS,
     "update_in($self, path, fn, /, *args, **kwargs)\n--\n\n" EV_DOC_UPDATE_IN},
    {"delete_in", path_py_delete_in, METH_O,
     "delete_in($self, path, /)\n--\n\n" EV_DOC_DELETE_IN},
    {"copy", evolver_copy, METH_NOARGS, EV_DOC_COPY},
    {"freeze", evolver_freeze, METH_NOARGS, EV_DOC_FREEZE},
    {"_check", evolver_check_method, METH_NOARGS,
     "Assert every invariant of the evolver's current contents."},
    {"_node_ids", evolver_node_ids, METH_NOARGS, NULL},
    {"_dump", evolver_dump, METH_NOARGS, NULL},
    {"__class_getitem__", Py_GenericAlias, METH_O | METH_CLASS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot evolver_slots[] = {
    {Py_tp_new, evolver_tp_new},
    {Py_tp_init, evolver_tp_init},
    {Py_tp_dealloc, evolver_dealloc},
    {Py_tp_traverse, evolver_traverse},
    {Py_tp_clear, evolver_clear},
    {Py_tp_repr, evolver_repr},
    {Py_tp_hash, PyObject_HashNotImplemented},
    {Py_tp_richcompare, evolver_richcompare},
    {Py_tp_iter, view_mapping_iter},
    {Py_tp_methods, evolver_methods},
    {Py_mp_length, evolver_length},
    {Py_mp_subscript, evolver_subscript},
    {Py_mp_ass_subscript, evolver_ass_subscript},
    {Py_sq_contains, evolver_contains},
    {Py_tp_doc, EV_DOC_TYPE},
    {0, NULL},
};

PyType_Spec evolver_spec = {
    .name = "frozenmap.Evolver",
    .basicsize = sizeof(evolver_object),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_MAPPING,
    .slots = evolver_slots,
};
