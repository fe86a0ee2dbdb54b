/* flat.c -- small versions as flat arrays (mirrors frozenmap/_pycore/flat.py
 * function by function).
 *
 * A version of at most FLAT_MAX items holds no tries: its own array of
 * values and a key block of (hash, key) pairs in insertion order, which the
 * versions made from one another by value changes share (each holding its
 * own reference to every key in it, so none depends on another's state).
 * A lookup scans the stored hashes in order (flat_scan, cfrozenmap.h) and,
 * on an equal hash, tries identity, then the stored key's __eq__ (held
 * across the call, as champ_keys_equal does): one __eq__ per entry with an
 * equal hash, the same calls a trie's bitmap node makes.  A version is flat
 * exactly when its length is at most FLAT_MAX (fm_is_flat): a set that
 * makes one item more promotes (both tries built bottom-up from the
 * entries, seqs 0..k-1 in order), a delete that leaves FLAT_MAX demotes.
 * Seqs are never observable, so the renumbering is invisible.  See "10.
 * Small maps: the flat form" in the essay at the top of frozendict.c.
 */
#include "cfrozenmap.h"

/* --- the key block ------------------------------------------------------ */

flat_keys *
flat_keys_new(Py_ssize_t n)
{
    assert(n > 0 && n <= FLAT_MAX);
    flat_keys *block = PyMem_Malloc(offsetof(flat_keys, keys) + (size_t)n * sizeof(flat_key));
    if (block == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    block->rc = 1;
    return block;
}

/* A values array for n items (n > 0), or NULL with MemoryError. */
static PyObject **
flat_values_new(Py_ssize_t n)
{
    PyObject **values = PyMem_Malloc((size_t)n * sizeof(PyObject *));
    if (values == NULL) {
        PyErr_NoMemory();
    }
    return values;
}

/* A new block of n keys and a new values array (both NULL, with
 * MemoryError, on failure): what a version of n new items holds. */
static int
flat_parts_new(Py_ssize_t n, flat_keys **keys, PyObject ***values)
{
    *keys = flat_keys_new(n);
    *values = *keys != NULL ? flat_values_new(n) : NULL;
    if (*values == NULL) {
        if (*keys != NULL) {
            PyMem_Free(*keys);
            *keys = NULL;
        }
        return -1;
    }
    return 0;
}

void
flat_release(PyObject **values, flat_keys *keys, Py_ssize_t n)
{
    /* The keys are read from the block while this holder still counts in
     * it: no other holder's release can free it meanwhile. */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_DECREF(values[i]);
        Py_DECREF(keys->keys[i].key);
    }
    PyMem_Free(values);
    if (keys != NULL) {
        flat_keys_decref(keys);
    }
}

/* Release the first got items of a new version's parts made for n items
 * and free them (a construction that failed part way). */
static void
flat_release_partial(PyObject **values, flat_keys *keys, Py_ssize_t got)
{
    for (Py_ssize_t i = 0; i < got; i++) {
        Py_DECREF(values[i]);
        Py_DECREF(keys->keys[i].key);
    }
    PyMem_Free(values);
    PyMem_Free(keys); /* a new block: no other holder */
}

void
flat_clear(fd_object *fd)
{
    PyObject **values = fd->values;
    flat_keys *keys = fd->keys;
    Py_ssize_t len = fd->len;
    fd->values = NULL;
    fd->keys = NULL;
    fd->len = 0;
    FM_STORE_HASH(fd->hash, -1);
    flat_release(values, keys, len);
}

PyObject *
flat_version_new(PyTypeObject *tp, PyObject **values, flat_keys *keys, Py_ssize_t n,
                 Py_uhash_t acc, int acc_valid)
{
    fd_object *self = (fd_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        flat_release(values, keys, n);
        return NULL;
    }
    /* tp_alloc zeroed it: length 0, no parts, the empty flat version. */
    self->values = values;
    self->keys = keys;
    self->next_seq = 0;
    self->hash = acc_valid ? hashing_finalize(acc, n) : -1;
    self->len = n;
    return (PyObject *)self;
}

