/* reads.c -- the reads both public types share: lookups, ==, repr and the
 * positional reads of "a mapping" (a frozendict, any subclass, or an
 * Evolver), and what recognises another core's or the builtin frozendict.
 * Mirrors frozenmap/_pycore/reads.py.
 *
 * Layers: above transient.c (a slice is built through a transient, an
 * Evolver's lookup holds its transient's roots), below merge.c, views.c,
 * paths.c and the two types.  Names: mapping_* (reads of a mapping),
 * position_* (reads by position).
 */
#include "cfrozenmap.h"

/* --- reads of a mapping ---------------------------------------------------- */

fm_lookup
mapping_get(fm_state *st, PyObject *mapping, PyObject *key, PyObject **value)
{
    if (!fm_is_frozendict(st, mapping)) {
        return transient_shared_get(mapping, &fm_as_evolver(mapping)->t, key, value);
    }
    /* A frozendict's tries never change while the caller holds it (tp_clear
     * only runs on unreachable objects), so its nodes need no extra hold. */
    fd_object *fd = fm_as_fd(mapping);
    if (fm_is_table(fd)) {
        fm_lookup r = table_find(fd, key, value);
        if (r == FM_FOUND) {
            Py_INCREF(*value);
        }
        return r;
    }
    Py_uhash_t h;
    champ_entry *e;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return FM_ERROR;
    }
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
mapping_order(fm_state *st, PyObject *mapping, uint64_t *resized)
{
    if (fm_is_frozendict(st, mapping)) {
        *resized = 0;
        fd_object *fd = fm_as_fd(mapping);
        if (fm_is_table(fd)) { /* the twin's order */
            PyObject *twin = table_twin(st, fd);
            order_node *order =
                twin != NULL ? (order_node *)Py_XNewRef(fm_as_fd(twin)->order) : NULL;
            Py_XDECREF(twin);
            return order;
        }
        return fm_is_flat(fd) ? flat_order(st, fd) : (order_node *)Py_XNewRef(fd->order);
    }
    evolver_object *ev = fm_as_evolver(mapping);
    order_node *order;
    PyObject *flat;
    FM_BEGIN_CS(mapping);
    /* The snapshot's reference makes later edits copy the order path (or
     * the flat version, walked as an order trie built for the walk). */
    order = (order_node *)Py_XNewRef(ev->t.order);
    flat = Py_XNewRef((PyObject *)ev->t.flat);
    *resized = ev->resized;
    FM_END_CS();
    if (flat != NULL) {
        order = flat_order(st, fm_as_fd(flat));
        Py_DECREF(flat);
    }
    return order;
}

Py_ssize_t
mapping_len(fm_state *st, PyObject *mapping)
{
    return fm_is_frozendict(st, mapping) ? fm_as_fd(mapping)->len
                                         : fm_as_evolver(mapping)->t.len;
}

/* How often an Evolver changed size (0 for a frozendict). */
static uint64_t
mapping_resized(fm_state *st, PyObject *mapping)
{
    return fm_is_evolver(st, mapping) ? fm_as_evolver(mapping)->resized : 0;
}

