/* derive.c -- the one-key derivations of a version: set (derive_with),
 * delete and discard (derive_without), for frozendict.c's methods and for
 * paths.c.  Mirrors frozenmap/_pycore/derive.py.
 *
 * Each is a private one-shot transient (owner 0: every edit copies) started
 * from the version, one lookup, the user code (the key's __hash__ and
 * __eq__, then the value's __hash__ for the hash accumulator) and only then
 * the copies of both tries' paths, published without a second walk.  A flat
 * version derives through flat.c (flat_with, flat_without), and a result of
 * at most FLAT_MAX items is published flat.  A new one-key operation (one
 * that derives a version from one key, as a rename that keeps the item's
 * position would) belongs here, beside its pure twin in derive.py.
 *
 * Layers: above transient.c and flat.c, beside reads.c; frozendict.c and
 * paths.c call it.
 */
#include "cfrozenmap.h"

/* transient_publish for a private one-shot transient whose roots nobody
 * else will use: the new exact version takes t's references over (t is left
 * without roots), saving a pair of increfs and decrefs per trie.  t holds
 * the roots while the version is allocated (which can run the GC).  New ref
 * or NULL (t unchanged). */
static PyObject *
derive_take(fm_state *st, transient *t)
{
    PyTypeObject *tp = st->frozendict_type;
    if (t->len <= FLAT_MAX) {
        return flat_demote(tp, t->root, NULL, t->len, t->acc, t->acc_valid);
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

/* set of a version: one lookup that records the path (champ_find_path),
 * the user code (the value's __hash__ for the hash accumulator), then both
 * tries copied along their paths; the key trie along the recorded one,
 * without a second walk.  t holds the version's roots throughout, so the
 * recorded path and the entry found stay valid (a version's nodes never
 * change); nothing is edited in place (owner 0).  The same steps and user
 * code in the same order as the pure core's derive_with; it copies the
 * key-trie path in the walk that locates (champ_set_copying), C records it
 * first (champ_find_path) and copies it after the value's __hash__. */
PyObject *
derive_with(fm_state *st, PyObject *op, PyObject *key, PyObject *value)
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
    result = derive_take(st, &t);
done:
    transient_clear(&t);
    return result;
}

/* delete (discard when missing_ok) of a version: as derive_with, the
 * removed value's __hash__ run before either trie changes. */
PyObject *
derive_without(PyObject *op, PyObject *key, int missing_ok)
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
    if (t.len - 1 <= FLAT_MAX) {
        /* Demoted straight from op's tries (t holds them), no path copied. */
        result =
            flat_demote(st->frozendict_type, t.root, found, t.len - 1, t.acc, t.acc_valid);
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
    result = derive_take(st, &t);
done:
    transient_clear(&t);
    return result;
}
