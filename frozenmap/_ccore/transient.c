/* transient.c -- the layer below both public types: the internal builder
 * (a transient), the primitive that makes a version from its roots, and the
 * reads shared by the frozendict and the Evolver (==, repr, lookups,
 * snapshots for iteration).  Mirrors frozenmap/_pycore/transient.py; see
 * "Transient ownership" in the essay at the top of frozendict.c.
 *
 * frozendict.c and evolver.c both call down into this file; it calls
 * neither (it reads the two object layouts, declared in cfrozenmap.h).
 *
 * Every edit locates first (champ_find runs the keys' __hash__/__eq__),
 * updates the hash accumulator (a value's __hash__), and only then changes
 * the tries, with no user code left to run.  The two trie edits are each
 * failure-atomic (see keytrie.c); when the second one fails (MemoryError)
 * the first is undone on the path it just made owned, which needs no
 * allocation, so a failed edit leaves the transient exactly as it was.
 */
#include "cfrozenmap.h"

/* --- versions ------------------------------------------------------------ */

PyObject *
transient_version_new(PyTypeObject *tp, champ_node *root, order_node *order, Py_ssize_t len,
                      uint64_t next_seq, Py_uhash_t acc, int acc_valid)
{
    if (len <= FLAT_MAX) {
        return flat_demote(tp, root, len, acc, acc_valid);
    }
    fd_object *self = (fd_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        return NULL;
    }
    self->root = champ_newref(root);
    self->order = (order_node *)Py_XNewRef(order);
    self->len = len;
    self->next_seq = next_seq;
    self->hash = acc_valid ? hashing_finalize(acc, len) : -1;
    return (PyObject *)self;
}

int
transient_compare_seq(const void *x, const void *y)
{
    uint64_t a = ((const champ_entry *)x)->seq, b = ((const champ_entry *)y)->seq;
    return a < b ? -1 : a > b;
}

/* --- the transient ------------------------------------------------------- */

int
transient_init(fm_state *st, transient *t, champ_node *root, order_node *order, Py_ssize_t len,
               uint64_t next_seq, Py_uhash_t acc, int acc_valid)
{
    if (root == NULL) {
        root = champ_empty_root();
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

int
transient_init_from(fm_state *st, transient *t, PyObject *version)
{
    fd_object *src = fm_as_fd(version);
    if (fm_is_flat(src)) {
        return flat_promote(st, t, src);
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(src, &acc);
    return transient_init(st, t, src->root, src->order, src->len, src->next_seq, acc,
                          acc_valid);
}

void
transient_clear(transient *t)
{
    champ_clear(&t->root);
    Py_CLEAR(t->order);
}

int
transient_traverse(transient *t, visitproc visit, void *arg)
{
    /* Key-trie nodes are not GC objects; the order trie owns the items. */
    Py_VISIT(t->order);
    return 0;
}

fm_lookup
transient_lookup(transient *t, PyObject *key, Py_uhash_t *h, champ_entry **entry)
{
    if (hashing_key_hash_fast(key, h) < 0) {
        return FM_ERROR;
    }
    return (fm_lookup)champ_find(t->root, *h, key, entry);
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

/* Install new roots, then release the old ones (which can run finalizers:
 * they see the new state).  The caller sets the other fields first. */
static void
transient_install(transient *t, champ_node *root, order_node *order)
{
    champ_node *old_root = t->root;
    order_node *old_order = t->order;
    t->root = root;
    t->order = order;
    champ_xdecref(old_root);
    Py_XDECREF(old_order);
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
    t->next_seq = seq + 1;
    t->len++;
    transient_install(t, root, order);
    return 0;
}

int
transient_put_new(fm_state *st, transient *t, Py_uhash_t h, PyObject *key, PyObject *value)
{
    int paused = transient_gc_pause(t);
    int r = transient_write_new(st, t, h, key, value);
    transient_gc_resume(paused);
    return r;
}

/* transient_assoc for a key whose hash h is known. */
static fm_edit
transient_assoc_hashed(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                       PyObject *value)
{
    champ_entry *found;
    int r = champ_find(t->root, h, key, &found);
    if (r < 0) {
        return FM_EDIT_FAILED;
    }
    Py_uhash_t acc = t->acc;
    int acc_valid = t->acc_valid;
    if (r == 0) {
        if (hashing_acc_replace(&acc, &acc_valid, h, NULL, value) < 0) {
            return FM_EDIT_FAILED;
        }
        if (transient_put_new(st, t, h, key, value) < 0) {
            return FM_EDIT_FAILED;
        }
        t->acc = acc;
        t->acc_valid = acc_valid;
        return FM_CHANGED;
    }
    if (found->value == value) {
        return FM_UNCHANGED;
    }
    champ_entry old = *found;
    /* Keep the old value alive until both tries are updated. */
    Py_INCREF(old.value);
    if (hashing_acc_replace(&acc, &acc_valid, h, old.value, value) < 0) {
        Py_DECREF(old.value);
        return FM_EDIT_FAILED;
    }
    champ_entry entry = {h, old.seq, old.key, value}; /* the first key stays */
    int paused = transient_gc_pause(t);
    fm_edit result = FM_EDIT_FAILED;
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
            t->acc = acc;
            t->acc_valid = acc_valid;
            transient_install(t, root, order);
            result = FM_CHANGED;
        }
    }
    transient_gc_resume(paused);
    Py_DECREF(old.value);
    return result;
}

fm_edit
transient_assoc(fm_state *st, transient *t, PyObject *key, PyObject *value)
{
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return FM_EDIT_FAILED;
    }
    return transient_assoc_hashed(st, t, h, key, value);
}

int
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
    t->len--;
    t->acc = acc;
    t->acc_valid = acc_valid;
    transient_install(t, root, order);
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

fm_lookup
transient_dissoc(fm_state *st, transient *t, PyObject *key, PyObject **old_value)
{
    Py_uhash_t h;
    champ_entry *found;
    fm_lookup r = transient_lookup(t, key, &h, &found);
    if (r != FM_FOUND) {
        return r;
    }
    if (transient_remove_entry(st, t, found, NULL, old_value) < 0) {
        return FM_ERROR;
    }
    return FM_FOUND;
}

PyObject *
transient_publish(fm_state *st, transient *t, PyTypeObject *tp)
{
    /* The version's references on the roots make later edits copy.  Take
     * them (and copy every field) before allocating the version: the
     * allocation can run the GC, whose finalizers may edit an Evolver. */
    champ_node *root = champ_newref(t->root);
    order_node *order = (order_node *)Py_XNewRef(t->order);
    PyObject *fd =
        transient_version_new(tp, root, order, t->len, t->next_seq, t->acc, t->acc_valid);
    champ_decref(root);
    Py_XDECREF(order);
    return fd;
}

/* The frozendict type of another core (or the builtin) that obj's real type
 * derives from: new ref, or NULL (an error set, or none). */
static PyObject *transient_foreign_base(fm_state *st, PyObject *obj);

/* --- merge_into ---------------------------------------------------------- */

static PyObject *
transient_sequence_error(Py_ssize_t index)
{
#if PY_VERSION_HEX < 0x030E0000
    /* Before 3.14, dict says it in the message itself. */
    PyObject *text = PyUnicode_FromFormat(
        "cannot convert dictionary update sequence element #%zd to a sequence", index);
    if (text == NULL) {
        return NULL;
    }
    PyObject *old_style = PyObject_CallOneArg(PyExc_TypeError, text);
    Py_DECREF(text);
    return old_style;
#else
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
#endif
}

/* The hash the dict stored for key, when it is what hash(key) returns now
 * and computing it would run no Python code (exact str, int, float, bytes,
 * and the default identity hash): using it is then unobservable. */
static inline int
transient_stored_hash_is_pure(PyObject *key)
{
    PyTypeObject *tp = Py_TYPE(key);
    return tp == &PyUnicode_Type || tp == &PyLong_Type || tp == &PyFloat_Type
           || tp == &PyBytes_Type || tp->tp_hash == PyBaseObject_Type.tp_hash;
}

/* Release the first n entries' references to their keys and values, then
 * the array (a build that failed before its tries took them). */
static void
transient_entries_free(champ_entry *entries, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_DECREF(entries[i].key);
        Py_DECREF(entries[i].value);
    }
    PyMem_Free(entries);
}

