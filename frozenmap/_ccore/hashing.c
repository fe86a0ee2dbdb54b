/* hashing.c -- key hashes, the pair hash and the frozenset-compatible
 * finaliser.  Mirrors frozenmap/_pycore/hashing.py.
 *
 * hash(fd) == hash(frozenset(fd.items())): a frozenset XORs shuffle_bits() of
 * each member's hash and finalises with its size; our members are the pairs,
 * whose hash is CPython's 2-tuple hash (the xxHash-based one of 3.8+),
 * computed here from the key hash stored in the entry so that a key's
 * __hash__ runs only once, when it is inserted or looked up.
 */
#include "cfrozenmap.h"

#if SIZEOF_PY_UHASH_T == 8
#  define XXPRIME_1 ((Py_uhash_t)11400714785074694791ULL)
#  define XXPRIME_2 ((Py_uhash_t)14029467366897019727ULL)
#  define XXPRIME_5 ((Py_uhash_t)2870177450012600261ULL)
#  define XXROTATE(x) ((x << 31) | (x >> 33))
#else
#  define XXPRIME_1 ((Py_uhash_t)2654435761UL)
#  define XXPRIME_2 ((Py_uhash_t)2246822519UL)
#  define XXPRIME_5 ((Py_uhash_t)374761393UL)
#  define XXROTATE(x) ((x << 13) | (x >> 19))
#endif

int
hashing_key_hash(PyObject *key, Py_uhash_t *out)
{
    Py_hash_t h = PyObject_Hash(key);
    if (FM_LIKELY(h != -1)) {
        *out = (Py_uhash_t)h;
        return 0;
    }
    /* Only an exact TypeError is rewritten (as the builtin does), chained
     * "from" the original; subclasses and other exceptions pass through. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type != PyExc_TypeError) {
        PyErr_Restore(type, value, tb);
        return -1;
    }
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL) {
        PyException_SetTraceback(value, tb);
    }
    PyObject *name = fm_type_fullname(Py_TYPE(key));
    if (name == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    PyObject *msg =
        PyUnicode_FromFormat("cannot use '%U' as a frozendict key (%S)", name, value);
    Py_DECREF(name);
    if (msg == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    PyObject *exc = PyObject_CallOneArg(PyExc_TypeError, msg);
    Py_DECREF(msg);
    if (exc == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    if (value != NULL) {
        PyException_SetCause(exc, Py_NewRef(value));
        PyException_SetContext(exc, value); /* steals value */
    }
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyErr_SetObject(PyExc_TypeError, exc);
    Py_DECREF(exc);
    return -1;
}

#define HASHING_PURE_DEPTH 8

static int
hashing_is_pure(PyObject *key, int depth)
{
    hashfunc hash = Py_TYPE(key)->tp_hash;
    if (hash == PyUnicode_Type.tp_hash || hash == PyLong_Type.tp_hash
        || hash == PyFloat_Type.tp_hash || hash == PyComplex_Type.tp_hash
        || hash == PyBytes_Type.tp_hash || hash == PyFrozenSet_Type.tp_hash
        || hash == PyBaseObject_Type.tp_hash || hash == Py_TYPE(Py_None)->tp_hash) {
        return 1;
    }
    if (hash != PyTuple_Type.tp_hash || !PyTuple_Check(key) || depth >= HASHING_PURE_DEPTH) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key); i++) {
        if (!hashing_is_pure(PyTuple_GET_ITEM(key, i), depth + 1)) {
            return 0;
        }
    }
    return 1;
}

int
hashing_key_is_pure(PyObject *key)
{
    return hashing_is_pure(key, 0);
}

int
hashing_pure_key_hash(PyObject *key, Py_uhash_t *out)
{
    if (!hashing_is_pure(key, 0)) {
        return 0;
    }
    Py_hash_t h = PyObject_Hash(key);
    if (h == -1) { /* cannot happen for these types; be safe */
        PyErr_Clear();
        return 0;
    }
    *out = (Py_uhash_t)h;
    return 1;
}

int
hashing_pair_hash(Py_uhash_t khash, PyObject *value, Py_uhash_t *out)
{
    Py_hash_t vh = PyObject_Hash(value);
    if (vh == -1) {
        return -1;
    }
    Py_uhash_t lanes[2] = {khash, (Py_uhash_t)vh};
    Py_uhash_t acc = XXPRIME_5;
    for (int i = 0; i < 2; i++) {
        acc += lanes[i] * XXPRIME_2;
        acc = XXROTATE(acc);
        acc *= XXPRIME_1;
    }
    acc += 2 ^ (XXPRIME_5 ^ 3527539UL);
    if (acc == (Py_uhash_t)-1) {
        acc = 1546275796;
    }
    *out = acc;
    return 0;
}

