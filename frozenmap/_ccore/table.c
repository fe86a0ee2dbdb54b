/* table.c -- the table form: a version built once and read (mirrors
 * frozenmap/_pycore/table.py function by function).
 *
 * Most frozendicts are built once and read: configuration, constants, cache
 * keys, JSON documents.  A version of more than FLAT_MAX items built from a
 * dict, pairs, keywords, fromkeys or a pickle, whose keys all hash without
 * running user code (hashing_key_is_pure: str, int, float, bytes, None,
 * frozenset, the default identity hash, tuples of those), holds its items
 * in a private exact dict instead of tries: construction is a dict copy and
 * a scan of the keys' types, lookups, iteration, len, ==, hash, repr and
 * pickling cost what they cost a dict, and the dict is never changed or
 * shown to anyone.
 *
 * The first operation that needs tries (a derivation, a merge, a walk
 * beside another version, a positional read, reversed()) builds them from
 * the dict in one pass, as a version of its own, the *twin*, kept beside the
 * table (fd->twin, installed once): every version derived from a table
 * version is a tries version, derived from the twin, so == and diff between
 * it and its derivations walk only what differs.  The table version keeps
 * its dict: its reads stay a dict's, and a reader holding the dict (across
 * a user __eq__) never sees it go.  That costs the twin's memory beside the
 * dict on the one version that was derived from (the numbers:
 * docs/design-decisions.md, "The table form").
 *
 * Why the keys must hash without user code: the stored keys' hashes are read
 * again whenever the twin is built or hash() is computed (a dict keeps its
 * hashes where no public API reads them), and the pure core, whose table is
 * a Python dict, cannot insert a key with a hash it already has; a key whose
 * __hash__ is Python code would be hashed twice there.  A build that meets
 * such a key leaves the table (transient_table_leave) before hashing it, and
 * goes on in the flat or tries form, in both cores alike.
 *
 * User code: lookups of a key that hashes without user code go to the dict
 * (its probe order meets the entries of one hash in insertion order, as the
 * tries' collision nodes and the flat scan do); any other key is hashed once
 * (PEP 814's message for an unhashable one) and found in the twin.  The
 * table's stored keys run no user code when hashed; their __eq__ (a str
 * subclass may define one) runs as in a dict.
 */
#include "cfrozenmap.h"

/* --- versions ------------------------------------------------------------ */

PyObject *
table_version_new(PyTypeObject *tp, PyObject *table, Py_uhash_t acc, int acc_valid)
{
    assert(PyDict_CheckExact(table) && PyDict_GET_SIZE(table) > FLAT_MAX);
    fd_object *self = (fd_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        Py_DECREF(table);
        return NULL;
    }
    /* Nobody reaches the dict but through the version: out of the GC's lists
     * (the version's traverse visits its items), so gc.get_referents hands
     * out the items, never a dict someone could change. */
    if (PyObject_GC_IsTracked(table)) {
        PyObject_GC_UnTrack(table);
    }
    self->table = table;
    self->twin = NULL;
    self->len = PyDict_GET_SIZE(table);
    self->next_seq = 0;
    self->hash = acc_valid ? hashing_finalize(acc, self->len) : -1;
    return (PyObject *)self;
}

int
table_keys_are_pure(PyObject *dict)
{
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    PyTypeObject *last = NULL; /* the type of the last key found pure */
    while (PyDict_Next(dict, &pos, &k, &v)) {
        if (Py_TYPE(k) != last) {
            if (!hashing_key_is_pure(k)) {
                return 0;
            }
            last = PyTuple_Check(k) ? NULL : Py_TYPE(k);
        }
    }
    return 1;
}

PyObject *
table_from_dict(PyTypeObject *tp, PyObject *dict)
{
    /* The copy is read (no user code runs while its keys are checked), and
     * nobody else ever sees it. */
    PyObject *copy = PyDict_Copy(dict);
    if (copy == NULL) {
        return NULL;
    }
    if (PyDict_GET_SIZE(copy) <= FLAT_MAX || !table_keys_are_pure(copy)) {
        Py_DECREF(copy);
        return Py_NewRef(Py_None); /* not a table: the caller builds otherwise */
    }
    return table_version_new(tp, copy, 0, 0);
}

