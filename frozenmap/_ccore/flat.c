/* flat.c -- small versions as one flat array (mirrors
 * frozenmap/_pycore/flat.py function by function).
 *
 * A version of at most FLAT_MAX items holds no tries: an owner holds one
 * PyMem block of its values then its (hash, key) pairs in insertion order;
 * a version made from it by a value change (a sharer) holds its own values
 * and a reference to the owner, whose keys it reads.  A lookup scans the
 * stored hashes in order (flat_scan, cfrozenmap.h) and, on an equal hash,
 * tries identity, then the stored key's __eq__ (held across the call, as
 * champ_keys_equal does): one __eq__ per entry with an equal hash, the same
 * calls a trie's bitmap node makes.  A version is flat exactly when its
 * length is at most FLAT_MAX (fm_is_flat): a set that makes one item more
 * promotes (both tries built bottom-up from the entries, seqs 0..k-1 in
 * order), a delete that leaves FLAT_MAX demotes.  Seqs are never
 * observable, so the renumbering is invisible.  See "10. Small maps: the
 * flat form" in the essay at the top of frozendict.c.
 */
#include "cfrozenmap.h"

flat_key *
flat_orphan_keys(void)
{
    /* Refilled on each call with the same words (any thread may call). */
    static flat_key placeholders[FLAT_MAX];
    for (Py_ssize_t i = 0; i < FLAT_MAX; i++) {
        placeholders[i] = (flat_key){0, Py_None};
    }
    return placeholders;
}

/* An owner's block for n items (n > 0): n values, then n flat_keys; or
 * NULL with MemoryError. */
static PyObject **
flat_alloc(Py_ssize_t n)
{
    PyObject **values = PyMem_Malloc((size_t)n * (sizeof(PyObject *) + sizeof(flat_key)));
    if (values == NULL) {
        PyErr_NoMemory();
    }
    return values;
}

/* The keys of an owner's block of n items. */
static inline flat_key *
flat_block_keys(PyObject **values, Py_ssize_t n)
{
    return (flat_key *)(values + n);
}

void
flat_release(PyObject **values, fd_object *owner, Py_ssize_t n)
{
    if (values != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_DECREF(values[i]);
        }
        if (owner == NULL) {
            flat_key *keys = flat_block_keys(values, n);
            for (Py_ssize_t i = 0; i < n; i++) {
                Py_DECREF(keys[i].key);
            }
        }
        PyMem_Free(values);
    }
    Py_XDECREF(owner);
}

/* Release the first got items of an owner's block made for n items and
 * free it (a construction that failed part way). */
static void
flat_release_partial(PyObject **values, Py_ssize_t n, Py_ssize_t got)
{
    flat_key *keys = flat_block_keys(values, n);
    for (Py_ssize_t i = 0; i < got; i++) {
        Py_DECREF(values[i]);
        Py_DECREF(keys[i].key);
    }
    PyMem_Free(values);
}

void
flat_clear(fd_object *fd)
{
    PyObject **values = fd->values;
    fd_object *owner = fd->owner;
    Py_ssize_t len = fd->len;
    fd->values = NULL;
    fd->owner = NULL;
    fd->len = 0;
    FM_STORE_HASH(fd->hash, -1);
    flat_release(values, owner, len);
}

PyObject *
flat_version_new(PyTypeObject *tp, PyObject **values, fd_object *owner, Py_ssize_t n,
                 Py_uhash_t acc, int acc_valid)
{
    fd_object *self = (fd_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        flat_release(values, owner, n);
        return NULL;
    }
    /* tp_alloc zeroed it: length 0, no block, the empty flat version. */
    self->values = values;
    self->owner = owner;
    self->next_seq = 0;
    self->hash = acc_valid ? hashing_finalize(acc, n) : -1;
    self->len = n;
    return (PyObject *)self;
}

/* The owner whose keys a version derived from fd by a value change shares
 * (a new reference), or NULL when fd is not of the exact type: a subclass's
 * instance (its __dict__, its finalizer) is never kept alive by another
 * version. */
static fd_object *
flat_share_owner(fm_state *st, fd_object *fd)
{
    fd_object *owner = fd->owner != NULL ? fd->owner : fd;
    if (!Py_IS_TYPE((PyObject *)owner, st->frozendict_type)) {
        return NULL;
    }
    return (fd_object *)Py_NewRef((PyObject *)owner);
}

/* Copies of fd's values (new references) in a sharer's block, or NULL
 * (MemoryError; fd is not empty). */
