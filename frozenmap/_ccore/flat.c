/* flat.c -- small versions as one flat array (mirrors
 * frozenmap/_pycore/flat.py function by function).
 *
 * A version of at most FLAT_MAX items holds no tries: one PyMem block of
 * (hash, key, value) entries in insertion order, which own their key and
 * value.  A lookup scans the stored hashes in order and, on an equal hash,
 * tries identity, then the stored key's __eq__ (held across the call, as
 * champ_keys_equal does): one __eq__ per entry with an equal hash, the same
 * calls a trie's bitmap node makes.  A version is flat exactly when its
 * length is at most FLAT_MAX (fm_is_flat): a set that makes the ninth item
 * promotes (both tries built bottom-up from the entries, seqs 0..k-1 in
 * order), a delete that leaves FLAT_MAX demotes.  Seqs are never
 * observable, so the renumbering is invisible.  See "10. Small maps: the flat form" in the
 * essay at the top of frozendict.c.
 */
#include "cfrozenmap.h"

/* A block for n entries (n > 0), or NULL with MemoryError. */
static flat_entry *
flat_alloc(Py_ssize_t n)
{
    flat_entry *entries = PyMem_Malloc((size_t)n * sizeof(flat_entry));
    if (entries == NULL) {
        PyErr_NoMemory();
    }
    return entries;
}

void
flat_release(flat_entry *entries, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_DECREF(entries[i].key);
        Py_DECREF(entries[i].value);
    }
    PyMem_Free(entries);
}

PyObject *
flat_version_new(PyTypeObject *tp, flat_entry *entries, Py_ssize_t n, Py_uhash_t acc,
                 int acc_valid)
{
    fd_object *self = (fd_object *)tp->tp_alloc(tp, 0);
    if (self == NULL) {
        if (entries != NULL) {
            flat_release(entries, n);
        }
        return NULL;
    }
    /* tp_alloc zeroed it: length 0, no entries, the empty flat version. */
    self->flat = entries;
    self->order = NULL;
    self->next_seq = 0;
    self->hash = acc_valid ? hashing_finalize(acc, n) : -1;
    self->len = n;
    return (PyObject *)self;
}

/* Copy src[0:n] into dst, taking new references. */
static void
flat_copy_refs(flat_entry *dst, const flat_entry *src, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        dst[i] = src[i];
        Py_INCREF(dst[i].key);
        Py_INCREF(dst[i].value);
    }
}

/* A copy of entries[0:n] with new references, or NULL (n == 0, or an
 * error: told apart by n). */
static flat_entry *
flat_copy_entries(const flat_entry *src, Py_ssize_t n)
{
    if (n == 0) {
        return NULL;
    }
    flat_entry *entries = flat_alloc(n);
    if (entries != NULL) {
        flat_copy_refs(entries, src, n);
    }
    return entries;
}

PyObject *
flat_version_copy(PyTypeObject *tp, fd_object *fd)
{
    Py_ssize_t n = fd->len;
    flat_entry *entries = flat_copy_entries(fd->flat, n);
    if (entries == NULL && n) {
        return NULL;
    }
    Py_uhash_t acc = 0;
    int acc_valid = fm_version_acc(fd, &acc);
    return flat_version_new(tp, entries, n, acc, acc_valid);
}

fm_lookup
flat_scan(fd_object *fd, Py_uhash_t h, PyObject *key, Py_ssize_t *index)
{
    /* The caller holds fd, whose entries never change (tp_clear only runs
     * on unreachable objects), so they stay valid across __eq__. */
    flat_entry *entries = fd->flat;
    Py_ssize_t n = fd->len;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (entries[i].hash != h) {
            continue;
        }
        int r = champ_keys_equal(entries[i].key, key);
        if (r != 0) {
            if (r < 0) {
                return FM_ERROR;
            }
            *index = i;
            return FM_FOUND;
        }
    }
    return FM_MISSING;
}

typedef struct {
    champ_entry *out;
    Py_ssize_t count;
} flat_collect_state;

static int
flat_collect_entry(champ_entry *e, void *arg)
{
    flat_collect_state *cs = arg;
    if (cs->count == FLAT_MAX) {
        return 1; /* more than a flat version holds */
    }
    cs->out[cs->count++] = *e;
    return 0;
}