/* Copies of fd's values (new references), or NULL (MemoryError; fd is not
 * empty). */
static PyObject **
flat_copy_values(fd_object *fd)
{
    Py_ssize_t n = fd->len;
    PyObject **values = flat_values_new(n);
    if (values == NULL) {
        return NULL;
    }
    PyObject **src = fm_flat_values(fd);
    for (Py_ssize_t i = 0; i < n; i++) {
        values[i] = Py_NewRef(src[i]);
    }
    return values;
}

/* fd's key block, shared: a new holder's count in it and a new reference to
 * each of its keys (fd is not empty). */
static flat_keys *
flat_share_keys(fd_object *fd)
{
    flat_keys *keys = fd->keys;
    for (Py_ssize_t i = 0; i < fd->len; i++) {
        Py_INCREF(keys->keys[i].key);
    }
    flat_keys_incref(keys);
    return keys;
}

/* Copy items [lo, hi) of the flat version fd into new parts from position
 * at, taking new references. */
static void
flat_copy_items(flat_keys *keys, PyObject **values, Py_ssize_t at, fd_object *fd,
                Py_ssize_t lo, Py_ssize_t hi)
{
    flat_key *src_keys = fm_flat_keys(fd);
    PyObject **src_values = fm_flat_values(fd);
    for (Py_ssize_t i = lo; i < hi; i++, at++) {
        keys->keys[at].hash = src_keys[i].hash;
        keys->keys[at].key = Py_NewRef(src_keys[i].key);
        values[at] = Py_NewRef(src_values[i]);
    }
}

/* A new version of type tp with the items of the flat version fd but the
 * one at position skip (-1: none), in a key block of its own, its hash
 * from acc when acc_valid.  New ref or NULL. */
static PyObject *
flat_copy_without(PyTypeObject *tp, fd_object *fd, Py_ssize_t skip, Py_uhash_t acc,
                  int acc_valid)
{
    Py_ssize_t len = fd->len, n = len - (skip >= 0);
    PyObject **values = NULL;
    flat_keys *keys = NULL;
    if (n) {
        if (flat_parts_new(n, &keys, &values) < 0) {
            return NULL;
        }
        if (skip < 0) {
            flat_copy_items(keys, values, 0, fd, 0, len);
        }
        else {
            flat_copy_items(keys, values, 0, fd, 0, skip);
            flat_copy_items(keys, values, skip, fd, skip + 1, len);
        }
    }
    return flat_version_new(tp, values, keys, n, acc, acc_valid);
}

/* A version of type tp with the items of the flat version fd and the value
 * of position index replaced by value (index -1: none), sharing fd's key
 * block.  New ref or NULL. */
static PyObject *
flat_with_value(PyTypeObject *tp, fd_object *fd, Py_ssize_t index, PyObject *value,
                Py_uhash_t acc, int acc_valid)
{
    Py_ssize_t n = fd->len;
    if (n == 0) {
        return flat_version_new(tp, NULL, NULL, 0, acc, acc_valid);
    }
    PyObject **values = flat_copy_values(fd);
    if (values == NULL) {
        return NULL;
    }
    if (index >= 0) {
        Py_SETREF(values[index], Py_NewRef(value)); /* fd still holds the old */
    }
    return flat_version_new(tp, values, flat_share_keys(fd), n, acc, acc_valid);
}

PyObject *
flat_version_copy(PyTypeObject *tp, fd_object *fd)
{
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(fd, &acc);
    return flat_with_value(tp, fd, -1, NULL, acc, acc_valid);
}

typedef struct {
    champ_entry *out;
    Py_ssize_t count;
    const champ_entry *skip; /* an entry of the trie left out, or NULL */
} flat_collect_state;

static int
flat_collect_entry(champ_entry *e, void *arg)
{
    flat_collect_state *cs = arg;
    if (e == cs->skip) {
        return 0;
    }
    if (cs->count == FLAT_MAX) {
        return 1; /* more than a flat version holds */
    }
    cs->out[cs->count++] = *e;
    return 0;
}