Py_uhash_t
hashing_shuffle_bits(Py_uhash_t h)
{
    return ((h ^ 89869747UL) ^ (h << 16)) * 3644798167UL;
}

Py_hash_t
hashing_finalize(Py_uhash_t acc, Py_ssize_t length)
{
    Py_uhash_t h = acc ^ (((Py_uhash_t)length + 1) * 1927868237UL);
    h ^= (h >> 11) ^ (h >> 25);
    h = h * 69069U + 907133923UL;
    if (h == (Py_uhash_t)-1) {
        h = 590923713UL;
    }
    return (Py_hash_t)h;
}

/* The inverse of hashing_finalize: each of its steps is a bijection on
 * Py_uhash_t (an XOR with a constant, x ^ (x >> 11) ^ (x >> 25), an affine
 * map with an odd multiplier) except the final -1 -> 590923713 remap. */
int
hashing_unfinalize(Py_hash_t hash, Py_ssize_t length, Py_uhash_t *acc)
{
    Py_uhash_t h = (Py_uhash_t)hash;
    if (h == 590923713UL || h == (Py_uhash_t)-1) {
        return 0; /* 590923713 also stands for -1: two preimages */
    }
    /* 69069^-1 modulo 2**bits by Newton's iteration (each step doubles the
     * correct low bits; an odd a is its own inverse modulo 8). */
    Py_uhash_t inv = 69069U;
    for (int i = 0; i < 6; i++) {
        inv *= 2 - 69069U * inv;
    }
    Py_uhash_t x = (h - 907133923UL) * inv;
    /* y = x ^ (x >> 11) ^ (x >> 25): the top 11 bits of x are those of y,
     * and each pass below fixes 11 more. */
    Py_uhash_t y = x;
    for (int i = 0; i < (int)(8 * sizeof(Py_uhash_t)) / 11 + 1; i++) {
        x = y ^ (x >> 11) ^ (x >> 25);
    }
    *acc = x ^ (((Py_uhash_t)length + 1) * 1927868237UL);
    return 1;
}

int
hashing_check_cached(Py_hash_t hash, Py_ssize_t length)
{
    Py_uhash_t acc;
    if (hash != -1 && hashing_unfinalize(hash, length, &acc)
        && hashing_finalize(acc, length) != hash) {
        PyErr_SetString(PyExc_AssertionError, "cached hash has no accumulator behind it");
        return -1;
    }
    return 0;
}

/* Whether hash(value) is certainly what it was when value was stored: a
 * hash that runs no Python code, or a frozendict's cached hash (a version's
 * hash never changes once known; a subclass that does not override __hash__
 * included).  A __hash__ written in Python may hash a mutable object's state,
 * so its answer is never trusted twice. */
static int
hashing_is_stable(PyObject *value)
{
    if (Py_TYPE(value)->tp_hash == fd_tp_hash) {
        return FM_LOAD_HASH(fm_as_fd(value)->hash) != -1;
    }
    return hashing_is_pure(value, 0);
}

/* What went into an accumulator is not stored (8 bytes per item), so the pair
 * leaving is hashed again: only a stable value's hash is XORed out.  Any other
 * old value makes the accumulator unknown, and the new version's hash() walks
 * its items once (PEP 814: hash(fd) == hash(frozenset(fd.items())) even after
 * a value's hash changed).  The usual values -- str, int, float, tuples of
 * those, nested frozendicts -- keep hash() of a derived version O(1). */
int
hashing_acc_replace(Py_uhash_t *acc, int *valid, Py_uhash_t khash, PyObject *old_value,
                    PyObject *new_value)
{
    if (!*valid) {
        return 0;
    }
    if (old_value != NULL && !hashing_is_stable(old_value)) {
        *valid = 0;
        return 0;
    }
    Py_uhash_t a = *acc, ph;
    if (old_value != NULL) {
        if (hashing_pair_hash(khash, old_value, &ph) < 0) {
            goto error;
        }
        a ^= hashing_shuffle_bits(ph);
    }
    if (new_value != NULL) {
        if (hashing_pair_hash(khash, new_value, &ph) < 0) {
            goto error;
        }
        a ^= hashing_shuffle_bits(ph);
    }
    *acc = a;
    return 0;
error:
    /* docs/spec.md §4: memory exhaustion reaches the caller, like KeyboardInterrupt. */
    if (PyErr_ExceptionMatches(PyExc_Exception)
        && !PyErr_ExceptionMatches(PyExc_MemoryError)) {
        PyErr_Clear();
        *valid = 0;
        return 0;
    }
    return -1;
}
