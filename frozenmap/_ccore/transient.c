/* transient.c -- the builder: a transient, the private editable version
 * every derivation goes through, and the versions it publishes.  Mirrors
 * frozenmap/_pycore/transient.py; see "Transient ownership" in the essay at
 * the top of frozendict.c.
 *
 * Also here: versions made from a pair of roots (transient_version_new),
 * the single-key derivations of a version (transient_version_with and
 * _without, for frozendict.c and paths.c), the fill of an empty transient
 * from distinct entries (transient_load_entries, for the merge's bulk load
 * and a slice), and the lookup in an Evolver's transient
 * (transient_shared_get).  The one merge is in merge.c, the reads both
 * types share in reads.c; both call this file, which calls neither.
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
fm_edit
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

/* --- derivations of a version -------------------------------------------- */

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
 * (a version's nodes never change); nothing is edited in place (owner 0).
 * The pure core's twin is frozendict.set (and .delete for _without), a
 * method there because paths.py derives through the public methods; here a
 * function of this layer, as paths.c calls it too.  The same steps and user
 * code in the same order; the pure core copies the key-trie path in the
 * walk that locates (champ_set_copying), C records it first
 * (champ_find_path) and copies it after the value's __hash__. */
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