/* Sort n <= FLAT_MAX entries by seq: an insertion sort, which at these
 * sizes beats qsort's calls through a comparator (and glibc's merge sort
 * allocates for 32 entries). */
static void
flat_sort_by_seq(champ_entry *entries, Py_ssize_t n)
{
    for (Py_ssize_t i = 1; i < n; i++) {
        champ_entry e = entries[i];
        Py_ssize_t j = i;
        while (j > 0 && entries[j - 1].seq > e.seq) {
            entries[j] = entries[j - 1];
            j--;
        }
        entries[j] = e;
    }
}

/* The entries of the key trie root (at most FLAT_MAX) into out, sorted by
 * seq: their count, or -1 (AssertionError) when there are more. */
static Py_ssize_t
flat_collect(champ_node *root, const champ_entry *skip, champ_entry *out)
{
    flat_collect_state cs = {out, 0, skip};
    if (champ_foreach(root, flat_collect_entry, &cs) != 0) {
        PyErr_SetString(PyExc_AssertionError, "more than FLAT_MAX entries to demote");
        return -1;
    }
    flat_sort_by_seq(out, cs.count);
    return cs.count;
}

/* A flat version of type tp of n <= FLAT_MAX entries with distinct keys,
 * in that order, values from values[i] when values is not NULL, its hash
 * from acc when acc_valid.  New ref or NULL. */
static PyObject *
flat_entries_version(PyTypeObject *tp, const champ_entry *entries, Py_ssize_t n,
                     PyObject *const *values, Py_uhash_t acc, int acc_valid)
{
    PyObject **block = NULL;
    flat_keys *keys = NULL;
    if (n) {
        assert(n <= FLAT_MAX);
        if (flat_parts_new(n, &keys, &block) < 0) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            keys->keys[i].hash = entries[i].hash;
            keys->keys[i].key = Py_NewRef(entries[i].key);
            block[i] = Py_NewRef(values != NULL ? values[i] : entries[i].value);
        }
    }
    return flat_version_new(tp, block, keys, n, acc, acc_valid);
}

PyObject *
flat_demote(PyTypeObject *tp, champ_node *root, const champ_entry *skip, Py_ssize_t len,
            Py_uhash_t acc, int acc_valid)
{
    champ_entry found[FLAT_MAX];
    Py_ssize_t n = flat_collect(root, skip, found);
    if (n < 0) {
        return NULL;
    }
    assert(n == len);
    return flat_entries_version(tp, found, n, NULL, acc, acc_valid);
}

/* Start t with the tries of the flat version fd's items and then extra
 * (its key NULL for none), seqs 0.. in that order, built bottom-up as the
 * constructor's bulk load builds them (the keys are distinct: no lookups,
 * no user code).  The caller holds the objects.  0 or -1 (t then
 * released). */