static PyObject **
flat_copy_values(fd_object *fd)
{
    Py_ssize_t n = fd->len;
    PyObject **values = PyMem_Malloc((size_t)n * sizeof(PyObject *));
    if (values == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject **src = fm_flat_values(fd);
    for (Py_ssize_t i = 0; i < n; i++) {
        values[i] = Py_NewRef(src[i]);
    }
    return values;
}

/* Copy items [lo, hi) of the flat version fd into the owner's block values
 * of n items from position at, taking new references. */
static void
flat_copy_items(PyObject **values, Py_ssize_t n, Py_ssize_t at, fd_object *fd, Py_ssize_t lo,
                Py_ssize_t hi)
{
    flat_key *keys = flat_block_keys(values, n);
    flat_key *src_keys = fm_flat_keys(fd);
    PyObject **src_values = fm_flat_values(fd);
    for (Py_ssize_t i = lo; i < hi; i++, at++) {
        keys[at].hash = src_keys[i].hash;
        keys[at].key = Py_NewRef(src_keys[i].key);
        values[at] = Py_NewRef(src_values[i]);
    }
}

/* A new owner of type tp with the items of the flat version fd but the one
 * at position skip (-1: none), its hash from acc when acc_valid.  New ref
 * or NULL. */
static PyObject *
flat_owner_copy_without(PyTypeObject *tp, fd_object *fd, Py_ssize_t skip, Py_uhash_t acc,
                        int acc_valid)
{
    Py_ssize_t len = fd->len, n = len - (skip >= 0);
    PyObject **values = NULL;
    if (n) {
        values = flat_alloc(n);
        if (values == NULL) {
            return NULL;
        }
        if (skip < 0) {
            flat_copy_items(values, n, 0, fd, 0, len);
        }
        else {
            flat_copy_items(values, n, 0, fd, 0, skip);
            flat_copy_items(values, n, skip, fd, skip + 1, len);
        }
    }
    return flat_version_new(tp, values, NULL, n, acc, acc_valid);
}

/* A version of type tp with the items of the flat version fd and the value
 * of position index replaced by value (index -1: none), sharing fd's keys
 * when it can (flat_share_owner), else in a new owner's block.  New ref or
 * NULL. */
static PyObject *
flat_with_value(fm_state *st, PyTypeObject *tp, fd_object *fd, Py_ssize_t index,
                PyObject *value, Py_uhash_t acc, int acc_valid)
{
    Py_ssize_t n = fd->len;
    if (n == 0) {
        return flat_version_new(tp, NULL, NULL, 0, acc, acc_valid);
    }
    fd_object *owner = flat_share_owner(st, fd);
    PyObject **values;
    if (owner != NULL) {
        values = flat_copy_values(fd);
    }
    else {
        values = flat_alloc(n);
        if (values != NULL) {
            flat_copy_items(values, n, 0, fd, 0, n);
        }
    }
    if (values == NULL) {
        Py_XDECREF(owner);
        return NULL;
    }
    if (index >= 0) {
        Py_SETREF(values[index], Py_NewRef(value)); /* fd still holds the old */
    }
    return flat_version_new(tp, values, owner, n, acc, acc_valid);
}

PyObject *
flat_version_copy(PyTypeObject *tp, fd_object *fd)
{
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(fd, &acc);
    return flat_with_value(fm_state_of_type(tp), tp, fd, -1, NULL, acc, acc_valid);
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
    if (n) {
        assert(n <= FLAT_MAX);
        block = flat_alloc(n);
        if (block == NULL) {
            return NULL;
        }
        flat_key *keys = flat_block_keys(block, n);
        for (Py_ssize_t i = 0; i < n; i++) {
            keys[i].hash = entries[i].hash;
            keys[i].key = Py_NewRef(entries[i].key);
            block[i] = Py_NewRef(values != NULL ? values[i] : entries[i].value);
        }
    }
    return flat_version_new(tp, block, NULL, n, acc, acc_valid);
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
        return flat_with_value(st, st->frozendict_type, fd, index, value, acc, acc_valid);
    }
    if (hashing_acc_replace(&acc, &acc_valid, h, NULL, value) < 0) {
        return NULL;
    }
    if (n < FLAT_MAX) {
        PyObject **values = flat_alloc(n + 1);
        if (values == NULL) {
            return NULL;
        }
        flat_copy_items(values, n + 1, 0, fd, 0, n);
        flat_key *keys = flat_block_keys(values, n + 1);
        keys[n].hash = h;
        keys[n].key = Py_NewRef(key);
        values[n] = Py_NewRef(value);
        return flat_version_new(st->frozendict_type, values, NULL, n + 1, acc, acc_valid);
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
    return flat_owner_copy_without(st->frozendict_type, fd, index, acc, acc_valid);
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
    if ((fd->len == 0) != (fd->values == NULL)) {
        PyErr_SetString(PyExc_AssertionError, "flat entries do not match the length");
        return NULL;
    }
    fd_object *owner = fd->owner;
    if (owner != NULL
        && (fd->len == 0 || owner->owner != NULL || owner->len != fd->len
            || !fm_is_flat(owner))) {
        PyErr_SetString(PyExc_AssertionError, "a flat version sharing keys it cannot");
        return NULL;
    }
    Py_hash_t h = FM_LOAD_HASH(fd->hash);
    Py_uhash_t acc;
    if (h != -1 && hashing_unfinalize(h, fd->len, &acc)
        && hashing_finalize(acc, fd->len) != h) {
        PyErr_SetString(PyExc_AssertionError, "cached hash has no accumulator behind it");
        return NULL;
    }
    flat_key *keys = fm_flat_keys(fd);
    for (Py_ssize_t i = 0; i < fd->len; i++) {
        for (Py_ssize_t j = 0; j < i; j++) {
            if (keys[i].key == keys[j].key) {
                PyErr_SetString(PyExc_AssertionError, "a key twice in a flat version");
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
        /* Read again each time: the reprs run user code (fd, which holds its
         * owner, is held by the caller). */
        flat_key *keys = fm_flat_keys(fd);
        char buf[32];
        PyOS_snprintf(buf, sizeof(buf), "%llu", (unsigned long long)keys[i].hash);
        PyObject *line =
            PyUnicode_FromFormat("\n  (%s, %R, %R)", buf, keys[i].key, fm_flat_values(fd)[i]);
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
    PyObject **values = flat_alloc(n);
    if (values == NULL) {
        return NULL;
    }
    flat_key *keys = flat_block_keys(values, n);
    Py_ssize_t got = 0, pos = 0;
    PyObject *k, *v;
    while (got < n && PyDict_Next(dict, &pos, &k, &v)) {
        keys[got].hash = 0;
        keys[got].key = Py_NewRef(k);
        values[got] = Py_NewRef(v);
        got++;
    }
    if (got != n) {
        PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (hashing_key_hash_fast(keys[i].key, &keys[i].hash) < 0) {
            goto fail;
        }
    }
    return flat_version_new(tp, values, NULL, n, 0, 0);
fail:
    flat_release_partial(values, n, got);
    return NULL;
}

PyObject *
flat_from_kwnames(PyTypeObject *tp, PyObject *const *kwvalues, PyObject *kwnames)
{
    Py_ssize_t n = PyTuple_GET_SIZE(kwnames), count = 0;
    assert(n > 0 && n <= FLAT_MAX);
    PyObject **values = flat_alloc(n);
    if (values == NULL) {
        return NULL;
    }
    flat_key *keys = flat_block_keys(values, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        Py_uhash_t h;
        if (hashing_key_hash_fast(name, &h) < 0) { /* a str: no user code */
            flat_release_partial(values, n, count);
            return NULL;
        }
        Py_ssize_t j = 0;
        while (j < count
               && !(keys[j].hash == h
                    && (keys[j].key == name || PyUnicode_Compare(keys[j].key, name) == 0))) {
            j++;
        }
        if (j < count) { /* a name given twice (only from C): the last value wins */
            Py_SETREF(values[j], Py_NewRef(kwvalues[i]));
            continue;
        }
        keys[count].hash = h;
        keys[count].key = Py_NewRef(name);
        values[count] = Py_NewRef(kwvalues[i]);
        count++;
    }
    if (count < n) { /* a name given twice: the block holds fewer items */
        PyObject **fitted = flat_alloc(count);
        if (fitted == NULL) {
            flat_release_partial(values, n, count);
            return NULL;
        }
        memcpy(fitted, values, (size_t)count * sizeof(PyObject *));
        memcpy(flat_block_keys(fitted, count), keys, (size_t)count * sizeof(flat_key));
        PyMem_Free(values);
        values = fitted;
    }
    return flat_version_new(tp, values, NULL, count, 0, 0);
}

/* --- a transient in flat mode ------------------------------------------- */

/* Whether t may edit its flat version in place: an exact frozendict that t
 * holds the only reference to (no sharer, published copy, reader, iterator
 * or Evolver's cache holds it; frozendicts take no weak references), an
 * owner when keys change (values_only 0), or a sharer, whose values are its
 * own, when only values do.  The free-threaded build always copies:
 * another thread's references may be counted on its side only. */
static int
flat_t_editable(fm_state *st, transient *t, int values_only)
{
#if FM_FREE_THREADED
    return 0;
#else
    fd_object *fd = t->flat;
    return Py_REFCNT((PyObject *)fd) == 1 && (fd->owner == NULL || values_only)
           && Py_IS_TYPE((PyObject *)fd, st->frozendict_type);
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
flat_owner_copy(PyTypeObject *tp, fd_object *fd, Py_uhash_t acc, int acc_valid)
{
    return flat_owner_copy_without(tp, fd, -1, acc, acc_valid);
}

int
flat_t_own(fm_state *st, transient *t, int values_only, fd_object **replaced)
{
    *replaced = NULL;
    if (flat_t_editable(st, t, values_only)) {
        return 0;
    }
    fd_object *fd = t->flat;
    PyObject *copy = NULL;
    fd_object *owner = values_only && !t->shared && fd->len ? flat_share_owner(st, fd) : NULL;
    if (owner != NULL) {
        /* Only values change: a sharer of fd's keys (as a set makes). */
        PyObject **values = flat_copy_values(fd);
        copy = values != NULL
                   ? flat_version_new(st->frozendict_type, values, owner, fd->len, 0, 0)
                   : NULL;
        if (values == NULL) {
            Py_DECREF(owner);
        }
    }
    else {
        copy = flat_owner_copy(st->frozendict_type, fd, 0, 0);
    }
    if (copy == NULL) {
        return -1;
    }
    if (t->shared) {
        /* An Evolver's items: private to it, so out of the GC's reach (the
         * Evolver's traverse visits them), and never cleared apart from it
         * (transient_traverse).  Always an owner: a sharer's keys would be
         * another version's, which a tp_clear could empty. */
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
    PyObject **values =
        PyMem_Realloc(fd->values, (size_t)(n + 1) * (sizeof(PyObject *) + sizeof(flat_key)));
    if (values == NULL) {
        PyErr_NoMemory();
        return -1; /* the block is as it was */
    }
    /* The keys follow the values: move them up by one value's slot. */
    memmove(values + n + 1, values + n, (size_t)n * sizeof(flat_key));
    values[n] = Py_NewRef(value);
    flat_key *keys = flat_block_keys(values, n + 1);
    keys[n].hash = h;
    keys[n].key = Py_NewRef(key);
    fd->values = values;
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
    flat_key *keys = flat_block_keys(values, n);
    *old_key = keys[index].key;
    *old_value = values[index];
    /* values[index + 1:n] down one slot, then the keys after them: every
     * move goes down, so each memmove reads what is not yet overwritten. */
    memmove(values + index, values + index + 1, (size_t)(n - 1 - index) * sizeof(PyObject *));
    flat_key *moved = flat_block_keys(values, n - 1);
    memmove(moved, keys, (size_t)index * sizeof(flat_key));
    memmove(moved + index, keys + index + 1, (size_t)(n - 1 - index) * sizeof(flat_key));
    fd->len = n - 1;
    t->len = n - 1;
    FM_STORE_HASH(fd->hash, -1);
    if (n == 1) {
        fd->values = NULL; /* the empty flat version holds no block */
        PyMem_Free(values);
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

PyObject *
flat_t_publish_sharing(fm_state *st, transient *t, fd_object *like)
{
    fd_object *fd = t->flat;
    Py_ssize_t n = fd->len;
    if (like == NULL || like->len != n || n == 0 || !fm_is_flat(like)
        || (like->owner != NULL && like->owner->len != n)) {
        return NULL; /* (the last: an owner cleared through ctypes) */
    }
    flat_key *mine = fm_flat_keys(fd), *theirs = fm_flat_keys(like);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (mine[i].key != theirs[i].key) {
            return NULL;
        }
    }
    fd_object *owner = flat_share_owner(st, like);
    if (owner == NULL) {
        return NULL;
    }
    PyObject **values = flat_copy_values(fd);
    if (values == NULL) {
        Py_DECREF(owner);
        return NULL;
    }
    return flat_version_new(st->frozendict_type, values, owner, n, t->acc, t->acc_valid);
}
