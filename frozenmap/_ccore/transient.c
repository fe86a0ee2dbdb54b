/* transient.c -- the builder: a transient, the private editable version
 * every derivation goes through, and the versions it publishes.  Mirrors
 * frozenmap/_pycore/transient.py; see "Transient ownership" in the essay at
 * the top of frozendict.c.
 *
 * Also here: versions made from a pair of roots (transient_version_new,
 * transient_version_exact), the fill of an empty transient from distinct
 * entries (transient_load_entries, for the merge's bulk load and a slice),
 * and the lookup in an Evolver's transient (transient_shared_get).  The
 * one-key derivations of a version are in derive.c, the one merge in
 * merge.c, the reads both types share in reads.c; they call this file,
 * which calls none of them.
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
        return flat_demote(tp, root, NULL, len, acc, acc_valid);
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
    t->flat = NULL;
    t->table = NULL;
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
    if (fm_is_table(src)) {
        /* Its tries: the twin, built once (t holds its roots). */
        PyObject *twin = table_twin(st, src);
        if (twin == NULL) {
            return -1;
        }
        int r = transient_init_from(st, t, twin);
        Py_DECREF(twin);
        return r;
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(src, &acc);
    return transient_init(st, t, src->root, src->order, src->len, src->next_seq, acc,
                          acc_valid);
}