static int
flat_build_tries(fm_state *st, transient *t, fd_object *fd, const champ_entry *extra,
                 Py_uhash_t acc, int acc_valid)
{
    if (transient_init(st, t, NULL, NULL, 0, 0, acc, acc_valid) < 0) {
        return -1;
    }
    Py_ssize_t n = fd->len;
    Py_ssize_t total = n + (extra != NULL);
    if (total == 0) {
        return 0;
    }
    order_node *order = NULL;
    champ_node *root = NULL;
    champ_entry *entries = PyMem_Malloc((size_t)total * sizeof(champ_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    flat_key *keys = fm_flat_keys(fd);
    PyObject **values = fm_flat_values(fd);
    for (Py_ssize_t i = 0; i < n; i++) {
        entries[i] = (champ_entry){keys[i].hash, (uint64_t)i, Py_NewRef(keys[i].key),
                                   Py_NewRef(values[i])};
    }
    if (extra != NULL) {
        entries[n] = (champ_entry){extra->hash, (uint64_t)n, Py_NewRef(extra->key),
                                   Py_NewRef(extra->value)};
    }
    order = order_build(st, entries, total, 1); /* takes the refs, also on failure */
    if (order == NULL) {
        PyMem_Free(entries);
        goto fail;
    }
    root = champ_build(entries, total); /* frees entries, also on failure */
    if (root == NULL) {
        goto fail;
    }
    champ_node *empty = t->root;
    t->root = root;
    t->order = order;
    t->len = total;
    t->next_seq = (uint64_t)total;
    champ_decref(empty);
    return 0;
fail:
    Py_XDECREF(order);
    transient_clear(t);
    return -1;
}

int
flat_promote(fm_state *st, transient *t, fd_object *fd)
{
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(fd, &acc);
    return flat_build_tries(st, t, fd, NULL, acc, acc_valid);
}

PyObject *
flat_with(fm_state *st, PyObject *op, Py_uhash_t h, PyObject *key, PyObject *value)
{
    fd_object *fd = fm_as_fd(op);
    Py_ssize_t index;
    fm_lookup r = flat_scan(fd, h, key, &index);
    if (r == FM_ERROR) {
        return NULL;
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(fd, &acc);
    Py_ssize_t n = fd->len;
    if (r == FM_FOUND) {
        PyObject *old = fm_flat_values(fd)[index];
        if (old == value) {
            return transient_version_exact(st, op);
        }
        if (hashing_acc_replace(&acc, &acc_valid, h, old, value) < 0) {
            return NULL;
        }
        return flat_with_value(st->frozendict_type, fd, index, value, acc, acc_valid);
    }
    if (hashing_acc_replace(&acc, &acc_valid, h, NULL, value) < 0) {
        return NULL;
    }
    if (n < FLAT_MAX) {
        PyObject **values;
        flat_keys *keys;
        if (flat_parts_new(n + 1, &keys, &values) < 0) {
            return NULL;
        }
        flat_copy_items(keys, values, 0, fd, 0, n);
        keys->keys[n].hash = h;
        keys->keys[n].key = Py_NewRef(key);
        values[n] = Py_NewRef(value);
        return flat_version_new(st->frozendict_type, values, keys, n + 1, acc, acc_valid);
    }
    /* One item more than a flat version holds: promote. */
    transient t;
    champ_entry extra = {h, 0, key, value};
    if (flat_build_tries(st, &t, fd, &extra, acc, acc_valid) < 0) {
        return NULL;
    }
    PyObject *result = transient_publish(st, &t, st->frozendict_type);
    transient_clear(&t);
    return result;
}

PyObject *
flat_without(fm_state *st, PyObject *op, Py_uhash_t h, PyObject *key, int missing_ok)
{
    fd_object *fd = fm_as_fd(op);
    Py_ssize_t index;
    fm_lookup r = flat_scan(fd, h, key, &index);
    if (r == FM_ERROR) {
        return NULL;
    }
    if (r == FM_MISSING) {
        if (missing_ok) {
            return transient_version_exact(st, op);
        }
        fm_set_key_error(key);
        return NULL;
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(fd, &acc);
    if (hashing_acc_replace(&acc, &acc_valid, fm_flat_keys(fd)[index].hash,
                            fm_flat_values(fd)[index], NULL)
        < 0) {
        return NULL;
    }
    return flat_copy_without(st->frozendict_type, fd, index, acc, acc_valid);
}

champ_node *
flat_key_trie(fm_state *st, fd_object *fd)
{
    transient t;
    if (flat_promote(st, &t, fd) < 0) {
        return NULL;
    }
    champ_node *root = champ_newref(t.root);
    transient_clear(&t); /* fd still holds every key and value */
    return root;
}

order_node *
flat_order(fm_state *st, fd_object *fd)
{
    champ_entry items[FLAT_MAX];
    Py_ssize_t n = fd->len;
    flat_key *keys = fm_flat_keys(fd);
    PyObject **values = fm_flat_values(fd);
    for (Py_ssize_t i = 0; i < n; i++) {
        items[i].hash = keys[i].hash;
        items[i].seq = (uint64_t)i;
        items[i].key = Py_NewRef(keys[i].key);
        items[i].value = Py_NewRef(values[i]);
    }
    return order_build(st, items, n, 1); /* takes the references */
}

int
flat_same_items(fd_object *fd, champ_node *root, Py_ssize_t len)
{
    if (fd->len != len) {
        return 0;
    }
    champ_entry found[FLAT_MAX];
    flat_collect_state cs = {found, 0, NULL};
    if (champ_foreach(root, flat_collect_entry, &cs) != 0 || cs.count != len) {
        return 0;
    }
    flat_sort_by_seq(found, cs.count);
    flat_key *keys = fm_flat_keys(fd);
    PyObject **values = fm_flat_values(fd);
    for (Py_ssize_t i = 0; i < len; i++) {
        if (found[i].key != keys[i].key || found[i].value != values[i]) {
            return 0;
        }
    }
    return 1;
}

PyObject *
flat_check(fd_object *fd)
{
    if (!fm_is_flat(fd) || fd->next_seq != 0) {
        PyErr_SetString(PyExc_AssertionError, "a flat version with tries");
        return NULL;
    }
    if ((fd->len == 0) != (fd->values == NULL) || (fd->len == 0) != (fd->keys == NULL)) {
        PyErr_SetString(PyExc_AssertionError, "flat entries do not match the length");
        return NULL;
    }
    if (fd->keys != NULL && flat_keys_count(fd->keys) < 1) {
        PyErr_SetString(PyExc_AssertionError, "a flat version's key block is not counted");
        return NULL;
    }
    if (hashing_check_cached(FM_LOAD_HASH(fd->hash), fd->len) < 0) {
        return NULL;
    }
    /* One key object may be stored twice (its hash changed between the two
     * insertions, as dict allows), never twice under one hash: a lookup
     * would have found the first by identity. */
    flat_key *keys = fm_flat_keys(fd);
    for (Py_ssize_t i = 0; i < fd->len; i++) {
        for (Py_ssize_t j = 0; j < i; j++) {
            if (keys[i].key == keys[j].key && keys[i].hash == keys[j].hash) {
                PyErr_Format(PyExc_AssertionError, "key %R twice under one hash", keys[i].key);
                return NULL;
            }
        }
    }
    Py_RETURN_NONE;
}

PyObject *
flat_dump(fd_object *fd)
{
    PyObject *text = PyUnicode_FromFormat("frozendict len=%zd flat", fd->len);
    for (Py_ssize_t i = 0; text != NULL && i < fd->len; i++) {
        /* The reprs run user code: the key and value are held across them
         * (fd itself is held by the caller). */
        flat_key entry = fm_flat_keys(fd)[i];
        PyObject *key = Py_NewRef(entry.key), *value = Py_NewRef(fm_flat_values(fd)[i]);
        char buf[32];
        PyOS_snprintf(buf, sizeof(buf), "%llu", (unsigned long long)entry.hash);
        PyObject *line = PyUnicode_FromFormat("\n  (%s, %R, %R)", buf, key, value);
        Py_DECREF(key);
        Py_DECREF(value);
        if (line == NULL) {
            Py_CLEAR(text);
            break;
        }
        PyUnicode_AppendAndDel(&text, line);
    }
    return text;
}

PyObject *
flat_from_dict(PyTypeObject *tp, PyObject *dict)
{
    /* As merge_bulk_load: the references are taken in one read of the
     * dict (no allocation, so no user code, meanwhile), then the keys are
     * hashed; an exact dict's keys are distinct. */
    Py_ssize_t n = PyDict_GET_SIZE(dict);
    if (n == 0) {
        return flat_version_new(tp, NULL, NULL, 0, 0, 0);
    }
    assert(n <= FLAT_MAX);
    PyObject **values;
    flat_keys *keys;
    if (flat_parts_new(n, &keys, &values) < 0) {
        return NULL;
    }
    Py_ssize_t got = 0, pos = 0;
    PyObject *k, *v;
    while (got < n && PyDict_Next(dict, &pos, &k, &v)) {
        keys->keys[got].hash = 0;
        keys->keys[got].key = Py_NewRef(k);
        values[got] = Py_NewRef(v);
        got++;
    }
    if (got != n) {
        PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (hashing_key_hash_fast(keys->keys[i].key, &keys->keys[i].hash) < 0) {
            goto fail;
        }
    }
    return flat_version_new(tp, values, keys, n, 0, 0);
fail:
    flat_release_partial(values, keys, got);
    return NULL;
}

PyObject *
flat_from_kwnames(PyTypeObject *tp, PyObject *const *kwvalues, PyObject *kwnames)
{
    Py_ssize_t n = PyTuple_GET_SIZE(kwnames), count = 0;
    assert(n > 0 && n <= FLAT_MAX);
    PyObject **values;
    flat_keys *keys;
    if (flat_parts_new(n, &keys, &values) < 0) {
        return NULL;
    }
    flat_key *slots = keys->keys;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        Py_uhash_t h;
        if (hashing_key_hash_fast(name, &h) < 0) { /* a str: no user code */
            flat_release_partial(values, keys, count);
            return NULL;
        }
        Py_ssize_t j = 0;
        while (j < count
               && !(slots[j].hash == h
                    && (slots[j].key == name || PyUnicode_Compare(slots[j].key, name) == 0))) {
            j++;
        }
        if (j < count) { /* a name given twice (only from C): the last value wins */
            Py_SETREF(values[j], Py_NewRef(kwvalues[i]));
            continue;
        }
        slots[count].hash = h;
        slots[count].key = Py_NewRef(name);
        values[count] = Py_NewRef(kwvalues[i]);
        count++;
    }
    /* (a name given twice: fewer items than the parts have room for, which
     * is harmless: every holder reads len of them) */
    return flat_version_new(tp, values, keys, count, 0, 0);
}

/* --- a transient in flat mode ------------------------------------------- */

/* Whether t may edit its flat version in place: an exact frozendict that t
 * holds the only reference to (no published copy, reader, iterator or
 * Evolver's cache holds it; frozendicts take no weak references), and,
 * when keys change (values_only 0), the only holder of its key block too
 * (a version sharing the keys reads them).  The free-threaded build always
 * copies: another thread's references may be counted on its side only. */
static int
flat_t_editable(fm_state *st, transient *t, int values_only)
{
#if FM_FREE_THREADED
    return 0;
#else
    fd_object *fd = t->flat;
    return Py_REFCNT((PyObject *)fd) == 1 && Py_IS_TYPE((PyObject *)fd, st->frozendict_type)
           && (values_only || fd->keys == NULL || flat_keys_count(fd->keys) == 1);
#endif
}

fm_lookup
flat_t_find(transient *t, Py_uhash_t h, PyObject *key, Py_ssize_t *index)
{
    /* Held across the keys' __eq__ (an edit they make elsewhere copies).
     * Only a tp_clear of an Evolver (through ctypes) can replace t's items
     * meanwhile: a key not found is then added to what t holds now, and a
     * position found means nothing there. */
    fd_object *fd = (fd_object *)Py_NewRef((PyObject *)t->flat);
    fm_lookup r = flat_scan(fd, h, key, index);
    if (r == FM_FOUND && fd != t->flat) {
        PyErr_SetString(PyExc_RuntimeError, "mapping changed during a lookup");
        r = FM_ERROR;
    }
    Py_DECREF(fd);
    return r;
}

PyObject *
flat_copy(PyTypeObject *tp, fd_object *fd, Py_uhash_t acc, int acc_valid)
{
    return flat_with_value(tp, fd, -1, NULL, acc, acc_valid);
}

int
flat_t_own(fm_state *st, transient *t, int values_only, fd_object **replaced)
{
    *replaced = NULL;
    if (flat_t_editable(st, t, values_only)) {
        return 0;
    }
    fd_object *fd = t->flat;
    /* Only values change: a copy of the values beside the same key block
     * (as a set makes); else a copy with a block of its own. */
    PyObject *copy = values_only ? flat_with_value(st->frozendict_type, fd, -1, NULL, 0, 0)
                                 : flat_copy_without(st->frozendict_type, fd, -1, 0, 0);
    if (copy == NULL) {
        return -1;
    }
    if (t->shared) {
        /* An Evolver's items: private to it, so out of the GC's reach (the
         * Evolver's traverse visits them), and never cleared apart from it
         * (transient_traverse). */
        PyObject_GC_UnTrack(copy);
    }
    *replaced = fd;
    t->flat = fm_as_fd(copy);
    return 0;
}

PyObject *
flat_t_set_at(transient *t, Py_ssize_t index, PyObject *value)
{
    fd_object *fd = t->flat;
    PyObject *old = fd->values[index];
    fd->values[index] = Py_NewRef(value);
    FM_STORE_HASH(fd->hash, -1);
    return old;
}

int
flat_t_append(transient *t, Py_uhash_t h, PyObject *key, PyObject *value)
{
    fd_object *fd = t->flat;
    Py_ssize_t n = fd->len;
    assert(n < FLAT_MAX && t->len == n);
    /* Grow both parts first (either failure leaves the items as they were:
     * a part with room for one more is harmless), then write. */
    PyObject **values = PyMem_Realloc(fd->values, (size_t)(n + 1) * sizeof(PyObject *));
    if (values == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    fd->values = values;
    flat_keys *keys = n ? PyMem_Realloc(fd->keys, offsetof(flat_keys, keys)
                                                      + (size_t)(n + 1) * sizeof(flat_key))
                        : flat_keys_new(1);
    if (keys == NULL) {
        if (n) {
            PyErr_NoMemory();
        }
        return -1;
    }
    fd->keys = keys;
    values[n] = Py_NewRef(value);
    keys->keys[n].hash = h;
    keys->keys[n].key = Py_NewRef(key);
    fd->len = n + 1;
    FM_STORE_HASH(fd->hash, -1);
    t->len = n + 1;
    return 0;
}

void
flat_t_remove_at(transient *t, Py_ssize_t index, PyObject **old_key, PyObject **old_value)
{
    fd_object *fd = t->flat;
    Py_ssize_t n = fd->len;
    PyObject **values = fd->values;
    flat_keys *keys = fd->keys;
    *old_key = keys->keys[index].key;
    *old_value = values[index];
    memmove(values + index, values + index + 1, (size_t)(n - 1 - index) * sizeof(PyObject *));
    memmove(keys->keys + index, keys->keys + index + 1,
            (size_t)(n - 1 - index) * sizeof(flat_key));
    fd->len = n - 1;
    t->len = n - 1;
    FM_STORE_HASH(fd->hash, -1);
    if (n == 1) {
        /* the empty flat version holds no parts */
        fd->values = NULL;
        fd->keys = NULL;
        PyMem_Free(values);
        flat_keys_decref(keys); /* its only holder: freed */
    }
}

int
flat_t_promote(fm_state *st, transient *t, const champ_entry *extra)
{
    transient built;
    if (flat_build_tries(st, &built, t->flat, extra, t->acc, t->acc_valid) < 0) {
        return -1;
    }
    fd_object *fd = t->flat;
    t->root = built.root;
    t->order = built.order;
    t->len = built.len;
    t->next_seq = built.next_seq;
    t->flat = NULL;
    Py_DECREF(fd); /* last: may run finalizers, which see the tries */
    return 0;
}

int
flat_t_same_items(fd_object *fd, transient *t)
{
    fd_object *mine = t->flat;
    if (mine == fd) {
        return 1;
    }
    if (mine->len != fd->len) {
        return 0;
    }
    flat_key *ka = fm_flat_keys(fd), *kb = fm_flat_keys(mine);
    PyObject **va = fm_flat_values(fd), **vb = fm_flat_values(mine);
    for (Py_ssize_t i = 0; i < fd->len; i++) {
        if (ka[i].key != kb[i].key || va[i] != vb[i]) {
            return 0;
        }
    }
    return 1;
}

PyObject *
flat_from_entries(PyTypeObject *tp, const champ_entry *entries, Py_ssize_t n,
                  PyObject *const *values)
{
    return flat_entries_version(tp, entries, n, values, 0, 0);
}