/* Fill an empty transient from n > 0 hashed entries with distinct keys, seq
 * i at index i, each holding a reference to its key and its value: the order
 * trie is built bottom-up and the key trie by one radix sort, with no lookups
 * and no user code.  Takes the PyMem array entries and its references, also
 * on failure.  may_gc as for order_build.  0 or -1. */
static int
transient_load_entries(fm_state *st, transient *t, champ_entry *entries, Py_ssize_t n,
                       int may_gc)
{
    order_node *order = order_build(st, entries, n, may_gc); /* takes the refs */
    if (order == NULL) {
        PyMem_Free(entries);
        return -1;
    }
    champ_node *root = champ_build(entries, n); /* frees entries */
    if (root == NULL) {
        Py_DECREF(order);
        return -1;
    }
    t->len = n;
    t->next_seq = (uint64_t)n;
    t->acc_valid = 0; /* unknown until someone hashes the result */
    transient_install(t, root, order);
    return 0;
}

/* Fill an empty transient from an exact dict, whose keys are distinct: the
 * order trie is built bottom-up and the key trie by one radix sort, with no
 * lookups and no __eq__ calls.  The references taken while reading the dict
 * (no allocation, so no user code, runs during the read) are handed to the
 * order trie, which owns them; the key trie's entries borrow them. */