/* The entries of the key trie root (at most FLAT_MAX) into out, sorted by
 * seq: their count, or -1 (AssertionError) when there are more. */
static Py_ssize_t
flat_collect(champ_node *root, champ_entry *out)
{
    flat_collect_state cs = {out, 0};
    if (champ_foreach(root, flat_collect_entry, &cs) != 0) {
        PyErr_SetString(PyExc_AssertionError, "more than FLAT_MAX entries to demote");
        return -1;
    }
    qsort(out, (size_t)cs.count, sizeof(champ_entry), transient_compare_seq);
    return cs.count;
}

PyObject *
flat_demote(PyTypeObject *tp, champ_node *root, Py_ssize_t len, Py_uhash_t acc, int acc_valid)
{
    champ_entry found[FLAT_MAX];
    Py_ssize_t n = flat_collect(root, found);
    if (n < 0) {
        return NULL;
    }
    assert(n == len);
    flat_entry *entries = NULL;
    if (n) {
        entries = flat_alloc(n);
        if (entries == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            entries[i].hash = found[i].hash;
            entries[i].key = Py_NewRef(found[i].key);
            entries[i].value = Py_NewRef(found[i].value);
        }
    }
    return flat_version_new(tp, entries, n, acc, acc_valid);
}

/* Start t with the tries of src[0:n] and then extra (NULL for none), seqs
 * 0.. in that order, built bottom-up as the constructor's bulk load builds
 * them (the keys are distinct: no lookups, no user code).  The caller holds
 * the objects.  0 or -1 (t then released). */