PyObject *
table_version_share(PyTypeObject *tp, fd_object *fd)
{
    /* A copy of its dict (each dict has one holder, whose traverse visits
     * its items: a dict visited by two would count its references twice),
     * and the same twin once built. */
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(fd, &acc);
    PyObject *table = PyDict_Copy(fd->table);
    if (table == NULL) {
        return NULL;
    }
    PyObject *copy = table_version_new(tp, table, acc, acc_valid);
    if (copy != NULL) {
        fd_object *twin = table_twin_if_built(fd);
        fm_as_fd(copy)->twin = twin != NULL ? (fd_object *)Py_NewRef((PyObject *)twin) : NULL;
    }
    return copy;
}

/* --- the twin --------------------------------------------------------------- */

fd_object *
table_twin_if_built(fd_object *fd)
{
#if FM_FREE_THREADED
    return __atomic_load_n(&fd->twin, __ATOMIC_ACQUIRE);
#else
    return fd->twin;
#endif
}

/* The entries of the table of fd in its order (seqs 0..n-1), with the keys'
 * hashes (they run no user code) and new references: into *out (a PyMem
 * array of n), and whether any item is a GC object.  0 or -1. */
static int
table_entries(fd_object *fd, champ_entry **out, int *may_gc)
{
    PyObject *table = fd->table;
    Py_ssize_t n = PyDict_GET_SIZE(table), got = 0, pos = 0;
    champ_entry *entries = PyMem_Malloc((size_t)n * sizeof(champ_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *k, *v;
    *may_gc = 0;
    while (got < n && PyDict_Next(table, &pos, &k, &v)) {
        Py_hash_t h = PyObject_Hash(k); /* a pure hash: no user code, no error */
        if (h == -1) {
            transient_entries_free(entries, got);
            return -1;
        }
        *may_gc |= PyType_IS_GC(Py_TYPE(k)) | PyType_IS_GC(Py_TYPE(v));
        entries[got] = (champ_entry){(Py_uhash_t)h, (uint64_t)got, Py_NewRef(k), Py_NewRef(v)};
        got++;
    }
    *out = entries;
    return 0;
}

PyObject *
table_twin(fm_state *st, fd_object *fd)
{
    fd_object *twin = table_twin_if_built(fd);
    if (twin != NULL) {
        return Py_NewRef((PyObject *)twin);
    }
    /* Built apart, then installed if no one else installed one meanwhile
     * (the build allocates: a GC pass can run finalizers, and another
     * thread may build its own); the loser's is released. */
    Py_INCREF(fd);
    champ_entry *entries;
    int may_gc;
    PyObject *built = NULL;
    transient t;
    if (table_entries(fd, &entries, &may_gc) == 0) {
        Py_ssize_t n = PyDict_GET_SIZE(fd->table);
        transient_init(st, &t, NULL, NULL, 0, 0, 0, 0);
        if (transient_load_entries(st, &t, entries, n, may_gc) == 0) {
            Py_uhash_t acc = 0;
            int acc_valid = fm_version_acc(fd, &acc);
            built = transient_version_new(st->frozendict_type, t.root, t.order, t.len,
                                          t.next_seq, acc, acc_valid);
        }
        transient_clear(&t);
    }
    if (built == NULL) {
        Py_DECREF(fd);
        return NULL;
    }
#if FM_FREE_THREADED
    fd_object *expected = NULL;
    Py_INCREF(built); /* the table version's */
    if (!__atomic_compare_exchange_n(&fd->twin, &expected, fm_as_fd(built), 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        Py_DECREF(built);                                  /* not installed */
        Py_SETREF(built, Py_NewRef((PyObject *)expected)); /* the winner's */
    }
#else
    if (fd->twin == NULL && fm_is_table(fd)) {
        fd->twin = (fd_object *)Py_NewRef(built);
    }
    else if (fd->twin != NULL) {
        Py_SETREF(built, Py_NewRef((PyObject *)fd->twin));
    }
    /* (a version cleared meanwhile -- only ctypes can clear a held one --
     * keeps no twin: the caller reads the one built) */
#endif
    Py_DECREF(fd);
    return built;
}

PyObject *
table_version_tries(fm_state *st, PyObject *op)
{
    fd_object *fd = fm_as_fd(op);
    return fm_is_table(fd) ? table_twin(st, fd) : Py_NewRef(op);
}

/* --- reads ------------------------------------------------------------------ */

int
table_traverse(PyObject *table, visitproc visit, void *arg)
{
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (table != NULL && PyDict_Next(table, &pos, &k, &v)) {
        Py_VISIT(k);
        Py_VISIT(v);
    }
    return 0;
}

fm_lookup
table_find_hashed(fd_object *fd, Py_uhash_t h, PyObject *key, PyObject **value)
{
    PyObject *twin = table_twin(fm_state_of_type(Py_TYPE(fd)), fd);
    if (twin == NULL) {
        return FM_ERROR;
    }
    champ_entry *e;
    int r = champ_walk(fm_as_fd(twin)->root, h, key, &e, NULL);
    if (r > 0) {
        *value = e->value; /* borrowed: the twin is held by fd, held by the caller */
    }
    Py_DECREF(twin);
    return (fm_lookup)r;
}

int
table_walk_next(fd_object *fd, Py_ssize_t *position, PyObject **key, PyObject **value)
{
    return fd->table != NULL && fm_is_table(fd)
           && PyDict_Next(fd->table, position, key, value);
}

/* --- checking and debugging --------------------------------------------- */

PyObject *
table_check(fd_object *fd)
{
    if (!fm_is_table(fd) || fd->table == NULL || !PyDict_CheckExact(fd->table)
        || PyDict_GET_SIZE(fd->table) != fd->len) {
        PyErr_SetString(PyExc_AssertionError, "a table version without its table");
        return NULL;
    }
    if (!table_keys_are_pure(fd->table)) {
        PyErr_SetString(PyExc_AssertionError, "a table version with a key whose hash is code");
        return NULL;
    }
    if (hashing_check_cached(FM_LOAD_HASH(fd->hash), fd->len) < 0) {
        return NULL;
    }
    fd_object *twin = table_twin_if_built(fd);
    if (twin != NULL) {
        /* The same items in the same order, by identity. */
        if (twin->len != fd->len || fm_is_table(twin) || fm_is_flat(twin)) {
            PyErr_SetString(PyExc_AssertionError, "a table's twin is not its tries");
            return NULL;
        }
        order_cursor c;
        order_cursor_init(&c, twin->order, 0);
        Py_ssize_t pos = 0;
        PyObject *k, *v, *tk, *tv;
        while (PyDict_Next(fd->table, &pos, &k, &v)) {
            if (!order_cursor_next(&c, &tk, &tv) || tk != k || tv != v) {
                PyErr_SetString(PyExc_AssertionError, "a table's twin holds other items");
                return NULL;
            }
        }
    }
    Py_RETURN_NONE;
}

PyObject *
table_dump(fd_object *fd)
{
    PyObject *text =
        PyUnicode_FromFormat("frozendict len=%zd table%s", fd->len,
                             table_twin_if_built(fd) != NULL ? " (and tries)" : "");
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    PyObject *table = Py_XNewRef(fd->table); /* held across the reprs */
    while (text != NULL && table != NULL && PyDict_Next(table, &pos, &k, &v)) {
        Py_INCREF(k);
        Py_INCREF(v);
        PyObject *line = PyUnicode_FromFormat("\n  (%R, %R)", k, v);
        Py_DECREF(k);
        Py_DECREF(v);
        if (line == NULL) {
            Py_CLEAR(text);
            break;
        }
        PyUnicode_AppendAndDel(&text, line);
    }
    Py_XDECREF(table);
    return text;
}