static int
transient_bulk_load(fm_state *st, transient *t, PyObject *source)
{
    Py_ssize_t n = PyDict_GET_SIZE(source);
    if (n == 0) {
        return 0;
    }
    champ_entry *entries = PyMem_Malloc(n * sizeof(champ_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    /* One pass over the dict (its items' heads are touched here once, when
     * increfed): the references, the hashes that are known, and whether any
     * item is a GC object (order leaves over none skip that check). */
    Py_ssize_t got = 0, pos = 0;
    PyObject *k, *v;
    int unhashed = 0, may_gc = 0;
#if PY_VERSION_HEX < 0x030D0000 && !FM_FREE_THREADED
    /* _PyDict_Next (exported until 3.12) also gives the stored hash. */
    Py_hash_t dh;
    while (got < n && _PyDict_Next(source, &pos, &k, &v, &dh)) {
        entries[got].hash = (Py_uhash_t)dh;
        unhashed |= !transient_stored_hash_is_pure(k);
#else
    while (got < n && PyDict_Next(source, &pos, &k, &v)) {
        unhashed = 1;
#endif
        may_gc |= PyType_IS_GC(Py_TYPE(k)) | PyType_IS_GC(Py_TYPE(v));
        entries[got].seq = (uint64_t)got;
        entries[got].key = Py_NewRef(k);
        entries[got].value = Py_NewRef(v);
        got++;
    }
    if (got != n) {
        PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
        goto fail;
    }
    for (Py_ssize_t i = 0; unhashed && i < n; i++) { /* may raise: nothing built yet */
#if PY_VERSION_HEX < 0x030D0000 && !FM_FREE_THREADED
        if (FM_LIKELY(transient_stored_hash_is_pure(entries[i].key))) {
            continue;
        }
#endif
        if (hashing_key_hash_fast(entries[i].key, &entries[i].hash) < 0) {
            goto fail;
        }
    }
    return transient_load_entries(st, t, entries, n, may_gc);
fail:
    transient_entries_free(entries, got);
    return -1;
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
        fm_edit r =
            transient_assoc(st, t, PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1));
        Py_DECREF(item);
        if (r == FM_EDIT_FAILED) {
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
    /* Held: the second lookup allocates (a GC pass, whose finalizers may
     * rebind tp.__iter__ and free the first). */
    PyObject *mine = Py_XNewRef(fm_type_lookup(tp, "__iter__"));
    if (mine == NULL && PyErr_Occurred()) {
        return -1;
    }
    PyObject *theirs = fm_type_lookup((PyTypeObject *)base, "__iter__");
    int r = theirs == NULL && PyErr_Occurred() ? -1 : mine == theirs;
    Py_XDECREF(mine);
    return r;
}

/* Add a version's items in its order with their stored hashes: stored keys
 * are never hashed again (the entries borrow from src, held by the caller).
 *
 * Only the entries that change something are applied: those whose key t
 * lacks and those bringing another value object, found by champ_diff by
 * identity, which skips the subtrees both tries share (the same node holds
 * the very same key and value objects, which applying would leave as they
 * are).  They are applied in src's order, one by one as before, so the
 * result (items, order, which key object stays, the hash accumulator) is
 * what applying every entry gives, in O(d log n) for versions d edits
 * apart.  The walk is taken when src holds at least 1/FM_SHARING_WALK_RATIO
 * of t's entries: it costs at most O(n + k) for n entries in t and k in
 * src, so then never more than reading src's k entries one by one
 * (O(k log n)), which a smaller src still gets (a walk would list a big
 * map's subtrees beside a small operand's entries).  Mirrors
 * _merge_frozendict in transient.py. */
static int
transient_merge_version(fm_state *st, transient *t, fd_object *src)
{
    champ_difflist entries = {0}, changed = {0};
    int r = 0;
    if (fm_is_flat(src)) {
        /* Already in order, with their hashes (src is held by the caller);
         * into a fresh t they go without a lookup, as an adoption would. */
        int fresh = t->len == 0 && t->next_seq == 0;
        for (Py_ssize_t i = 0; r == 0 && i < src->len; i++) {
            flat_key *e = &fm_flat_keys(src)[i]; /* again each time: user code */
            PyObject *value = fm_flat_values(src)[i];
            if (fresh) {
                r = transient_put_new(st, t, e->hash, e->key, value);
            }
            else if (transient_assoc_hashed(st, t, e->hash, e->key, value) == FM_EDIT_FAILED) {
                r = -1;
            }
        }
        if (r == 0 && fresh) {
            t->acc_valid = fm_version_acc(src, &t->acc);
        }
        return r;
    }
    if (src->len * FM_SHARING_WALK_RATIO >= t->len) {
        /* Held across the keys' __eq__ in the walk, whose entries borrow
         * from it (nothing edits t meanwhile: a private builder, or an
         * Evolver's update(), which holds its roots and refuses edits from
         * inside). */
        champ_node *root = champ_newref(t->root);
        r = champ_diff(root, src->root, &entries, NULL, &changed, 1);
        /* changed holds pairs (t's entry, src's entry): src's are applied */
        for (Py_ssize_t i = 1; r == 0 && i < changed.len; i += 2) {
            r = champ_difflist_append(&entries, &changed.items[i]);
        }
        champ_decref(root);
    }
    else {
        r = champ_foreach(src->root, transient_collect_entry, &entries);
    }
    if (r == 0 && entries.len > 1) {
        qsort(entries.items, entries.len, sizeof(champ_entry), transient_compare_seq);
    }
    for (Py_ssize_t i = 0; r == 0 && i < entries.len; i++) {
        champ_entry *e = &entries.items[i];
        r = transient_assoc_hashed(st, t, e->hash, e->key, e->value) == FM_EDIT_FAILED ? -1
                                                                                       : 0;
    }
    champ_difflist_free(&entries);
    champ_difflist_free(&changed);
    return r;
}

static int
transient_merge_arg(fm_state *st, transient *t, PyObject *arg)
{
    int is_fd = fm_is_frozendict(st, arg);
    if (is_fd) {
        fd_object *src = (fd_object *)arg;
        if (t->len == 0 && t->next_seq == 0 && !fm_is_flat(src)) {
            /* Adopt the version's roots: O(1), the same items and order. */
            champ_setref(&t->root, champ_newref(src->root));
            Py_XSETREF(t->order, (order_node *)Py_XNewRef(src->order));
            t->len = src->len;
            t->next_seq = src->next_seq;
            t->acc_valid = fm_version_acc(src, &t->acc);
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
    PyObject *base = PyDict_Check(arg) ? Py_NewRef((PyObject *)&PyDict_Type)
                                       : transient_foreign_base(st, arg);
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
        /* As dict_merge (PyMapping_Keys): an exact list is walked as it is
         * (keys that arg[key] appends are read too, and the size is read
         * again at each step); anything else is read to the end first, then
         * the lookups. */
        PyObject *list = keys;
        if (!PyList_CheckExact(keys)) {
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
            list = it == NULL ? NULL : PySequence_List(it);
            Py_XDECREF(it);
        }
        if (list == NULL) {
            return -1;
        }
        int r = 0;
        for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(list); i++) {
            PyObject *key = Py_NewRef(PyList_GET_ITEM(list, i));
            PyObject *value = PyObject_GetItem(arg, key);
            r = value == NULL || transient_assoc(st, t, key, value) == FM_EDIT_FAILED ? -1 : 0;
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
        fm_edit r =
            transient_assoc(st, t, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        Py_DECREF(pair);
        if (r == FM_EDIT_FAILED) {
            Py_DECREF(it);
            return -1;
        }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

/* for key, value in kwargs.items(): assoc -- as the pure core iterates
 * the keyword dict, and with dict's iterator's rule.  A key's __eq__ or
 * __hash__ run by the assoc may change the dict (gc.get_referrers finds
 * it), even empty it while it is the only owner of the name and value: so
 * each pair is held by strong references across its assoc, and a change of
 * size raises RuntimeError before the next step (and after the last), as
 * dict's iterator does. */
static int
transient_merge_kwargs(fm_state *st, transient *t, PyObject *kwargs)
{
    Py_ssize_t size = PyDict_GET_SIZE(kwargs), pos = 0;
    for (;;) {
        PyObject *k = NULL, *v = NULL;
        int more;
        FM_BEGIN_CS(kwargs);
        if (PyDict_GET_SIZE(kwargs) != size) {
            more = -1;
        }
        else {
            more = PyDict_Next(kwargs, &pos, &k, &v);
            if (more) {
                Py_INCREF(k);
                Py_INCREF(v);
            }
        }
        FM_END_CS();
        if (more <= 0) {
            if (more < 0) {
                PyErr_SetString(PyExc_RuntimeError,
                                "dictionary changed size during iteration");
            }
            return more;
        }
        fm_edit r = transient_assoc(st, t, k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (r == FM_EDIT_FAILED) {
            return -1;
        }
    }
}

int
transient_merge(fm_state *st, transient *t, PyObject *arg, PyObject *kwargs,
                PyObject *const *kwvalues, PyObject *kwnames)
{
    if (arg != NULL && transient_merge_arg(st, t, arg) < 0) {
        return -1;
    }
    if (kwargs != NULL && transient_merge_kwargs(st, t, kwargs) < 0) {
        return -1;
    }
    if (kwnames != NULL) {
        Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t i = 0; i < n; i++) {
            if (transient_assoc(st, t, PyTuple_GET_ITEM(kwnames, i), kwvalues[i])
                == FM_EDIT_FAILED) {
                return -1;
            }
        }
    }
    return 0;
}

/* --- reads shared by the frozendict and the Evolver ---------------------- */

fm_lookup
transient_shared_get(PyObject *holder, transient *t, PyObject *key, PyObject **value)
{
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return FM_ERROR;
    }
    /* Hold both roots while the keys' __eq__ runs.  An edit made meanwhile
     * (by that __eq__, a finalizer or another thread) then copies the paths
     * it changes instead of editing them in place, and nothing this walk
     * reads is released: the key trie's nodes are held by the root, and the
     * keys and values they borrow by the order trie's root. */
    champ_node *root;
    order_node *order;
    FM_BEGIN_CS(holder);
    root = champ_newref(t->root);
    order = (order_node *)Py_XNewRef(t->order);
    FM_END_CS();
    champ_entry *e;
    fm_lookup r = (fm_lookup)champ_find(root, h, key, &e);
    if (r == FM_FOUND) {
        *value = Py_NewRef(e->value);
    }
    champ_decref(root);
    Py_XDECREF(order); /* last: may run finalizers */
    return r;
}

fm_lookup
transient_mapping_get(fm_state *st, PyObject *mapping, PyObject *key, PyObject **value)
{
    if (!fm_is_frozendict(st, mapping)) {
        return transient_shared_get(mapping, &fm_as_evolver(mapping)->t, key, value);
    }
    /* A frozendict's tries never change while the caller holds it (tp_clear
     * only runs on unreachable objects), so its nodes need no extra hold. */
    Py_uhash_t h;
    champ_entry *e;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return FM_ERROR;
    }
    fd_object *fd = fm_as_fd(mapping);
    if (fm_is_flat(fd)) {
        Py_ssize_t index;
        fm_lookup r = flat_scan(fd, h, key, &index);
        if (r == FM_FOUND) {
            *value = Py_NewRef(fm_flat_values(fd)[index]);
        }
        return r;
    }
    fm_lookup r = (fm_lookup)champ_find(fd->root, h, key, &e);
    if (r == FM_FOUND) {
        *value = Py_NewRef(e->value);
    }
    return r;
}

order_node *
transient_mapping_order(fm_state *st, PyObject *mapping, uint64_t *resized)
{
    if (fm_is_frozendict(st, mapping)) {
        *resized = 0;
        fd_object *fd = fm_as_fd(mapping);
        return fm_is_flat(fd) ? flat_order(st, fd) : (order_node *)Py_XNewRef(fd->order);
    }
    evolver_object *ev = fm_as_evolver(mapping);
    order_node *order;
    FM_BEGIN_CS(mapping);
    /* The snapshot's reference makes later edits copy the order path. */
    order = (order_node *)Py_XNewRef(ev->t.order);
    *resized = ev->resized;
    FM_END_CS();
    return order;
}

Py_ssize_t
transient_mapping_len(fm_state *st, PyObject *mapping)
{
    return fm_is_frozendict(st, mapping) ? fm_as_fd(mapping)->len
                                         : fm_as_evolver(mapping)->t.len;
}

/* How often an Evolver changed size (0 for a frozendict). */
static uint64_t
transient_mapping_resized(fm_state *st, PyObject *mapping)
{
    return fm_is_evolver(st, mapping) ? fm_as_evolver(mapping)->resized : 0;
}

static PyObject *
transient_foreign_base(fm_state *st, PyObject *obj)
{
    PyObject *types = PyObject_GetAttrString(st->common, "frozendict_types");
    if (types == NULL) {
        return NULL;
    }
    PyObject *found = NULL;
    if (PyTuple_Check(types)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(types); i++) {
            PyObject *base = PyTuple_GET_ITEM(types, i);
            /* By the real type: PyObject_IsInstance would believe a
             * __class__ property. */
            if (base != (PyObject *)st->frozendict_type && fm_is_subtype(Py_TYPE(obj), base)) {
                found = Py_NewRef(base);
                break;
            }
        }
    }
    Py_DECREF(types);
    return found;
}

int
transient_is_anydict(fm_state *st, PyObject *obj)
{
    if (PyDict_Check(obj) || fm_is_frozendict(st, obj)) {
        return 1;
    }
    PyObject *foreign = transient_foreign_base(st, obj);
    if (foreign == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_DECREF(foreign);
    return 1;
}

/* The next (key, value) (borrowed) of a walk: the flat version's entry at
 * *position when flat is not NULL, else the cursor's.  1, or 0 at the end. */
static inline int
transient_walk_next(order_cursor *c, fd_object *flat, Py_ssize_t *position, PyObject **k,
                    PyObject **v)
{
    if (flat == NULL) {
        return order_cursor_next(c, k, v);
    }
    if (*position >= flat->len) {
        return 0;
    }
    *k = fm_flat_keys(flat)[*position].key;
    *v = fm_flat_values(flat)[*position];
    (*position)++;
    return 1;
}

PyObject *
transient_mapping_equal(fm_state *st, PyObject *a, PyObject *b)
{
    /* As dict's own ==: both sides are read from their own storage, never
     * through a subclass's __len__, get or __getitem__.  b is ours (a
     * frozendict or an Evolver), a dict (any subclass), or another core's or
     * the builtin frozendict, read through that base type's methods. */
    PyObject *foreign = NULL, *get = NULL, *missing = NULL, *result = NULL;
    order_node *order = NULL;
    int own = fm_is_frozendict(st, b) || fm_is_evolver(st, b);
    Py_ssize_t lb;
    if (own) {
        lb = transient_mapping_len(st, b);
    }
    else if (PyDict_Check(b)) {
        lb = PyDict_GET_SIZE(b);
    }
    else {
        foreign = transient_foreign_base(st, b);
        if (foreign == NULL) {
            return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
        }
        PyObject *n = PyObject_CallMethod(foreign, "__len__", "O", b);
        lb = n == NULL ? -1 : PyNumber_AsSsize_t(n, PyExc_OverflowError);
        Py_XDECREF(n);
        if (lb == -1 && PyErr_Occurred()) {
            goto done;
        }
        get = PyObject_GetAttrString(foreign, "get");
        if (get == NULL) {
            goto done;
        }
    }
    if (transient_mapping_len(st, a) != lb) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    missing = PyBaseObject_Type.tp_alloc(&PyBaseObject_Type, 0);
    if (missing == NULL) {
        goto done;
    }
    /* An Evolver on either side that changes size meanwhile (from a key's or
     * a value's __eq__) stops the walk, as it stops an iterator. */
    uint64_t resized_a = transient_mapping_resized(st, a),
             resized_b = transient_mapping_resized(st, b);
    uint64_t snapshot_resized;
    /* A flat frozendict is read in place (the caller holds it, so its
     * entries never change); anything else through an order snapshot. */
    fd_object *flat = fm_is_frozendict(st, a) && fm_is_flat(fm_as_fd(a)) ? fm_as_fd(a) : NULL;
    if (flat == NULL) {
        order = transient_mapping_order(st, a, &snapshot_resized);
        if (order == NULL && PyErr_Occurred()) {
            result = NULL;
            goto done;
        }
    }
    order_cursor c;
    order_cursor_init(&c, order, 0);
    Py_ssize_t position = 0;
    PyObject *k, *v;
    result = Py_True;
    while (transient_walk_next(&c, flat, &position, &k, &v)) {
        PyObject *other;
        Py_INCREF(k);
        Py_INCREF(v);
        if (own) {
            fm_lookup found = transient_mapping_get(st, b, k, &other);
            if (found == FM_MISSING) {
                other = Py_NewRef(missing);
            }
            else if (found == FM_ERROR) {
                other = NULL;
            }
        }
        else if (get == NULL) {
            other = PyDict_GetItemWithError(b, k);
            if (other == NULL && !PyErr_Occurred()) {
                other = missing;
            }
            Py_XINCREF(other);
        }
        else {
            other = PyObject_CallFunctionObjArgs(get, b, k, missing, NULL);
        }
        int r;
        if (other == NULL) {
            r = -1;
        }
        else if (other == missing) {
            r = 0;
        }
        else {
            r = PyObject_RichCompareBool(v, other, Py_EQ);
        }
        Py_XDECREF(other);
        Py_DECREF(k);
        Py_DECREF(v);
        if (r >= 0
            && (transient_mapping_resized(st, a) != resized_a
                || transient_mapping_resized(st, b) != resized_b)) {
            PyErr_SetString(PyExc_RuntimeError, "Evolver changed size during iteration");
            r = -1;
        }
        if (r <= 0) {
            result = r < 0 ? NULL : Py_False;
            break;
        }
    }
    result = Py_XNewRef(result);
done:
    Py_XDECREF(foreign);
    Py_XDECREF(get);
    Py_XDECREF(missing);
    Py_XDECREF(order);
    return result;
}

PyObject *
transient_items_repr(fm_state *st, PyObject *mapping, PyObject *name)
{
    /* The stored length: a subclass's __len__ is never consulted. */
    if (transient_mapping_len(st, mapping) == 0) {
        return PyUnicode_FromFormat("%U()", name);
    }
    int rec = Py_ReprEnter(mapping);
    if (rec != 0) {
        return rec > 0 ? PyUnicode_FromFormat("%U({...})", name) : NULL;
    }
    PyObject *parts = NULL, *sep = NULL, *body = NULL, *result = NULL;
    uint64_t snapshot_resized; /* (the counter is read again below) */
    order_node *order = NULL;
    /* A flat frozendict is read in place, as in transient_mapping_equal. */
    fd_object *flat = fm_is_frozendict(st, mapping) && fm_is_flat(fm_as_fd(mapping))
                          ? fm_as_fd(mapping)
                          : NULL;
    if (flat == NULL) {
        order = transient_mapping_order(st, mapping, &snapshot_resized);
        if (order == NULL && PyErr_Occurred()) {
            goto done;
        }
    }
    parts = PyList_New(0);
    if (parts == NULL) {
        goto done;
    }
    if (Py_EnterRecursiveCall(" while getting the repr of a frozendict")) {
        goto done;
    }
    order_cursor c;
    order_cursor_init(&c, order, 0);
    Py_ssize_t position = 0;
    PyObject *k, *v;
    int failed = 0;
    /* An Evolver changed by a key's or value's __repr__ stops the walk. */
    uint64_t resized = transient_mapping_resized(st, mapping);
    while (transient_walk_next(&c, flat, &position, &k, &v)) {
        PyObject *part = PyUnicode_FromFormat("%R: %R", k, v);
        if (part == NULL || PyList_Append(parts, part) < 0) {
            Py_XDECREF(part);
            failed = 1;
            break;
        }
        Py_DECREF(part);
        if (transient_mapping_resized(st, mapping) != resized) {
            PyErr_SetString(PyExc_RuntimeError, "Evolver changed size during iteration");
            failed = 1;
            break;
        }
    }
    Py_LeaveRecursiveCall();
    if (failed) {
        goto done;
    }
    sep = PyUnicode_FromString(", ");
    if (sep == NULL) {
        goto done;
    }
    body = PyUnicode_Join(sep, parts);
    if (body == NULL) {
        goto done;
    }
    result = PyUnicode_FromFormat("%U({%U})", name, body);
done:
    Py_ReprLeave(mapping);
    Py_XDECREF(order);
    Py_XDECREF(parts);
    Py_XDECREF(sep);
    Py_XDECREF(body);
    return result;
}

/* --- derivations of a version ---------------------------------------------- */

PyObject *
transient_version_exact(fm_state *st, PyObject *op)
{
    if (Py_IS_TYPE(op, st->frozendict_type)) {
        return Py_NewRef(op);
    }
    fd_object *s = fm_as_fd(op);
    if (fm_is_flat(s)) {
        return flat_version_copy(st->frozendict_type, s);
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(s, &acc);
    return transient_version_new(st->frozendict_type, s->root, s->order, s->len, s->next_seq,
                                 acc, acc_valid);
}

/* transient_publish for a private one-shot transient whose roots nobody
 * else will use: the new exact version takes t's references over (t is left
 * without roots), saving a pair of increfs and decrefs per trie.  t holds
 * the roots while the version is allocated (which can run the GC).  New ref
 * or NULL (t unchanged). */
static PyObject *
transient_version_take(fm_state *st, transient *t)
{
    PyTypeObject *tp = st->frozendict_type;
    if (t->len <= FLAT_MAX) {
        return flat_demote(tp, t->root, t->len, t->acc, t->acc_valid);
    }
    fd_object *self = (fd_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        return NULL;
    }
    self->root = t->root;
    self->order = t->order;
    t->root = NULL;
    t->order = NULL;
    self->len = t->len;
    self->next_seq = t->next_seq;
    self->hash = t->acc_valid ? hashing_finalize(t->acc, t->len) : -1;
    return (PyObject *)self;
}

/* set and delete of a version: one lookup that records the path
 * (champ_find_path), the user code (the value hashes for the hash
 * accumulator), then both tries copied along their paths; the key trie
 * along the recorded one, without a second walk.  t holds the version's
 * roots throughout, so the recorded path and the entry found stay valid
 * (a version's nodes never change); nothing is edited in place (owner 0). */
PyObject *
transient_version_with(fm_state *st, PyObject *op, PyObject *key, PyObject *value)
{
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return NULL;
    }
    if (fm_is_flat(fm_as_fd(op))) {
        return flat_with(st, op, h, key, value);
    }
    transient t;
    if (transient_init_from(st, &t, op) < 0) {
        return NULL;
    }
    t.owner = 0; /* one edit: a plain path copy, exactly-sized nodes */
    PyObject *result = NULL;
    champ_path path;
    champ_entry *found = NULL;
    int r = champ_find_path(t.root, h, key, &path, &found);
    if (r < 0) {
        goto done;
    }
    champ_entry entry = {h, t.next_seq, key, value};
    order_node *order;
    if (r == 0) {
        if (hashing_acc_replace(&t.acc, &t.acc_valid, h, NULL, value) < 0) {
            goto done;
        }
        order = order_insert(st, t.order, entry.seq, key, value, 0);
        t.len++;
        t.next_seq++;
    }
    else {
        champ_entry old = *found;
        if (old.value == value) {
            result = transient_version_exact(st, op);
            goto done;
        }
        entry.seq = old.seq;
        entry.key = old.key; /* the first key stays */
        if (hashing_acc_replace(&t.acc, &t.acc_valid, h, old.value, value) < 0) {
            goto done;
        }
        order = order_replace(st, t.order, old.seq, value, 0);
    }
    if (order == NULL) {
        goto done;
    }
    champ_node *root = champ_put_path(&path, &entry, found);
    if (root == NULL) {
        Py_DECREF(order);
        goto done;
    }
    transient_install(&t, root, order);
    result = transient_version_take(st, &t);
done:
    transient_clear(&t);
    return result;
}

PyObject *
transient_version_without(PyObject *op, PyObject *key, int missing_ok)
{
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return NULL;
    }
    if (fm_is_flat(fm_as_fd(op))) {
        return flat_without(st, op, h, key, missing_ok);
    }
    transient t;
    if (transient_init_from(st, &t, op) < 0) {
        return NULL;
    }
    t.owner = 0;
    PyObject *result = NULL;
    champ_path path;
    champ_entry *found;
    int r = champ_find_path(t.root, h, key, &path, &found);
    if (r <= 0) {
        if (r == 0) {
            if (missing_ok) {
                result = transient_version_exact(st, op);
            }
            else {
                fm_set_key_error(key);
            }
        }
        goto done;
    }
    champ_entry old = *found;
    if (hashing_acc_replace(&t.acc, &t.acc_valid, old.hash, old.value, NULL) < 0) {
        goto done;
    }
    champ_node *root = champ_remove_path(&path, found);
    if (root == NULL) {
        goto done;
    }
    order_node *order;
    if (order_remove(st, t.order, old.seq, 0, &order) < 0) {
        champ_decref(root);
        goto done;
    }
    t.len--;
    transient_install(&t, root, order);
    result = transient_version_take(st, &t);
done:
    transient_clear(&t);
    return result;
}

/* --- positions: reads of a version, for both types ------------------------ */

/* A position from index (an int or __index__; negative from the end) in a
 * trie of size items: 0 and *pos, or -1 with TypeError or IndexError (as
 * list.pop raises them, name in the message). */
static int
transient_position(PyObject *index, Py_ssize_t size, const char *name, Py_ssize_t *pos)
{
    Py_ssize_t i = PyNumber_AsSsize_t(index, NULL); /* clamped when too large */
    if (i == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (i < 0) {
        i += size;
    }
    if (i < 0 || i >= size) {
        PyErr_Format(PyExc_IndexError, "%s index out of range", name);
        return -1;
    }
    *pos = i;
    return 0;
}

PyObject *
transient_position_at(fd_object *v, PyObject *index, const char *name, fm_position what)
{
    Py_ssize_t pos;
    if (transient_position(index, v->len, name, &pos) < 0) {
        return NULL;
    }
    uint64_t seq;
    PyObject *key, *value;
    if (fm_is_flat(v)) {
        key = fm_flat_keys(v)[pos].key;
        value = fm_flat_values(v)[pos];
    }
    else {
        order_at(v->order, pos, &seq, &key, &value);
    }
    switch (what) {
    case FM_POSITION_KEY:
        return Py_NewRef(key);
    case FM_POSITION_VALUE:
        return Py_NewRef(value);
    case FM_POSITION_ITEM:
        return PyTuple_Pack(2, key, value);
    }
    Py_UNREACHABLE();
}

PyObject *
transient_position_of(fd_object *v, PyObject *key)
{
    Py_uhash_t h;
    champ_entry *e;
    if (hashing_key_hash(key, &h) < 0) {
        return NULL;
    }
    if (fm_is_flat(v)) {
        Py_ssize_t index;
        fm_lookup found = flat_scan(v, h, key, &index);
        if (found == FM_FOUND) {
            return PyLong_FromSsize_t(index);
        }
        if (found == FM_MISSING) {
            PyErr_SetObject(PyExc_KeyError, key);
        }
        return NULL;
    }
    int r = champ_find(v->root, h, key, &e); /* runs __eq__: v holds its tries */
    if (r < 0) {
        return NULL;
    }
    if (r == 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return PyLong_FromSsize_t(order_rank(v->order, e->seq));
}

/* Fill the empty transient t with the items at positions [lo, hi) of v
 * (lo < hi), as the bulk load fills one from a dict: each kept key is hashed
 * once -- the order trie stores no hashes, and reading them from the key trie
 * would walk all n entries -- and never compared, the keys being distinct.
 * The entries hold references to their keys and values before any __hash__
 * runs, whatever that code does.  O(log n + k) for k = hi - lo.  0 or -1. */
static int
transient_slice_load(fm_state *st, transient *t, fd_object *v, Py_ssize_t lo, Py_ssize_t hi)
{
    Py_ssize_t n = hi - lo, got = 0;
    champ_entry *entries = PyMem_Malloc(n * sizeof(champ_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *k, *val;
    int may_gc = 0;
    if (fm_is_flat(v)) { /* the flat form's pairs, in order */
        for (Py_ssize_t i = lo; i < hi; i++) {
            k = fm_flat_keys(v)[i].key;
            val = fm_flat_values(v)[i];
            may_gc |= PyType_IS_GC(Py_TYPE(k)) | PyType_IS_GC(Py_TYPE(val));
            entries[got].seq = (uint64_t)got;
            entries[got].key = Py_NewRef(k);
            entries[got].value = Py_NewRef(val);
            got++;
        }
    }
    else {
        order_cursor c;
        order_cursor_init_at(&c, v->order, lo);
        while (got < n && order_cursor_next(&c, &k, &val)) { /* no allocation, no user code */
            may_gc |= PyType_IS_GC(Py_TYPE(k)) | PyType_IS_GC(Py_TYPE(val));
            entries[got].seq = (uint64_t)got;
            entries[got].key = Py_NewRef(k);
            entries[got].value = Py_NewRef(val);
            got++;
        }
    }
    assert(got == n);
    /* (both forms hash the kept keys again, as the pure core does: a slice is
     * the map built from those items) */
    for (Py_ssize_t i = 0; i < got; i++) { /* may raise: nothing built yet */
        if (hashing_key_hash_fast(entries[i].key, &entries[i].hash) < 0) {
            transient_entries_free(entries, got);
            return -1;
        }
    }
    return transient_load_entries(st, t, entries, got, may_gc);
}

PyObject *
transient_position_slice(fm_state *st, PyObject *op, PyObject *start, PyObject *stop)
{
    fd_object *v = fm_as_fd(op);
    PyObject *result = NULL;
    transient t;
    int t_ready = 0;
    Py_ssize_t lo, hi, step = 1;
    PyObject *bounds = PySlice_New(start, stop, NULL);
    if (bounds == NULL) {
        goto done;
    }
    if (PySlice_Unpack(bounds, &lo, &hi, &step) < 0) {
        goto done;
    }
    PySlice_AdjustIndices(v->len, &lo, &hi, step);
    if (lo == 0 && hi == v->len) {
        result = transient_version_exact(st, op);
        goto done;
    }
    if (transient_init(st, &t, NULL, NULL, 0, 0, 0, 0) < 0) {
        goto done;
    }
    t_ready = 1;
    if (lo < hi && transient_slice_load(st, &t, v, lo, hi) < 0) {
        goto done;
    }
    result = transient_publish(st, &t, st->frozendict_type);
done:
    Py_XDECREF(bounds);
    if (t_ready) {
        transient_clear(&t);
    }
    return result;
}