static int
flat_build_tries(fm_state *st, transient *t, const flat_entry *src, Py_ssize_t n,
                 const flat_entry *extra, Py_uhash_t acc, int acc_valid)
{
    if (transient_init(st, t, NULL, NULL, 0, 0, acc, acc_valid) < 0) {
        return -1;
    }
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
    for (Py_ssize_t i = 0; i < total; i++) {
        const flat_entry *e = i < n ? &src[i] : extra;
        entries[i] =
            (champ_entry){e->hash, (uint64_t)i, Py_NewRef(e->key), Py_NewRef(e->value)};
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
    return flat_build_tries(st, t, fd->flat, fd->len, NULL, acc, acc_valid);
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
    flat_entry *src = fd->flat;
    Py_ssize_t n = fd->len;
    if (r == FM_FOUND) {
        if (src[index].value == value) {
            return transient_version_exact(st, op);
        }
        if (hashing_acc_replace(&acc, &acc_valid, h, src[index].value, value) < 0) {
            return NULL;
        }
        flat_entry *entries = flat_copy_entries(src, n);
        if (entries == NULL) {
            return NULL;
        }
        Py_SETREF(entries[index].value, Py_NewRef(value)); /* op still holds the old */
        return flat_version_new(st->frozendict_type, entries, n, acc, acc_valid);
    }
    if (hashing_acc_replace(&acc, &acc_valid, h, NULL, value) < 0) {
        return NULL;
    }
    if (n < FLAT_MAX) {
        flat_entry *entries = flat_alloc(n + 1);
        if (entries == NULL) {
            return NULL;
        }
        flat_copy_refs(entries, src, n);
        entries[n].hash = h;
        entries[n].key = Py_NewRef(key);
        entries[n].value = Py_NewRef(value);
        return flat_version_new(st->frozendict_type, entries, n + 1, acc, acc_valid);
    }
    /* The ninth item: promote. */
    transient t;
    flat_entry extra = {h, key, value};
    if (flat_build_tries(st, &t, src, n, &extra, acc, acc_valid) < 0) {
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
    flat_entry *src = fd->flat;
    if (hashing_acc_replace(&acc, &acc_valid, src[index].hash, src[index].value, NULL) < 0) {
        return NULL;
    }
    Py_ssize_t n = fd->len - 1;
    flat_entry *entries = NULL;
    if (n) {
        entries = flat_alloc(n);
        if (entries == NULL) {
            return NULL;
        }
        flat_copy_refs(entries, src, index);
        flat_copy_refs(entries + index, src + index + 1, n - index);
    }
    return flat_version_new(st->frozendict_type, entries, n, acc, acc_valid);
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
    for (Py_ssize_t i = 0; i < n; i++) {
        items[i].hash = fd->flat[i].hash;
        items[i].seq = (uint64_t)i;
        items[i].key = Py_NewRef(fd->flat[i].key);
        items[i].value = Py_NewRef(fd->flat[i].value);
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
    flat_collect_state cs = {found, 0};
    if (champ_foreach(root, flat_collect_entry, &cs) != 0 || cs.count != len) {
        return 0;
    }
    qsort(found, (size_t)cs.count, sizeof(champ_entry), transient_compare_seq);
    for (Py_ssize_t i = 0; i < len; i++) {
        if (found[i].key != fd->flat[i].key || found[i].value != fd->flat[i].value) {
            return 0;
        }
    }
    return 1;
}

PyObject *
flat_check(fd_object *fd)
{
    if (!fm_is_flat(fd) || fd->order != NULL || fd->next_seq != 0) {
        PyErr_SetString(PyExc_AssertionError, "a flat version with tries");
        return NULL;
    }
    if ((fd->len == 0) != (fd->flat == NULL)) {
        PyErr_SetString(PyExc_AssertionError, "flat entries do not match the length");
        return NULL;
    }
    Py_hash_t h = FM_LOAD_HASH(fd->hash);
    Py_uhash_t acc;
    if (h != -1 && hashing_unfinalize(h, fd->len, &acc)
        && hashing_finalize(acc, fd->len) != h) {
        PyErr_SetString(PyExc_AssertionError, "cached hash has no accumulator behind it");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < fd->len; i++) {
        for (Py_ssize_t j = 0; j < i; j++) {
            if (fd->flat[i].key == fd->flat[j].key) {
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
        char buf[32];
        PyOS_snprintf(buf, sizeof(buf), "%llu", (unsigned long long)fd->flat[i].hash);
        /* Held: the reprs run user code (fd is held by the caller). */
        PyObject *line =
            PyUnicode_FromFormat("\n  (%s, %R, %R)", buf, fd->flat[i].key, fd->flat[i].value);
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
        return flat_version_new(tp, NULL, 0, 0, 0);
    }
    assert(n <= FLAT_MAX);
    flat_entry *entries = flat_alloc(n);
    if (entries == NULL) {
        return NULL;
    }
    Py_ssize_t got = 0, pos = 0;
    PyObject *k, *v;
    while (got < n && PyDict_Next(dict, &pos, &k, &v)) {
        entries[got].key = Py_NewRef(k);
        entries[got].value = Py_NewRef(v);
        got++;
    }
    if (got != n) {
        PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (hashing_key_hash_fast(entries[i].key, &entries[i].hash) < 0) {
            goto fail;
        }
    }
    return flat_version_new(tp, entries, n, 0, 0);
fail:
    flat_release(entries, got);
    return NULL;
}

PyObject *
flat_from_kwnames(PyTypeObject *tp, PyObject *const *kwvalues, PyObject *kwnames)
{
    Py_ssize_t n = PyTuple_GET_SIZE(kwnames), count = 0;
    assert(n > 0 && n <= FLAT_MAX);
    flat_entry *entries = flat_alloc(n);
    if (entries == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        Py_uhash_t h;
        if (hashing_key_hash_fast(name, &h) < 0) { /* a str: no user code */
            flat_release(entries, count);
            return NULL;
        }
        Py_ssize_t j = 0;
        while (j < count
               && !(entries[j].hash == h
                    && (entries[j].key == name
                        || PyUnicode_Compare(entries[j].key, name) == 0))) {
            j++;
        }
        if (j < count) { /* a name given twice (only from C): the last value wins */
            Py_SETREF(entries[j].value, Py_NewRef(kwvalues[i]));
            continue;
        }
        entries[count].hash = h;
        entries[count].key = Py_NewRef(name);
        entries[count].value = Py_NewRef(kwvalues[i]);
        count++;
    }
    return flat_version_new(tp, entries, count, 0, 0);
}
