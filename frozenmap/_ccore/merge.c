/* merge.c -- the one merge: dict(arg, **kwargs)'s argument read into a
 * transient, as dict.update reads it (CPython's dict_merge and
 * PyDict_MergeFromSeq2), for the constructor, |, |=, __replace__ and
 * Evolver.update.  merge_arg picks the path by the operand's real type:
 * a frozendict of this core from its own storage (merge_version, the
 * changed entries only), an exact dict into an empty transient by one bulk
 * load (merge_bulk_load), a dict or frozendict that does not override
 * __iter__ from its base type's storage (merge_items_of), the keys path
 * for any other object with keys (merge_keys), the pairs path for the
 * rest (merge_pairs).  Mirrors frozenmap/_pycore/merge.py function by
 * function.
 *
 * Layers: above transient.c and reads.c; below the two types.
 */
#include "cfrozenmap.h"

/* --- dict's words ---------------------------------------------------------- */

/* A new TypeError in the words of the running interpreter's dict for
 * element index of a pairs iterable that is not iterable, or NULL. */
static PyObject *
merge_sequence_exc(Py_ssize_t index)
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

/* Replace the TypeError set while converting element index of the pairs
 * path to a tuple with dict's (raise ... from None: the original stays as
 * the context). */
static void
merge_sequence_error(Py_ssize_t index)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *exc = merge_sequence_exc(index);
    if (exc != NULL) {
        PyException_SetContext(exc, Py_XNewRef(value));
        PyException_SetCause(exc, NULL);
        PyErr_SetObject(PyExc_TypeError, exc);
        Py_DECREF(exc);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

/* The hash the dict stored for key, when it is what hash(key) returns now
 * and computing it would run no Python code (exact str, int, float, bytes,
 * and the default identity hash): using it is then unobservable. */
static inline int
merge_stored_hash_is_pure(PyObject *key)
{
    PyTypeObject *tp = Py_TYPE(key);
    return tp == &PyUnicode_Type || tp == &PyLong_Type || tp == &PyFloat_Type
           || tp == &PyBytes_Type || tp->tp_hash == PyBaseObject_Type.tp_hash;
}

/* --- the storage paths ------------------------------------------------------ */

/* Fill an empty transient from an exact dict, whose keys are distinct: the
 * order trie is built bottom-up and the key trie by one radix sort, with no
 * lookups and no __eq__ calls.  The references taken while reading the dict
 * (no allocation, so no user code, runs during the read) are handed to the
 * order trie, which owns them; the key trie's entries borrow them. */
static int
merge_bulk_load(fm_state *st, transient *t, PyObject *source)
{
    if (t->table != NULL) {
        /* A build from nothing (table mode): the dict's copy is the table
         * when its keys all hash without user code. */
        PyObject *copy = PyDict_Copy(source);
        if (copy == NULL) {
            return -1;
        }
        if (table_keys_are_pure(copy)) {
            Py_SETREF(t->table, copy);
            t->len = PyDict_GET_SIZE(copy);
            return 0;
        }
        Py_DECREF(copy);
        if (transient_table_leave(st, t) < 0) {
            return -1;
        }
    }
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
        unhashed |= !merge_stored_hash_is_pure(k);
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
        if (FM_LIKELY(merge_stored_hash_is_pure(entries[i].key))) {
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
merge_items_iter(fm_state *st, transient *t, PyObject *it)
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
merge_items_of(fm_state *st, transient *t, PyObject *base, PyObject *arg)
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
    int r = merge_items_iter(st, t, it);
    Py_DECREF(it);
    return r;
}

/* Whether tp iterates as base does (it does not override __iter__): then
 * dict_merge reads it from base's storage.  1, 0 or -1. */
static int
merge_default_iter(PyTypeObject *tp, PyObject *base)
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
 * The path is mapping_pair_path's.  FM_PAIR_FLAT and FM_PAIR_ENTRIES apply
 * every entry of src in its order (those that change nothing leave t as it
 * was; into a fresh t, without a lookup, as an adoption would).
 * FM_PAIR_WALK applies only the entries that change something: those whose
 * key t lacks and those bringing another value object, found by champ_diff
 * by identity, which skips the subtrees both tries share (the same node
 * holds the very same key and value objects, which applying would leave as
 * they are); a t in flat mode is promoted first (src alone outgrows it),
 * and an empty t takes src's tries in O(1).
 * They are applied in src's order, one by one as before, so the result
 * (items, order, which key object stays, the hash accumulator) is what
 * applying every entry gives, in O(d log n) for versions d edits apart.
 * Mirrors merge_version in merge.py. */
static int merge_version_tries(fm_state *st, transient *t, fd_object *src);

static int
merge_version(fm_state *st, transient *t, fd_object *src)
{
    if (t->table != NULL) {
        if (fm_is_table(src) && t->len == 0) {
            /* A build from a table version: a copy of its table. */
            PyObject *copy = PyDict_Copy(src->table);
            if (copy == NULL) {
                return -1;
            }
            Py_SETREF(t->table, copy);
            t->len = PyDict_GET_SIZE(copy);
            return 0;
        }
        if (transient_table_leave(st, t) < 0) {
            return -1;
        }
    }
    /* A table version is read through its tries (its twin). */
    PyObject *tries = table_version_tries(st, (PyObject *)src);
    if (tries == NULL) {
        return -1;
    }
    int r = merge_version_tries(st, t, fm_as_fd(tries));
    Py_DECREF(tries);
    return r;
}

static int
merge_version_tries(fm_state *st, transient *t, fd_object *src)
{
    champ_difflist entries = {0}, changed = {0};
    int r = 0;
    fm_pair_path path =
        mapping_pair_path(t->len, t->flat != NULL ? FM_FORM_FLAT : FM_FORM_TRIES, src);
    if (path != FM_PAIR_WALK) {
        int fresh = t->len == 0 && t->next_seq == 0 && t->flat == NULL;
        r = mapping_entries_in_order(src, &entries);
        for (Py_ssize_t i = 0; r == 0 && i < entries.len; i++) {
            champ_entry *e = &entries.items[i];
            if (fresh) {
                r = transient_put_new(st, t, e->hash, e->key, e->value);
            }
            else if (transient_assoc_hashed(st, t, e->hash, e->key, e->value)
                     == FM_EDIT_FAILED) {
                r = -1;
            }
        }
        if (r == 0 && fresh) {
            t->acc_valid = fm_version_acc(src, &t->acc);
        }
        champ_difflist_free(&entries);
        return r;
    }
    if (t->len == 0) {
        /* An empty t takes src's tries (what applying every entry in order
         * would build), in O(1): src's references on the roots make later
         * edits copy.  Installed first, the old parts released last (an
         * Evolver's finalizers see the new state). */
        champ_node *old_root = t->root;
        order_node *old_order = t->order;
        fd_object *old_flat = t->flat;
        t->root = champ_newref(src->root);
        t->order = (order_node *)Py_XNewRef(src->order);
        t->flat = NULL;
        t->len = src->len;
        t->next_seq = src->next_seq;
        t->acc_valid = fm_version_acc(src, &t->acc);
        champ_xdecref(old_root);
        Py_XDECREF(old_order);
        Py_XDECREF(old_flat);
        return 0;
    }
    if (t->flat != NULL && flat_t_promote(st, t, NULL) < 0) { /* src alone outgrows it */
        return -1;
    }
    /* Held across the keys' __eq__ in the walk, whose entries borrow from
     * it (nothing edits t meanwhile: a private builder, or an Evolver's
     * update(), which holds its roots and refuses edits from inside). */
    champ_node *root = champ_newref(t->root);
    r = champ_diff(root, src->root, &entries, NULL, &changed, 1);
    /* changed holds pairs (t's entry, src's entry): src's are applied */
    for (Py_ssize_t i = 1; r == 0 && i < changed.len; i += 2) {
        r = champ_difflist_append(&entries, &changed.items[i]);
    }
    champ_decref(root);
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

/* --- the keys path, the pairs path, the dispatch ----------------------------- */

/* The message dict gives when arg.keys() returns keys, an object that is
 * not iterable, set in place of the TypeError PyObject_GetIter set. */
static void
merge_keys_not_iterable(PyObject *arg, PyObject *keys)
{
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

/* The keys path of dict_merge: for key in arg.keys(): t[key] = arg[key].
 * keys_method is arg.keys, a new reference this takes (released once
 * called).  Mirrors merge_keys in merge.py.  0 or -1. */
static int
merge_keys(fm_state *st, transient *t, PyObject *arg, PyObject *keys_method)
{
    PyObject *keys = PyObject_CallNoArgs(keys_method);
    Py_DECREF(keys_method);
    if (keys == NULL) {
        return -1;
    }
    /* As dict_merge (PyMapping_Keys): an exact list is walked as it is
     * (keys that arg[key] appends are read too, and the size is read again
     * at each step); anything else is read to the end first, then the
     * lookups. */
    PyObject *list = keys;
    if (!PyList_CheckExact(keys)) {
        PyObject *it = PyObject_GetIter(keys);
        if (it == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
            merge_keys_not_iterable(arg, keys);
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

/* Element index of the pairs path: t[key] = value for a pair, else dict's
 * TypeError or ValueError (PyDict_MergeFromSeq2).  Takes the reference to
 * element.  0 or -1. */
static int
merge_pair(fm_state *st, transient *t, PyObject *element, Py_ssize_t index)
{
    PyObject *pair = element;
    if (!PyTuple_CheckExact(element)) {
        pair = PySequence_Tuple(element);
        Py_DECREF(element);
        if (pair == NULL) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                merge_sequence_error(index);
            }
            return -1;
        }
    }
    if (PyTuple_GET_SIZE(pair) != 2) {
        PyErr_Format(PyExc_ValueError,
                     "dictionary update sequence element #%zd has length %zd; "
                     "2 is required",
                     index, PyTuple_GET_SIZE(pair));
        Py_DECREF(pair);
        return -1;
    }
    fm_edit r = transient_assoc(st, t, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
    Py_DECREF(pair);
    return r == FM_EDIT_FAILED ? -1 : 0;
}

/* The pairs path (PyDict_MergeFromSeq2): for key, value in arg: t[key] =
 * value.  Mirrors merge_pairs in merge.py.  0 or -1. */
static int
merge_pairs(fm_state *st, transient *t, PyObject *arg)
{
    PyObject *it = PyObject_GetIter(arg);
    if (it == NULL) {
        return -1;
    }
    PyObject *element;
    int r = 0;
    for (Py_ssize_t index = 0; r == 0 && (element = PyIter_Next(it)) != NULL; index++) {
        r = merge_pair(st, t, element, index);
    }
    Py_DECREF(it);
    return r < 0 || PyErr_Occurred() ? -1 : 0;
}

/* Add arg to t as dict.update(arg) reads it, the path chosen by its real
 * type in dict_merge's order: a frozendict of this core (its roots adopted
 * into an empty t, else merge_version); an exact dict (merge_bulk_load into
 * an empty t); a dict subclass, or another core's or the builtin frozendict
 * (any subclass), that does not override __iter__, from its storage; the
 * keys path for anything else with keys; the pairs path for the rest.
 * Mirrors merge_arg in merge.py.  0 or -1. */
static int
merge_arg(fm_state *st, transient *t, PyObject *arg)
{
    if (fm_is_frozendict(st, arg)) {
        return merge_version(st, t, (fd_object *)arg);
    }
    if (PyDict_CheckExact(arg)) {
        if (t->len == 0 && t->next_seq == 0) {
            return merge_bulk_load(st, t, arg);
        }
        return merge_items_of(st, t, (PyObject *)&PyDict_Type, arg);
    }
    PyObject *base = PyDict_Check(arg) ? Py_NewRef((PyObject *)&PyDict_Type)
                                       : mapping_foreign_base(st, arg);
    if (base == NULL && PyErr_Occurred()) {
        return -1;
    }
    if (base != NULL) {
        int plain = merge_default_iter(Py_TYPE(arg), base);
        int r = plain > 0 ? merge_items_of(st, t, base, arg) : plain;
        Py_DECREF(base);
        if (plain != 0) {
            return r;
        }
    }
    PyObject *keys_method;
    int has = fm_getattr_optional(arg, st->str_keys, &keys_method);
    if (has < 0) {
        return -1;
    }
    return has ? merge_keys(st, t, arg, keys_method) : merge_pairs(st, t, arg);
}

/* for key, value in kwargs.items(): assoc -- as the pure core iterates
 * the keyword dict, and with dict's iterator's rule.  A key's __eq__ or
 * __hash__ run by the assoc may change the dict (gc.get_referrers finds
 * it), even empty it while it is the only owner of the name and value: so
 * each pair is held by strong references across its assoc, and a change of
 * size raises RuntimeError before the next step (and after the last), as
 * dict's iterator does. */
static int
merge_kwargs(fm_state *st, transient *t, PyObject *kwargs)
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
merge_into(fm_state *st, transient *t, PyObject *arg, PyObject *kwargs,
           PyObject *const *kwvalues, PyObject *kwnames)
{
    if (arg != NULL && merge_arg(st, t, arg) < 0) {
        return -1;
    }
    if (kwargs != NULL && merge_kwargs(st, t, kwargs) < 0) {
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