PyObject *
mapping_foreign_base(fm_state *st, PyObject *obj)
{
    PyObject *types = PyObject_GetAttrString(st->registry, "frozendict_types");
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
mapping_is_anydict(fm_state *st, PyObject *obj)
{
    if (PyDict_Check(obj) || fm_is_frozendict(st, obj)) {
        return 1;
    }
    PyObject *foreign = mapping_foreign_base(st, obj);
    if (foreign == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_DECREF(foreign);
    return 1;
}

/* --- two versions: the one choice of path --------------------------------- */

/* How an operation reads two versions of this core: a (a version, or a
 * builder: a_len entries in the form a_form) and b, a frozendict of this
 * core (any subclass) that the operation reads from its own storage.  Every
 * operation on two such maps asks here, and only here: ==, diff, -, &, |,
 * Evolver.update (and the constructor and |=, through the one merge) and
 * merge_with.
 *
 *  - FM_PAIR_FLAT: both flat.  Entries are paired by position first (the
 *    same key object under the same stored hash: versions derived from one
 *    another keep their keys in order), the rest looked up (fd_diff_flat,
 *    fd_flat_equal); a merge applies b's entries in order.
 *  - FM_PAIR_TABLES: both in the table form (two maps built apart: nothing
 *    is shared).  == compares the two tables as dicts compare; any other
 *    operation walks their tries (FM_PAIR_WALK).
 *  - FM_PAIR_ENTRIES: b flat beside tries or a table, or in tries (or a
 *    table) but holding less than 1/FM_SHARING_WALK_RATIO of a's entries:
 *    b's entries are read one by one in b's insertion order
 *    (mapping_entries_in_order) and looked up in a with their stored
 *    hashes.  (diff lists all of both sides anyway: it walks here too, over
 *    a key trie built for the flat side.)
 *  - FM_PAIR_WALK: otherwise.  The two key tries are walked together
 *    (champ_diff, champ_equal), skipping the subtrees they share; a flat a
 *    takes tries for the walk (a transient is promoted, a version gets a
 *    key trie built for the call, flat_key_trie).
 *
 * A table version is read through its tries on every path but the first:
 * its twin, built once and kept (fd_key_trie, mapping_entries_in_order,
 * transient_init_from), so versions derived from it walk beside it.  Every
 * path keeps the guarantees of the tries: a stored key is never hashed
 * again (its stored hash is compared, then the key object itself, then ==;
 * a table's keys hash without user code); on each entry identity is tried
 * before __eq__, so the keys two related versions share are matched with no
 * user code; values are compared identity first (merges: by identity
 * alone); and both cores choose the same path for the same operands and
 * walk it the same way, so they make the same user calls (__eq__, and
 * values' __hash__ for the hash accumulator) in the same order.  Mirrors
 * mapping_pair_path in reads.py. */
fm_pair_path
mapping_pair_path(Py_ssize_t a_len, fm_form a_form, fd_object *b)
{
    fm_form b_form = fm_form_of(b);
    if (a_form == FM_FORM_TABLE && b_form == FM_FORM_TABLE) {
        return FM_PAIR_TABLES;
    }
    if (b_form == FM_FORM_FLAT) {
        return a_form == FM_FORM_FLAT ? FM_PAIR_FLAT : FM_PAIR_ENTRIES;
    }
    if (b->len * FM_SHARING_WALK_RATIO < a_len) {
        return FM_PAIR_ENTRIES;
    }
    return FM_PAIR_WALK;
}

static int
mapping_collect_entry(champ_entry *e, void *arg)
{
    return champ_difflist_append((champ_difflist *)arg, e) < 0 ? -1 : 0;
}

int
mapping_entries_in_order(fd_object *b, champ_difflist *out)
{
    if (fm_is_table(b)) {
        /* the dict's order is the insertion order; its keys hash without
         * user code (the stored hashes, read again) */
        Py_ssize_t pos = 0, i = 0;
        PyObject *k, *v;
        while (table_walk_next(b, &pos, &k, &v)) {
            Py_hash_t h = PyObject_Hash(k);
            champ_entry e = {(Py_uhash_t)h, (uint64_t)i++, k, v};
            if (h == -1 || champ_difflist_append(out, &e) < 0) {
                return -1;
            }
        }
        return 0;
    }
    if (fm_is_flat(b)) {
        flat_key *keys = fm_flat_keys(b);
        for (Py_ssize_t i = 0; i < b->len; i++) {
            champ_entry e = {keys[i].hash, (uint64_t)i, keys[i].key, fm_flat_values(b)[i]};
            if (champ_difflist_append(out, &e) < 0) {
                return -1;
            }
        }
        return 0;
    }
    if (champ_foreach(b->root, mapping_collect_entry, out) < 0) {
        return -1;
    }
    if (out->len > 1) {
        qsort(out->items, out->len, sizeof(champ_entry), transient_compare_seq);
    }
    return 0;
}

/* --- == and repr ------------------------------------------------------------ */

/* The next (key, value) (borrowed) of a walk: the flat version's entry at
 * *position when flat is not NULL, the table's (a dict's position) when
 * table is not NULL, else the cursor's.  1, or 0 at the end. */
static inline int
mapping_walk_next(order_cursor *c, fd_object *flat, PyObject *table, Py_ssize_t *position,
                  PyObject **k, PyObject **v)
{
    if (table != NULL) {
        return PyDict_Next(table, position, k, v);
    }
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

/* b.get(k, missing) as mapping_equal reads b (the pure core's b_get): own
 * (a frozendict or an Evolver) through mapping_get, a dict (get NULL) from
 * its storage, another core's or the builtin frozendict through its base
 * type's get.  A new ref (to missing when absent) or NULL. */
static PyObject *
mapping_get_or(fm_state *st, PyObject *b, int own, PyObject *get, PyObject *k,
               PyObject *missing)
{
    PyObject *other;
    if (own) {
        fm_lookup found = mapping_get(st, b, k, &other);
        return found == FM_FOUND ? other : found == FM_MISSING ? Py_NewRef(missing) : NULL;
    }
    if (get == NULL) {
        other = PyDict_GetItemWithError(b, k);
        if (other == NULL && !PyErr_Occurred()) {
            other = missing;
        }
        return Py_XNewRef(other);
    }
    return PyObject_CallFunctionObjArgs(get, b, k, missing, NULL);
}

PyObject *
mapping_equal(fm_state *st, PyObject *a, PyObject *b)
{
    /* As dict's own ==: both sides are read from their own storage, never
     * through a subclass's __len__, get or __getitem__.  b is ours (a
     * frozendict or an Evolver), a dict (any subclass), or another core's or
     * the builtin frozendict, read through that base type's methods. */
    PyObject *foreign = NULL, *get = NULL, *missing = NULL, *result = NULL, *table = NULL;
    order_node *order = NULL;
    int own = fm_is_frozendict(st, b) || fm_is_evolver(st, b);
    Py_ssize_t lb;
    if (own) {
        lb = mapping_len(st, b);
    }
    else if (PyDict_Check(b)) {
        lb = PyDict_GET_SIZE(b);
    }
    else {
        foreign = mapping_foreign_base(st, b);
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
    if (mapping_len(st, a) != lb) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    missing = PyBaseObject_Type.tp_alloc(&PyBaseObject_Type, 0);
    if (missing == NULL) {
        goto done;
    }
    /* An Evolver on either side that changes size meanwhile (from a key's or
     * a value's __eq__) stops the walk, as it stops an iterator. */
    uint64_t resized_a = mapping_resized(st, a), resized_b = mapping_resized(st, b);
    uint64_t snapshot_resized;
    /* A flat frozendict is read in place (the caller holds it, so its
     * entries never change), a table version's table too (held here);
     * anything else through an order snapshot. */
    fd_object *flat = fm_is_frozendict(st, a) && fm_is_flat(fm_as_fd(a)) ? fm_as_fd(a) : NULL;
    if (fm_is_frozendict(st, a) && fm_is_table(fm_as_fd(a))) {
        table = Py_NewRef(fm_as_fd(a)->table);
    }
    if (flat == NULL && table == NULL) {
        order = mapping_order(st, a, &snapshot_resized);
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
    while (mapping_walk_next(&c, flat, table, &position, &k, &v)) {
        Py_INCREF(k);
        Py_INCREF(v);
        PyObject *other = mapping_get_or(st, b, own, get, k, missing);
        int r = other == NULL      ? -1
                : other == missing ? 0
                                   : PyObject_RichCompareBool(v, other, Py_EQ);
        Py_XDECREF(other);
        Py_DECREF(k);
        Py_DECREF(v);
        if (r >= 0
            && (mapping_resized(st, a) != resized_a || mapping_resized(st, b) != resized_b)) {
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
    Py_XDECREF(table);
    return result;
}

PyObject *
mapping_repr(fm_state *st, PyObject *mapping, PyObject *name)
{
    /* The stored length: a subclass's __len__ is never consulted. */
    if (mapping_len(st, mapping) == 0) {
        return PyUnicode_FromFormat("%U()", name);
    }
    int rec = Py_ReprEnter(mapping);
    if (rec != 0) {
        return rec > 0 ? PyUnicode_FromFormat("%U({...})", name) : NULL;
    }
    PyObject *parts = NULL, *sep = NULL, *body = NULL, *result = NULL, *table = NULL;
    uint64_t snapshot_resized; /* (the counter is read again below) */
    order_node *order = NULL;
    /* A flat frozendict is read in place, as in mapping_equal, and a table
     * version's table (held). */
    fd_object *flat = fm_is_frozendict(st, mapping) && fm_is_flat(fm_as_fd(mapping))
                          ? fm_as_fd(mapping)
                          : NULL;
    if (fm_is_frozendict(st, mapping) && fm_is_table(fm_as_fd(mapping))) {
        table = Py_NewRef(fm_as_fd(mapping)->table);
    }
    if (flat == NULL && table == NULL) {
        order = mapping_order(st, mapping, &snapshot_resized);
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
    uint64_t resized = mapping_resized(st, mapping);
    while (mapping_walk_next(&c, flat, table, &position, &k, &v)) {
        PyObject *part = PyUnicode_FromFormat("%R: %R", k, v);
        if (part == NULL || PyList_Append(parts, part) < 0) {
            Py_XDECREF(part);
            failed = 1;
            break;
        }
        Py_DECREF(part);
        if (mapping_resized(st, mapping) != resized) {
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
    Py_XDECREF(table);
    Py_XDECREF(order);
    Py_XDECREF(parts);
    Py_XDECREF(sep);
    Py_XDECREF(body);
    return result;
}

/* --- positions: reads of a version, for both types ------------------------ */

/* A position from index (an int or __index__; negative from the end) in a
 * trie of size items: 0 and *pos, or -1 with TypeError or IndexError (as
 * list.pop raises them, name in the message). */
static int
position_index(PyObject *index, Py_ssize_t size, const char *name, Py_ssize_t *pos)
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

/* A table version's positions are its twin's (built once): position_at,
 * position_of and position_slice read through this, then release. */
static fd_object *
position_tries(fd_object *v)
{
    if (!fm_is_table(v)) {
        return (fd_object *)Py_NewRef((PyObject *)v);
    }
    return (fd_object *)table_twin(fm_state_of_type(Py_TYPE(v)), v);
}

static PyObject *position_at_tries(fd_object *v, PyObject *index, const char *name,
                                   fm_position what);

PyObject *
position_at(fd_object *v, PyObject *index, const char *name, fm_position what)
{
    fd_object *tries = position_tries(v);
    if (tries == NULL) {
        return NULL;
    }
    PyObject *r = position_at_tries(tries, index, name, what);
    Py_DECREF(tries);
    return r;
}

static PyObject *
position_at_tries(fd_object *v, PyObject *index, const char *name, fm_position what)
{
    Py_ssize_t pos;
    if (position_index(index, v->len, name, &pos) < 0) {
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
position_of(fd_object *v, PyObject *key)
{
    Py_uhash_t h;
    champ_entry *e;
    if (hashing_key_hash(key, &h) < 0) {
        return NULL;
    }
    if (fm_is_table(v)) { /* its twin's positions */
        fd_object *tries = position_tries(v);
        if (tries == NULL) {
            return NULL;
        }
        int r = champ_find(tries->root, h, key, &e); /* the twin is held */
        PyObject *result = r > 0 ? PyLong_FromSsize_t(order_rank(tries->order, e->seq)) : NULL;
        if (r == 0) {
            PyErr_SetObject(PyExc_KeyError, key);
        }
        Py_DECREF(tries);
        return result;
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
position_slice_load(fm_state *st, transient *t, fd_object *v, Py_ssize_t lo, Py_ssize_t hi)
{
    Py_ssize_t n = hi - lo, got = 0;
    champ_entry *entries = PyMem_Malloc(n * sizeof(champ_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *k, *val;
    int may_gc = 0;
    fd_object *held = NULL;
    if (fm_is_table(v)) { /* its twin's positions */
        held = position_tries(v);
        if (held == NULL) {
            PyMem_Free(entries);
            return -1;
        }
        v = held;
    }
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
    Py_XDECREF(held); /* (the entries hold their own references) */
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
position_slice(fm_state *st, PyObject *op, PyObject *start, PyObject *stop)
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
    if (lo < hi && position_slice_load(st, &t, v, lo, hi) < 0) {
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