int
transient_init_flat_from(fm_state *st, transient *t, PyObject *version)
{
    fd_object *src = fm_as_fd(version);
    if (!fm_is_flat(src)) {
        return transient_init_from(st, t, version);
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(src, &acc);
    transient_init(st, t, NULL, NULL, 0, 0, acc, acc_valid);
    champ_clear(&t->root); /* flat mode: no tries */
    /* Shared with the version until the first edit copies it (src is held
     * by its other owners, so it is never edited in place). */
    t->flat = (fd_object *)Py_NewRef(version);
    t->len = src->len;
    return 0;
}

void
transient_clear(transient *t)
{
    champ_clear(&t->root);
    Py_CLEAR(t->order);
    Py_CLEAR(t->flat);
    Py_CLEAR(t->table);
}

int
transient_traverse(transient *t, visitproc visit, void *arg)
{
    /* Key-trie nodes are not GC objects; the order trie owns the items. */
    Py_VISIT(t->order);
    Py_VISIT(t->table); /* (a build's own dict, on the GC's lists) */
    fd_object *fd = t->flat;
    if (fd != NULL && !PyObject_GC_IsTracked((PyObject *)fd)) {
        /* An Evolver's private items (flat_t_own): visited here, so that the
         * GC never clears them apart from the Evolver. */
        for (Py_ssize_t i = 0; i < fd->len; i++) {
            Py_VISIT(fm_flat_keys(fd)[i].key);
            Py_VISIT(fm_flat_values(fd)[i]);
        }
    }
    else {
        Py_VISIT(fd);
    }
    return 0;
}

fm_lookup
transient_lookup(transient *t, PyObject *key, Py_uhash_t *h, champ_entry **entry)
{
    assert(t->flat == NULL); /* tries mode only */
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

/* transient_put_new in flat mode: appended, or t promoted with it when it
 * would outgrow FLAT_MAX. */
static int
transient_flat_put_new(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                       PyObject *value)
{
    if (t->len >= FLAT_MAX) {
        champ_entry extra = {h, 0, key, value};
        return flat_t_promote(st, t, &extra);
    }
    fd_object *replaced;
    int r = flat_t_own(st, t, 0, &replaced);
    if (r == 0) {
        r = flat_t_append(t, h, key, value);
    }
    Py_XDECREF(replaced); /* last: may run finalizers, which see the edit */
    return r;
}

int
transient_put_new(fm_state *st, transient *t, Py_uhash_t h, PyObject *key, PyObject *value)
{
    if (t->table != NULL) {
        if (hashing_key_is_pure(key)) {
            int r = PyDict_SetItem(t->table, key, value);
            t->len = PyDict_GET_SIZE(t->table);
            return r;
        }
        if (transient_table_leave(st, t) < 0) { /* before the key is hashed again */
            return -1;
        }
    }
    int paused = transient_gc_pause(t);
    int r = t->flat != NULL ? transient_flat_put_new(st, t, h, key, value)
                            : transient_write_new(st, t, h, key, value);
    transient_gc_resume(paused);
    return r;
}

/* Whether t still holds the flat items scanned before user code ran (else
 * RuntimeError: only a tp_clear of an Evolver, through ctypes, replaces
 * them during one of its edits). */
static int
transient_flat_unchanged(transient *t, fd_object *scanned)
{
    if (t->flat != scanned) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver cleared during its own edit");
        return 0;
    }
    return 1;
}

/* transient_assoc_hashed in flat mode: the same steps and user code (the
 * keys' __eq__ in the scan, then the values' __hash__ for the accumulator),
 * then the write, which runs none. */
static fm_edit
transient_flat_assoc(fm_state *st, transient *t, Py_uhash_t h, PyObject *key, PyObject *value)
{
    Py_ssize_t index;
    fm_lookup found = flat_t_find(t, h, key, &index);
    if (found == FM_ERROR) {
        return FM_EDIT_FAILED;
    }
    Py_uhash_t acc = t->acc;
    int acc_valid = t->acc_valid;
    if (found == FM_MISSING) {
        if (hashing_acc_replace(&acc, &acc_valid, h, NULL, value) < 0
            || transient_put_new(st, t, h, key, value) < 0) {
            return FM_EDIT_FAILED;
        }
        t->acc = acc;
        t->acc_valid = acc_valid;
        return FM_CHANGED;
    }
    PyObject *old = fm_flat_values(t->flat)[index];
    if (old == value) {
        return FM_UNCHANGED;
    }
    Py_INCREF(old); /* alive until the edit is done */
    fm_edit result = FM_EDIT_FAILED;
    fd_object *replaced = NULL, *scanned = t->flat;
    if (hashing_acc_replace(&acc, &acc_valid, h, old, value) == 0
        && transient_flat_unchanged(t, scanned)) {
        int paused = transient_gc_pause(t);
        if (flat_t_own(st, t, 1, &replaced) == 0) {
            Py_DECREF(flat_t_set_at(t, index, value)); /* old is still held */
            t->acc = acc;
            t->acc_valid = acc_valid;
            result = FM_CHANGED;
        }
        transient_gc_resume(paused);
    }
    Py_XDECREF(replaced);
    Py_DECREF(old);
    return result;
}

/* transient_assoc for a key whose hash h is known. */
fm_edit
transient_assoc_hashed(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                       PyObject *value)
{
    if (t->table != NULL) {
        if (hashing_key_is_pure(key)) {
            /* dict's own insertion (its hash of a pure key runs no user
             * code): a later value wins, the first key object stays */
            if (PyDict_SetItem(t->table, key, value) < 0) {
                return FM_EDIT_FAILED;
            }
            t->len = PyDict_GET_SIZE(t->table);
            return FM_CHANGED;
        }
        if (transient_table_leave(st, t) < 0) {
            return FM_EDIT_FAILED;
        }
    }
    if (t->flat != NULL) {
        return transient_flat_assoc(st, t, h, key, value);
    }
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
    if (t->table != NULL && hashing_key_is_pure(key)) {
        return transient_assoc_hashed(st, t, 0, key, value); /* the dict hashes it */
    }
    if (t->table != NULL && transient_table_leave(st, t) < 0) { /* before it is hashed */
        return FM_EDIT_FAILED;
    }
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
    assert(t->flat == NULL); /* tries mode only (flat: transient_remove_at) */
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

int
transient_remove_at(fm_state *st, transient *t, Py_ssize_t index, PyObject **old_key,
                    PyObject **old_value)
{
    if (t->flat == NULL || index >= t->len) {
        PyErr_SetString(PyExc_RuntimeError, "Evolver cleared during its own edit");
        return -1;
    }
    fd_object *scanned = t->flat;
    PyObject *key = Py_NewRef(fm_flat_keys(t->flat)[index].key);
    PyObject *value = Py_NewRef(fm_flat_values(t->flat)[index]);
    Py_uhash_t h = fm_flat_keys(t->flat)[index].hash;
    Py_uhash_t acc = t->acc;
    int acc_valid = t->acc_valid;
    fd_object *replaced = NULL;
    int r = hashing_acc_replace(&acc, &acc_valid, h, value, NULL);
    if (r == 0 && !transient_flat_unchanged(t, scanned)) {
        r = -1;
    }
    if (r == 0) {
        int paused = transient_gc_pause(t);
        r = flat_t_own(st, t, 0, &replaced);
        if (r == 0) {
            PyObject *k, *v;
            flat_t_remove_at(t, index, &k, &v);
            Py_DECREF(k); /* key and value are still held */
            Py_DECREF(v);
            t->acc = acc;
            t->acc_valid = acc_valid;
        }
        transient_gc_resume(paused);
    }
    Py_XDECREF(replaced);
    if (r == 0 && old_key != NULL) {
        *old_key = Py_NewRef(key);
    }
    if (r == 0 && old_value != NULL) {
        *old_value = Py_NewRef(value);
    }
    Py_DECREF(key);
    Py_DECREF(value);
    return r;
}

fm_lookup
transient_dissoc(fm_state *st, transient *t, PyObject *key, PyObject **old_value)
{
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return FM_ERROR;
    }
    return transient_dissoc_hashed(st, t, h, key, old_value);
}

fm_lookup
transient_dissoc_hashed(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                        PyObject **old_value)
{
    if (t->table != NULL && transient_table_leave(st, t) < 0) {
        return FM_ERROR;
    }
    if (t->flat != NULL) {
        Py_ssize_t index;
        fm_lookup r = flat_t_find(t, h, key, &index);
        if (r == FM_FOUND && transient_remove_at(st, t, index, NULL, old_value) < 0) {
            return FM_ERROR;
        }
        return r;
    }
    champ_entry *found;
    fm_lookup r = (fm_lookup)champ_find(t->root, h, key, &found);
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
    if (t->table != NULL) {
        return transient_table_publish(st, t, tp);
    }
    if (t->flat != NULL) {
        /* t's flat version itself (|'s private builder): the reference
         * published makes later edits copy it. */
        fd_object *fd = t->flat;
        if (t->shared) { /* an Evolver's: its items stay private */
            return flat_copy(tp, fd, t->acc, t->acc_valid);
        }
        if (tp != st->frozendict_type || !Py_IS_TYPE((PyObject *)fd, tp)) {
            return flat_version_copy(tp, fd);
        }
        if (t->acc_valid && FM_LOAD_HASH(fd->hash) == -1) {
            FM_STORE_HASH(fd->hash, hashing_finalize(t->acc, t->len));
        }
        return Py_NewRef((PyObject *)fd);
    }
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
    champ_node *root = NULL;
    order_node *order = NULL;
    fd_object *flat;
    FM_BEGIN_CS(holder);
    flat = (fd_object *)Py_XNewRef((PyObject *)t->flat);
    if (flat == NULL) {
        root = champ_newref(t->root);
        order = (order_node *)Py_XNewRef(t->order);
    }
    FM_END_CS();
    if (flat != NULL) {
        /* The version held: an edit made meanwhile copies it. */
        Py_ssize_t index;
        fm_lookup found = flat_scan(flat, h, key, &index);
        if (found == FM_FOUND) {
            *value = Py_NewRef(fm_flat_values(flat)[index]);
        }
        Py_DECREF(flat);
        return found;
    }
    champ_entry *e;
    fm_lookup r = (fm_lookup)champ_find(root, h, key, &e);
    if (r == FM_FOUND) {
        *value = Py_NewRef(e->value);
    }
    champ_decref(root);
    Py_XDECREF(order); /* last: may run finalizers */
    return r;
}

/* --- filling an empty transient ----------------------------------------- */

/* Release the first n entries' references to their keys and values, then
 * the array (a build that failed before its tries took them). */
void
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
int
transient_load_entries(fm_state *st, transient *t, champ_entry *entries, Py_ssize_t n,
                       int may_gc)
{
    if ((t->flat != NULL && flat_t_promote(st, t, NULL) < 0)
        || (t->table != NULL && transient_table_leave(st, t) < 0)) { /* (t is empty) */
        transient_entries_free(entries, n);
        return -1;
    }
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

/* --- a version as an exact frozendict ------------------------------------ */

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
    if (fm_is_table(s)) {
        return table_version_share(st->frozendict_type, s);
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(s, &acc);
    return transient_version_new(st->frozendict_type, s->root, s->order, s->len, s->next_seq,
                                 acc, acc_valid);
}

/* --- a transient in table mode ------------------------------------------ */

int
transient_init_table(fm_state *st, transient *t)
{
    transient_init(st, t, NULL, NULL, 0, 0, 0, 0);
    t->table = PyDict_New();
    if (t->table == NULL) {
        transient_clear(t);
        return -1;
    }
    champ_clear(&t->root); /* table mode: no tries */
    return 0;
}

int
transient_table_leave(fm_state *st, transient *t)
{
    PyObject *table = t->table;
    Py_ssize_t n = PyDict_GET_SIZE(table), got = 0, pos = 0;
    if (n == 0) {
        t->table = NULL;
        t->root = champ_empty_root();
        Py_DECREF(table);
        return 0;
    }
    champ_entry *entries = PyMem_Malloc((size_t)n * sizeof(champ_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *k, *v;
    int may_gc = 0;
    while (got < n && PyDict_Next(table, &pos, &k, &v)) {
        Py_hash_t h = PyObject_Hash(k); /* a pure hash: no user code */
        if (h == -1) {
            transient_entries_free(entries, got);
            return -1;
        }
        may_gc |= PyType_IS_GC(Py_TYPE(k)) | PyType_IS_GC(Py_TYPE(v));
        entries[got] = (champ_entry){(Py_uhash_t)h, (uint64_t)got, Py_NewRef(k), Py_NewRef(v)};
        got++;
    }
    /* The items in tries (or flat), built as the bulk load builds them;
     * the dict released last (t is private: no finalizer reaches it). */
    t->table = NULL;
    t->root = champ_empty_root();
    int r;
    if (n <= FLAT_MAX) {
        PyObject *flat = flat_from_entries(st->frozendict_type, entries, n, NULL);
        transient_entries_free(entries, n);
        r = flat == NULL ? -1 : 0;
        if (flat != NULL) {
            champ_clear(&t->root);
            t->flat = fm_as_fd(flat);
            t->len = n;
        }
    }
    else {
        r = transient_load_entries(st, t, entries, n, may_gc);
    }
    if (r < 0) {
        champ_clear(&t->root);
        t->table = table; /* as it was */
        return -1;
    }
    Py_DECREF(table);
    return 0;
}

PyObject *
transient_table_publish(fm_state *st, transient *t, PyTypeObject *tp)
{
    PyObject *table = t->table;
    Py_ssize_t n = PyDict_GET_SIZE(table);
    if (n > FLAT_MAX) {
        /* The dict goes to the version (t is done: its callers publish once
         * and clear it); t is left empty. */
        t->table = PyDict_New();
        if (t->table == NULL) {
            t->table = table;
            return NULL;
        }
        return table_version_new(tp, table, 0, 0);
    }
    if (transient_table_leave(st, t) < 0) {
        return NULL;
    }
    return transient_publish(st, t, tp);
}
