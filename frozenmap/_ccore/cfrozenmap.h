/* cfrozenmap.h -- what the files of the C core share.
 *
 * The essay explaining the algorithm is at the top of frozendict.c.  This
 * header declares the node and object layouts, the module state and every
 * function used by more than one file, each with its contract (a function
 * used by one file is static there, its contract beside it).  Result
 * conventions, as in hamt.c:
 *
 *   int functions:      -1 error (exception set), 0 "no"/"absent", 1 "yes"/"found"
 *                       (the lookup/removal family names them: fm_lookup)
 *   pointer functions:  NULL with an exception set on error, unless the
 *                       contract says NULL is also a normal answer (then an
 *                       error is told apart with PyErr_Occurred()).
 *   "new ref" / "borrowed" say who owns a returned object reference.
 *
 * Naming: <layer>_<kind>_<op>; a function CPython calls through a type slot
 * is <layer>_tp_<slot> (fd_tp_hash, evolver_tp_traverse), one behind a
 * Python method or attribute <layer>_py_<name> (fd_py_get,
 * evolver_py_update).  Layers: champ_* (key trie, keytrie.c), order_* (order
 * trie, ordertrie.c), hashing_* (hashing.c), flat_* (flat.c),
 * transient_* (transient.c), derive_* (derive.c), mapping_* and
 * position_* (reads.c), merge_*
 * (merge.c), fd_* (frozendict.c), evolver_* (evolver.c), view_* (views.c),
 * path_* (paths.c), fm_* (module.c and the shared inline helpers).  The
 * pure-Python core uses the same names (the files of frozenmap/_pycore) so
 * a bug found in one core points to the same function in the other: by
 * the rule in CONTRIBUTING.md ("The pure core carries the C names"), which
 * tests/test_mirror_names.py holds function by function.
 *
 * Layers (docs/how-it-works.md; tests/test_layers.py checks them): hashing,
 * keytrie and ordertrie at the bottom; flat.c beside them; transient.c
 * above (the builder, versions made from roots); derive.c above it (the
 * one-key derivations of a version: set, delete, discard) and reads.c
 * beside it (the reads both types share: ==, repr, lookups, positions);
 * merge.c (the one merge), views.c (views, iterators) and paths.c (get_in
 * & co., deriving through derive_with/_without) above them; then
 * frozendict.c and evolver.c, the two types, which call down and never into
 * each other (evolve() calls the Evolver type from the module state).
 * module.c registers the types.
 */
#ifndef FROZENMAP_CFROZENMAP_H
#define FROZENMAP_CFROZENMAP_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030A0000
#  error "frozenmap's C core needs CPython 3.10 or later"
#endif

#ifdef Py_GIL_DISABLED
#  define FM_FREE_THREADED 1
#else
#  define FM_FREE_THREADED 0
#endif

static inline int
fm_popcount32_portable(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (int)((((x + (x >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
}

#if defined(__GNUC__) || defined(__clang__)
/* Without -mpopcnt (the default x86-64 baseline) __builtin_popcount is a
 * call into libgcc's table-driven __popcountdi2, which profiles showed as 5%
 * of a delete; the inline bit trick is a handful of ALU instructions. */
#  if defined(__POPCNT__) || defined(__aarch64__)
#    define FM_POPCOUNT32(x) __builtin_popcount((unsigned int)(x))
#  else
#    define FM_POPCOUNT32(x) fm_popcount32_portable((uint32_t)(x))
#  endif
#  define FM_CLZ64(x) __builtin_clzll((unsigned long long)(x))
#  define FM_CTZ32(x) __builtin_ctz((unsigned int)(x))
/* C-only: on x86-64 Linux with GCC the hot trie functions are also compiled
 * for CPUs with the popcnt instruction and picked at load time (an ifunc);
 * GCC turns fm_popcount32_portable into that instruction there.  Lookups
 * run ~20% fewer instructions. */
#  if !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(__POPCNT__)
#    define FM_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#  endif
#  define FM_LIKELY(x) __builtin_expect(!!(x), 1)
#  define FM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
static inline int
fm_clz64_portable(uint64_t x)
{
    int n = 0;
    while (!(x & 0x8000000000000000ull)) {
        x <<= 1;
        n++;
    }
    return n;
}
#  define FM_POPCOUNT32(x) fm_popcount32_portable((uint32_t)(x))
#  define FM_CLZ64(x) fm_clz64_portable((uint64_t)(x))
#  define FM_CTZ32(x) FM_POPCOUNT32(((uint32_t)(x) & (0u - (uint32_t)(x))) - 1)
#  define FM_LIKELY(x) (x)
#  define FM_UNLIKELY(x) (x)
#endif

#ifndef FM_POPCNT_CLONES
#  define FM_POPCNT_CLONES
#endif

/* Unroll the loops that take or drop a reference on each child or item of
 * a node being copied or freed (a derivation runs ~170 of them): the loop's
 * own counter, compare and branch were a third of their instructions. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#  define FM_UNROLL4 _Pragma("GCC unroll 4")
#elif defined(__clang__)
#  define FM_UNROLL4 _Pragma("unroll 4")
#else
#  define FM_UNROLL4
#endif
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#  define FM_UNROLL8 _Pragma("GCC unroll 8")
#elif defined(__clang__)
#  define FM_UNROLL8 _Pragma("unroll 8")
#else
#  define FM_UNROLL8
#endif

/* ------------------------------------------------------------------------ */
/* Module state                                                               */

/* The order trie's widths (ordertrie.c), here because the module state's
 * free lists of its nodes are sized by them.
 *
 * Leaves hold 8 items (a 3-bit digit of seq); inner nodes have 16 children
 * (4-bit digits at shifts 3, 7, ..., 63), as in the pure core
 * (was 16 and 8).  A derivation copies one leaf and the
 * inner nodes above it; at n = 100,000 this layout copies 16 + 4 x 16
 * pointers instead of 32 + 5 x 8 and one node fewer, and frees as much:
 * 5-11% fewer instructions for set and delete, for ~3.5 more bytes per item
 * (docs/design-decisions.md, "The C core's speed work"). */
#define ORDER_LEAF_BITS 3
#define ORDER_INNER_BITS 4
/* The top inner node's shift: inner digits start at ORDER_LEAF_BITS, one
 * every ORDER_INNER_BITS, below 64.  The shifts are 0, 3, 7, ..., 63. */
#define ORDER_MAX_SHIFT \
  (ORDER_LEAF_BITS + (63 - ORDER_LEAF_BITS) / ORDER_INNER_BITS * ORDER_INNER_BITS)
/* Levels from a leaf to the top (17): the iteration and edit stacks' size. */
#define ORDER_MAX_DEPTH (2 + (ORDER_MAX_SHIFT - ORDER_LEAF_BITS) / ORDER_INNER_BITS)

/* Free lists of order-trie nodes, one per node size in pointer units
 * (order_alloc_units: two per item of a leaf; one per child of an inner
 * node, and one for its size), each at most ORDER_FREE_MAX long (see
 * ordertrie.c).  None in free-threaded builds. */
#define ORDER_LEAF_UNITS (2 << ORDER_LEAF_BITS)
#define ORDER_INNER_UNITS ((1 << ORDER_INNER_BITS) + 1)
#define ORDER_FREE_SIZES \
  (1 + (ORDER_LEAF_UNITS > ORDER_INNER_UNITS ? ORDER_LEAF_UNITS : ORDER_INNER_UNITS))
#define ORDER_FREE_MAX 8

typedef struct order_node order_node;

typedef struct {
    PyTypeObject *frozendict_type;
    PyTypeObject *evolver_type;
    PyTypeObject *order_type; /* order trie: order_node */
    PyTypeObject *keys_type;  /* views */
    PyTypeObject *values_type;
    PyTypeObject *items_type;
    PyTypeObject *iter_type;   /* one iterator type for every kind */
    PyObject *diff_type;       /* frozenmap._diff.Diff */
    PyObject *restore;         /* frozenmap._common.restore (the pickles' name) */
    PyObject *restore_evolver; /* frozenmap._common.restore_evolver */
    PyObject *registry;        /* the frozenmap._registry module (types loaded) */
    PyObject *view_set_ops;    /* frozenmap._viewsets.ViewSetOps (the views' set ops) */
    PyObject *builtin_iter;    /* builtins.iter (iterator pickles) */
    PyObject *str_keys;        /* interned "keys" */
    PyObject *str_items;       /* interned "items" */
    /* drafts.c: the C bases of frozenmap.drafts' _Scope, DictDraft and
     * ListDraft, and what frozenmap.drafts registered with them. */
    PyTypeObject *draft_scope_type;
    PyTypeObject *dict_draft_type;
    PyTypeObject *list_draft_type;
    PyObject *drafts;
#if !FM_FREE_THREADED
    order_node *order_free[ORDER_FREE_SIZES]; /* chained through slots[0] */
    int order_nfree[ORDER_FREE_SIZES];
#endif
} fm_state;

extern PyModuleDef fm_module_def;

/* module.attr (e.g. copy.deepcopy) as a new ref, or NULL. */
PyObject *fm_import_attr(const char *module, const char *name);
/* The module state for one of our types or a subclass of one.  Never fails
 * for those types. */
fm_state *fm_state_of_type(PyTypeObject *tp);
/* The same for any type: NULL (no error set) when tp is not ours. */
fm_state *fm_find_state(PyTypeObject *tp);

/* Raise KeyError(key), with key as its only argument (a tuple too). */
void fm_set_key_error(PyObject *key);

/* What a type really is, whatever its metaclass says (module.c).  A
 * metaclass can make __name__, __qualname__, __module__ and __mro__ return
 * anything, so the C core never asks the type object for them by attribute:
 * these read its fields, as CPython's own machinery does (frozenmap/_typeinfo.py,
 * for the Python code of both cores, reads the same fields through type's
 * own descriptors). */
/* The part of tp_name after its last dot: a static type's __name__ (no
 * attribute lookup, so a metaclass cannot make it anything but text). */
const char *fm_tp_name_tail(PyTypeObject *tp);
/* getattr(obj, name, None) as Python spells it (only AttributeError means
 * none): 1 and *out (new ref), 0 and *out NULL, or -1. */
int fm_getattr_optional(PyObject *obj, PyObject *name, PyObject **out);
/* The fully qualified name as %T prints it ("module.Qualname", just
 * "Qualname" for builtins, __main__, or a type whose own __module__ is
 * missing or not a str).  New ref or NULL. */
PyObject *fm_type_fullname(PyTypeObject *tp);
/* _PyType_Lookup: name in the dicts of tp's MRO.  Borrowed, or NULL with no
 * error set when absent (NULL with an error only if interning name fails). */
PyObject *fm_type_lookup(PyTypeObject *tp, const char *name);
/* _PyObject_LookupSpecial: the special method name of obj's type, bound to
 * obj.  New ref, or NULL: absent when no error is set. */
PyObject *fm_lookup_special(PyObject *obj, const char *name);
/* Whether tp is a subtype of base by its real MRO (PyType_IsSubtype). */
static inline int
fm_is_subtype(PyTypeObject *tp, PyObject *base)
{
    return PyType_Check(base) && PyType_IsSubtype(tp, (PyTypeObject *)base);
}

/* Wrong calls.  A method frozendict shares with PEP 814's builtin (the
 * constructor, get, fromkeys, copy, keys, values, items, __reversed__,
 * __class_getitem__, __getnewargs__, __reduce__, __reduce_ex__) words a
 * wrong call as the builtin does: fm_check_nargs, or CPython's own checks
 * of METH_NOARGS, METH_O and METH_FASTCALL.  Every other method (the
 * Evolver's, the views' and iterators' too) words it as Python words a
 * wrong call of its pure core twin, a Python function: it takes
 * METH_FASTCALL | METH_KEYWORDS, tests fm_positional_call on its hot path,
 * and hands anything else to fm_wrong_call (frozenmap._cold.wrong_call),
 * which calls a Python function with the method's __text_signature__
 * (generated from the pure twin's, docstrings.h) and qualified name, so the
 * message is Python's by construction (tests/test_wrong_calls.py compares
 * the cores). */

/* Whether a METH_FASTCALL | METH_KEYWORDS method got between min and max
 * positional arguments and no keyword: the one test on its hot path. */
static inline int
fm_positional_call(Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t min, Py_ssize_t max)
{
    return FM_LIKELY(nargs >= min && nargs <= max)
           && FM_LIKELY(kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0);
}
/* The wrong call of the method name of self (the class, for a class
 * method), arguments as METH_FASTCALL | METH_KEYWORDS passes them: NULL with
 * the TypeError Python raises for a Python function of the method's
 * signature (a SystemError if that function accepts the call). */
PyObject *fm_wrong_call(const char *name, PyObject *self, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames);
/* The same for METH_VARARGS | METH_KEYWORDS: args a tuple, kwargs a dict or
 * NULL. */
PyObject *fm_wrong_call_tuple(const char *name, PyObject *self, PyObject *args,
                              PyObject *kwargs);

/* Whether a METH_FASTCALL method called name got between min and max
 * positional arguments: 0, or -1 with CPython's TypeError ("get expected at
 * most 2 arguments, got 3", the builtin's wording: see above). */
static inline int
fm_check_nargs(const char *name, Py_ssize_t nargs, Py_ssize_t min, Py_ssize_t max)
{
    if (FM_LIKELY(nargs >= min && nargs <= max)) {
        return 0;
    }
    Py_ssize_t bound = nargs < min ? min : max;
    PyErr_Format(PyExc_TypeError, "%s expected %s%zd argument%s, got %zd", name,
                 min == max    ? ""
                 : nargs < min ? "at least "
                               : "at most ",
                 bound, bound == 1 ? "" : "s", nargs);
    return -1;
}

/* ------------------------------------------------------------------------ */
/* hashing.c                                                                  */

/* The unsigned hash of key into *out; 0 or -1.  A TypeError from __hash__ is
 * rewritten to PEP 814's "cannot use 'T' as a frozendict key (...)"; other
 * exceptions pass through unchanged. */
int hashing_key_hash(PyObject *key, Py_uhash_t *out);
/* hashing_key_hash with a C-only fast path for exact str keys whose hash is
 * already cached in the object (what dict's lookup does too): no call. */
static inline int
hashing_key_hash_fast(PyObject *key, Py_uhash_t *out)
{
#if !FM_FREE_THREADED
    if (PyUnicode_CheckExact(key)) {
        Py_hash_t h = ((PyASCIIObject *)key)->hash;
        if (FM_LIKELY(h != -1)) {
            *out = (Py_uhash_t)h;
            return 0;
        }
    }
#endif
    return hashing_key_hash(key, out);
}
/* The unsigned hash of key into *out when computing it runs no Python code
 * (str, int, float, complex, bytes, frozenset, None, the default identity
 * hash, and tuples of those): 1.  Else 0 (nothing is called).  Such a hash
 * cannot have changed since the key was stored. */
int hashing_pure_key_hash(PyObject *key, Py_uhash_t *out);
/* Whether key's hash runs no user code (the hashes of str, int, float,
 * complex, bytes, frozenset, None, the default identity hash, and tuples of
 * those): what every key of a table version is. */
int hashing_key_is_pure(PyObject *key);
/* hash((key, value)) from the stored key hash; calls hash(value); 0 or -1. */
int hashing_pair_hash(Py_uhash_t khash, PyObject *value, Py_uhash_t *out);
Py_uhash_t hashing_shuffle_bits(Py_uhash_t h);
/* frozenset's finaliser of the XOR accumulator; never -1. */
Py_hash_t hashing_finalize(Py_uhash_t acc, Py_ssize_t length);
/* The accumulator a hash of a map of length items was finalised from: 1 and
 * *acc, or 0 for the one hash value with two preimages (590923713). */
int hashing_unfinalize(Py_hash_t hash, Py_ssize_t length, Py_uhash_t *acc);
/* _check()'s test of a version's cached hash (-1: none yet): 0, or -1 with
 * an AssertionError when no accumulator finalises to it. */
int hashing_check_cached(Py_hash_t hash, Py_ssize_t length);
/* Update an accumulator for one pair leaving (old) and/or arriving (new);
 * *valid says whether *acc is known.  A value whose hash raises an Exception
 * makes it unknown (the error is cleared); 0.  MemoryError and any other
 * BaseException (KeyboardInterrupt) propagate: -1, *acc and *valid untouched.
 * The pair leaving is XORed out only when its value's hash cannot have
 * changed since it went in (see hashing.c); otherwise *valid becomes 0. */
int hashing_acc_replace(Py_uhash_t *acc, int *valid, Py_uhash_t khash, PyObject *old_value,
                        PyObject *new_value);
/* frozendict.c's tp_hash (hashing.c recognises a cached version hash by it). */
Py_hash_t fd_tp_hash(PyObject *op);

/* ------------------------------------------------------------------------ */
/* keytrie.c: the CHAMP key index                                             */

#define CHAMP_BITS 5
#define CHAMP_MASK ((1 << CHAMP_BITS) - 1)
/* The last digit's shift: digits start at 0, 5, ..., below 64 (the top one
 * holds only the hash's top 4 bits). */
#define CHAMP_MAX_SHIFT ((63 / CHAMP_BITS) * CHAMP_BITS)
/* The 5-bit digit of hash h at shift, its bit in a bitmap, and the dense
 * index of that bit among the bits set in bitmap. */
static inline unsigned
champ_digit(Py_uhash_t h, int shift)
{
    return (unsigned)((h >> shift) & CHAMP_MASK);
}

static inline uint32_t
champ_bit(Py_uhash_t h, int shift)
{
    return (uint32_t)1 << champ_digit(h, shift);
}

static inline int
champ_index(uint32_t bitmap, uint32_t bit)
{
    return FM_POPCOUNT32(bitmap & (bit - 1));
}

/* An entry.  key and value are BORROWED: the order trie of the same version
 * owns them (see "Who owns the keys and values" in the essay). */
typedef struct {
    Py_uhash_t hash;
    uint64_t seq;
    PyObject *key;
    PyObject *value;
} champ_entry;

/* Head shared by both node kinds.  Key-trie nodes are plain C structs, not
 * Python objects: they hold no strong reference to any Python object (keys
 * and values are borrowed from the order trie), so the GC never needs to see
 * them, and a 16-byte head instead of a 32-byte object head saves ~5 bytes
 * per item.  rc holds four times the reference count plus two flag bits:
 * 1 on a collision node (the kind bit: an empty root has both maps 0 like a
 * collision node), 2 on a bitmap node with a loan (champ_loan below).
 *
 * In-place edits: a transient (owner != 0) edits a key-trie node in place
 * when the node and every node above it on the path have a reference count
 * of 1, i.e. nothing but the transient can reach it.  Every holder of a
 * version (a frozendict, an iterator, a saved transient) holds a real
 * reference on the root, so a node reachable from anything else has a count
 * of 2 or more somewhere on its path and is copied.  For key nodes this is
 * exactly the owner-token rule of the pure core, without an 8-byte token in
 * every node (the order trie uses the same rule: fm_unique). */
typedef struct {
    Py_ssize_t rc;
    uint32_t datamap;
    uint32_t nodemap;
} champ_node;
_Static_assert(sizeof(((champ_node *)0)->datamap) * 8 >= (1 << CHAMP_BITS)
                   && sizeof(((champ_node *)0)->nodemap) * 8 >= (1 << CHAMP_BITS),
               "champ_node's bitmaps are narrower than a node's fan-out");

#define CHAMP_RC_ONE 4
#define CHAMP_RC_COLLISION 1
#define CHAMP_RC_LOAN 2

/* Frees node (its count reached 0), releasing its children. */
void champ_free(champ_node *node);

#if FM_FREE_THREADED
static inline void
champ_incref(champ_node *n)
{
    __atomic_fetch_add(&n->rc, CHAMP_RC_ONE, __ATOMIC_RELAXED);
}
static inline void
champ_decref(champ_node *n)
{
    if (__atomic_sub_fetch(&n->rc, CHAMP_RC_ONE, __ATOMIC_ACQ_REL) < CHAMP_RC_ONE) {
        champ_free(n);
    }
}
static inline int
champ_unique(champ_node *n)
{
    return (__atomic_load_n(&n->rc, __ATOMIC_ACQUIRE) >> 2) == 1;
}
#else
static inline void
champ_incref(champ_node *n)
{
    n->rc += CHAMP_RC_ONE;
}
static inline void
champ_decref(champ_node *n)
{
    if ((n->rc -= CHAMP_RC_ONE) < CHAMP_RC_ONE) {
        champ_free(n);
    }
}
static inline int
champ_unique(champ_node *n)
{
    return (n->rc >> 2) == 1;
}
#endif

static inline champ_node *
champ_newref(champ_node *n)
{
    champ_incref(n);
    return n;
}

static inline champ_node *
champ_xnewref(champ_node *n)
{
    if (n != NULL) {
        champ_incref(n);
    }
    return n;
}

static inline void
champ_xdecref(champ_node *n)
{
    if (n != NULL) {
        champ_decref(n);
    }
}

/* Release what *slot holds (if anything) and set it to NULL. */
static inline void
champ_clear(champ_node **slot)
{
    champ_node *n = *slot;
    *slot = NULL;
    champ_xdecref(n);
}

/* Store n into *slot, then release what it held. */
static inline void
champ_setref(champ_node **slot, champ_node *n)
{
    champ_node *old = *slot;
    *slot = n;
    champ_xdecref(old);
}

/* Bitmap node: entries[popcount(datamap)] then children[popcount(nodemap)]. */
typedef struct {
    champ_node head;
    champ_entry entries[1]; /* really variable-sized; see champ_children */
} champ_bitmap;

typedef struct {
    champ_node head; /* datamap == nodemap == 0 */
    Py_uhash_t hash;
    Py_ssize_t count;
    champ_entry entries[1];
} champ_collision;

static inline int
champ_is_collision(const champ_node *n)
{
    return (n->rc & CHAMP_RC_COLLISION) != 0;
}

/* A bitmap node's entries (a collision node's: see champ_collision). */
static inline champ_entry *
champ_entries(champ_node *n)
{
    return ((champ_bitmap *)n)->entries;
}

static inline int
champ_ndata(const champ_node *n)
{
    return FM_POPCOUNT32(n->datamap);
}

static inline int
champ_nchild(const champ_node *n)
{
    return FM_POPCOUNT32(n->nodemap);
}

/* A bitmap node's children, stored after its entries. */
static inline champ_node **
champ_children(champ_node *n)
{
    return (champ_node **)(champ_entries(n) + champ_ndata(n));
}

/* A loan: how a copied node avoids a reference per child.  A path copy
 * (a set or delete of a version) used to take a reference on every child of
 * every node it copied, ~32 per level, and the old version's release dropped
 * as many: the largest single cost of a derivation, and one memory touch per
 * sibling.  A node derived from a node L may instead borrow L's children: it
 * takes one reference on L (the lender) and owns references only on the
 * children it changed (owned, by digit); every other child is L's at the same
 * digit, kept alive by L.  Lenders never borrow (a copy of a borrower borrows
 * from the same lender and owns what its source owned), so there are no
 * chains; a copy that would own more than a few digits, or borrow only a
 * few children, takes full references instead and drops the loan (the
 * bounds and what they cost in memory: "loans" in keytrie.c).
 *
 * The loan sits after the children, so lookups, iteration, comparisons and
 * everything else that reads children see the same layout as before.  A
 * lender is never edited in place: whoever holds a loan holds a reference on
 * it, so its count is 2 or more wherever it also sits in a trie, and nothing
 * walks to it through the loan.  What a lender keeps alive beyond the
 * borrower's own children are key-trie nodes only (the children the borrower
 * replaced, with their borrowed entries never read again): no key or value
 * object lives longer.  See "Loans" in keytrie.c for the memory bound. */
typedef struct {
    champ_node *lender;
    uint32_t owned;
} champ_loan;

static inline int
champ_has_loan(const champ_node *n)
{
    return (n->rc & CHAMP_RC_LOAN) != 0;
}

static inline champ_loan *
champ_loan_of(champ_node *n)
{
    return (champ_loan *)(champ_children(n) + champ_nchild(n));
}

/* The shared empty root (see keytrie.c).  New ref; never fails.  Every
 * function below takes a root that is never NULL: an empty trie is this
 * root, never a NULL pointer (not even after tp_clear). */
champ_node *champ_empty_root(void);
/* Find key (unsigned hash h) below root.  1 and *out = the entry (a pointer
 * into a node of the trie, valid while the trie is), 0 absent, -1 error.
 * Runs the keys' __eq__ (stored_key == key). */
int champ_find(champ_node *root, Py_uhash_t h, PyObject *key, champ_entry **out);
/* The entry holding this very key object at order position seq, found by
 * identity alone: runs no __eq__ and no __hash__ (the caller gives the hash
 * when it has one).  The seq tells apart two entries of one key object (stored
 * twice, its hash having changed between the insertions, as dict keeps
 * both).  With the key's hash known (h), O(log32 n); with h NULL, a scan of
 * every entry, O(n).  NULL when absent. */
champ_entry *champ_find_stored(champ_node *root, const Py_uhash_t *h, PyObject *key,
                               uint64_t seq);
/* Return node with *entry stored, replacing the entry old (as returned by
 * champ_find on this very trie) or adding it (old == NULL).  Runs no user
 * code.  With owner nonzero (a transient), nodes only the caller reaches are
 * edited in place (see champ_node); others are
 * copied.  New ref, or NULL on MemoryError -- and then nothing was changed
 * (every allocation happens before the first in-place write). */
champ_node *champ_put(champ_node *node, int shift, const champ_entry *entry,
                      const champ_entry *old, uint64_t owner);
/* Return node without the entry old (as returned by champ_find), keeping the
 * canonical shape.  New ref or NULL on MemoryError (nothing changed). */
champ_node *champ_remove(champ_node *node, int shift, const champ_entry *old, uint64_t owner);
/* The path a lookup took, for a one-shot derivation that then copies it
 * without walking again: nodes[0] is the root, nodes[i] (at shift
 * 5 * i) the bitmap node reached through child index child[i - 1]; the walk
 * stopped at nodes[depth - 1] (the entry is there, or in a collision child
 * of it, or would go there).  Pointers are borrowed: valid while the trie
 * is (a version's trie never changes). */
#define CHAMP_MAX_DEPTH (CHAMP_MAX_SHIFT / CHAMP_BITS + 1) /* 13: shifts 0, 5, ..., 60 */
typedef struct {
    champ_node *nodes[CHAMP_MAX_DEPTH];
    uint8_t child[CHAMP_MAX_DEPTH];
    int depth;
} champ_path;

/* stored_key == key, identity first; the stored hash was already compared. */
static inline int
champ_keys_equal(PyObject *stored, PyObject *key)
{
    if (stored == key) {
        return 1;
    }
    Py_INCREF(stored);
    int r = PyObject_RichCompareBool(stored, key, Py_EQ);
    Py_DECREF(stored);
    return r;
}

/* champ_find, recording in path (when not NULL) the bitmap nodes it
 * passes and the child index it takes below each (see champ_path). */
/* The lookup itself, inline so that the readers of frozendict.c (one
 * level of call fewer on every m[k], `in` and get) and keytrie.c share it;
 * their callers are compiled for popcnt (FM_POPCNT_CLONES). */
static inline int
champ_walk(champ_node *node, Py_uhash_t h, PyObject *key, champ_entry **out, champ_path *path)
{
    int shift = 0, depth = 0;
    for (;;) {
        if (path != NULL) {
            path->nodes[depth] = node;
            path->depth = depth + 1;
        }
        uint32_t bit = champ_bit(h, shift);
        if (node->datamap & bit) {
            champ_entry *e = &champ_entries(node)[champ_index(node->datamap, bit)];
            if (e->hash != h) {
                return 0;
            }
            int r = champ_keys_equal(e->key, key);
            if (r > 0) {
                *out = e;
            }
            return r;
        }
        if (!(node->nodemap & bit)) {
            return 0;
        }
        int j = champ_index(node->nodemap, bit);
        node = champ_children(node)[j];
        shift += CHAMP_BITS;
        if (champ_is_collision(node)) {
            champ_collision *c = (champ_collision *)node;
            if (c->hash != h) {
                return 0;
            }
            for (Py_ssize_t i = 0; i < c->count; i++) {
                int r = champ_keys_equal(c->entries[i].key, key);
                if (r != 0) {
                    if (r > 0) {
                        *out = &c->entries[i];
                    }
                    return r;
                }
            }
            return 0;
        }
        if (path != NULL) {
            path->child[depth++] = (uint8_t)j;
        }
    }
}

/* champ_find from a non-NULL root, recording the path; same results. */
int champ_find_path(champ_node *root, Py_uhash_t h, PyObject *key, champ_path *path,
                    champ_entry **out);
/* champ_put / champ_remove (owner 0: every node on the path copied) along
 * a path recorded by champ_find_path for entry's key (old as it returned).
 * New ref or NULL on MemoryError (nothing changed). */
champ_node *champ_put_path(const champ_path *path, const champ_entry *entry,
                           const champ_entry *old);
champ_node *champ_remove_path(const champ_path *path, const champ_entry *old);
/* Whether two tries holding the same number of entries hold equal items:
 * 1, 0 or -1.  Skips subtrees shared by identity. */
int champ_equal(champ_node *a, champ_node *b);
/* Whether two tries hold the very same entries: the same key and value
 * objects at the same sequence numbers (shared subtrees skipped; no user
 * code runs).  A collision node's entries are compared by position, so a
 * rare false "no" is possible; never a false "yes". */
int champ_identical(champ_node *a, champ_node *b);
/* Append what differs from a to b: added / removed get champ_entry copies,
 * changed gets pairs (a's entry, b's entry) whose values differ (by != , or
 * by identity when by_identity: then no value's __eq__ runs).  The lists
 * are plain C arrays grown as needed (see champ_difflist); a list passed as
 * NULL is not wanted: a subtree only the other side has is then not even
 * listed, and without changed no values are compared.  Shared subtrees are
 * skipped.  The entries borrow from the tries (the caller holds both roots
 * across the keys' __eq__, which may run).  0 or -1. */
typedef struct {
    champ_entry *items;
    Py_ssize_t len, cap;
} champ_difflist;
int champ_diff(champ_node *a, champ_node *b, champ_difflist *added, champ_difflist *removed,
               champ_difflist *changed, int by_identity);
/* champ_diff of two entry lists a[0:na] and b[0:nb], matched by hash, then
 * key (a's key == b's key is asked as b_key == a_key, like a lookup of a's
 * key in b: b's entries of that hash in order, identity then __eq__ on
 * each), the values of a match then compared (by identity alone with
 * by_identity).  b's leftovers are added in b's order.  0 or -1. */
int champ_diff_lists(champ_entry *a, Py_ssize_t na, champ_entry *b, Py_ssize_t nb,
                     champ_difflist *added, champ_difflist *removed, champ_difflist *changed,
                     int by_identity);
void champ_difflist_free(champ_difflist *l);
/* Append a copy of *e: 0, or -1 with MemoryError. */
int champ_difflist_append(champ_difflist *l, const champ_entry *e);
/* Build a canonical trie from n entries with distinct keys (bulk path of
 * the constructor).  Takes the PyMem allocation entries (reordered, shrunk
 * as its entries are placed, freed before returning, also on failure): the
 * construction's peak stays near the finished map.  New ref or NULL. */
champ_node *champ_build(champ_entry *entries, Py_ssize_t n);
/* Invariant checker: number of entries below node, or -1 with
 * AssertionError. */
Py_ssize_t champ_check(champ_node *node, int shift, Py_uhash_t prefix, int is_root);
/* Append the address of every node to the list out (ints); 0 or -1. */
int champ_node_ids(champ_node *node, PyObject *out);
/* Append description lines to the list out; 0 or -1. */
int champ_dump(champ_node *node, int indent, PyObject *out);
/* Call fn on every entry below node (trie order); stops at a nonzero result,
 * which it returns. */
int champ_foreach(champ_node *node, int (*fn)(champ_entry *, void *), void *arg);

/* ------------------------------------------------------------------------ */
/* ordertrie.c: the insertion-order index                                     */

/* (Its widths, ORDER_LEAF_BITS and ORDER_INNER_BITS, and the numbers derived
 * from them are at the top of this file, with the module state.) */

/* A node.  At shift 0 slots hold (key, value) pairs (2 pointers each, strong
 * references); above it, child nodes (strong).
 *
 * The type is var-sized for CPython's allocator (PyObject_GC_NewVar), but the
 * node keeps no ob_size: prefix sits where ob_size would be and is written
 * after allocation, and cap (slots of room) says how big the node is.  The
 * type's __sizeof__ reports the real size.  No owner token either: a
 * transient edits a node in place when it and every node above it are
 * referenced once (fm_unique), see keytrie.c.  The head is 32 bytes. */
struct order_node {
    PyObject_HEAD
    uint64_t prefix; /* seq >> (shift + width), shared below; 0 at the top */
    uint16_t bitmap;
    uint8_t shift;
    uint8_t cap; /* room in slots (items at shift 0, children above) */
    uint8_t gc;  /* tracked by the GC (see ordertrie.c); in the head's padding */
    PyObject *slots[1];
};
/* A bitmap has a bit per slot of the widest node. */
_Static_assert(sizeof(((order_node *)0)->bitmap) * 8 >= (1 << ORDER_INNER_BITS)
                   && sizeof(((order_node *)0)->bitmap) * 8 >= (1 << ORDER_LEAF_BITS),
               "order_node.bitmap is narrower than a node's fan-out");
_Static_assert(ORDER_MAX_SHIFT < 64 && ORDER_MAX_SHIFT + ORDER_INNER_BITS >= 64,
               "the top order digit must read the top bits of a 64-bit seq");

/* Whether op is referenced once, by whoever asks (see order_node). */
static inline int
fm_unique(PyObject *op)
{
#if FM_FREE_THREADED
#  if PY_VERSION_HEX >= 0x030E0000
    return PyUnstable_Object_IsUniquelyReferenced(op);
#  else
    (void)op;
    return 0; /* no safe test before 3.14: free-threaded 3.13 always copies */
#  endif
#else
    return Py_REFCNT(op) == 1;
#endif
}

/* How many bits of seq a node at shift reads, and so its fan-out. */
static inline int
order_width(int shift)
{
    return shift == 0 ? ORDER_LEAF_BITS : ORDER_INNER_BITS;
}

static inline int
order_fanout_at(int shift)
{
    return 1 << order_width(shift);
}

/* Occupied slots (items of a leaf, children of an inner node). */
static inline int
order_count(const order_node *n)
{
    return FM_POPCOUNT32(n->bitmap);
}

static inline order_node *
order_child(const order_node *n, Py_ssize_t i)
{
    return (order_node *)n->slots[i];
}

static inline PyObject *
order_key(const order_node *n, Py_ssize_t i)
{
    return n->slots[2 * i];
}

static inline PyObject *
order_value(const order_node *n, Py_ssize_t i)
{
    return n->slots[2 * i + 1];
}

/* How many items are below n: a leaf's count; an inner node keeps it in
 * one word after its cap children (never visited as a reference). */
static inline Py_ssize_t
order_inner_size(const order_node *n)
{
    return (Py_ssize_t)(uintptr_t)n->slots[n->cap];
}

static inline Py_ssize_t
order_size(const order_node *n)
{
    return n->shift == 0 ? order_count(n) : order_inner_size(n);
}

static inline void
order_set_size(order_node *n, Py_ssize_t size)
{
    n->slots[n->cap] = (PyObject *)(uintptr_t)size;
}

/* All order functions treat NULL as the empty trie. */
/* The (key, value) at seq: 1 found (borrowed), 0 absent.  Never fails. */
int order_get(order_node *root, uint64_t seq, PyObject **key, PyObject **value);
/* Return the trie with (key, value) at a seq it does not hold (new refs to
 * key and value are taken).  New ref or NULL on MemoryError (nothing
 * changed). */
order_node *order_insert(fm_state *st, order_node *root, uint64_t seq, PyObject *key,
                         PyObject *value, uint64_t owner);
/* Return the trie with the value at seq (present) replaced (a new ref to
 * value is taken).  New ref or NULL (nothing changed).
 * Items released by in-place edits (here and in order_remove) are
 * decref'd on the spot: callers hold their own references to the old key and
 * value until the edit is complete, so no finalizer runs mid-edit. */
order_node *order_replace(fm_state *st, order_node *root, uint64_t seq, PyObject *value,
                          uint64_t owner);
/* The trie without seq (present) into *result (new ref, NULL when it became
 * empty).  0 or -1 on MemoryError (nothing changed). */
int order_remove(fm_state *st, order_node *root, uint64_t seq, uint64_t owner,
                 order_node **result);
/* The last item (borrowed) and its seq; 0 when empty. */
int order_last(order_node *root, uint64_t *seq, PyObject **key, PyObject **value);
/* The seq and (key, value) (borrowed) at position index, 0 <= index <
 * order_size(root) (root not NULL).  O(log n). */
void order_at(order_node *root, Py_ssize_t index, uint64_t *seq, PyObject **key,
              PyObject **value);
/* The position of seq (items before it), -1 when absent.  O(log n). */
Py_ssize_t order_rank(order_node *root, uint64_t seq);
/* Build the trie holding (entries[i].key, entries[i].value) at seq i,
 * bottom-up.  Steals those references, also on failure (then released).
 * may_gc 0: the caller saw no GC object among them (no leaf is tracked,
 * none is checked).  Every node is sized exactly (no room left for
 * appends, unlike other nodes a transient makes): a map built from a dict
 * is usually published at once, and the one partial leaf at the end was
 * most of a small map's order trie.  New ref, NULL with no error when
 * n == 0, NULL with error. */
order_node *order_build(fm_state *st, const champ_entry *entries, Py_ssize_t n, int may_gc);
Py_ssize_t order_check(order_node *root, PyObject *seqs_out);
/* Release the free lists of order nodes (module clear). */
void order_free_lists_clear(fm_state *st);
int order_node_ids(order_node *node, PyObject *out);
int order_dump(order_node *node, int indent, PyObject *out);

/* A cursor walking the trie with a small explicit stack, no lookups. */
typedef struct {
    order_node *stack[ORDER_MAX_DEPTH]; /* borrowed */
    int8_t pos[ORDER_MAX_DEPTH];
    int depth; /* -1: exhausted */
    int reverse;
} order_cursor;
void order_cursor_init(order_cursor *c, order_node *root, int reverse);
/* A forward cursor starting at position index (0 <= index <= size, root may
 * be NULL): one descent by the sizes, O(log n). */
void order_cursor_init_at(order_cursor *c, order_node *root, Py_ssize_t index);
/* 1 and the next (key, value) (borrowed), or 0 at the end. */
int order_cursor_next(order_cursor *c, PyObject **key, PyObject **value);
/* dict(items) of a trie (root borrowed, may be NULL); new ref or NULL. */
PyObject *order_as_dict(order_node *root);

/* ------------------------------------------------------------------------ */
/* The two object layouts (frozendict.c and evolver.c own the types;
 * reads.c, the layer below both, reads them).                               */

#if FM_FREE_THREADED
#  define FM_BEGIN_CS(op) Py_BEGIN_CRITICAL_SECTION(op)
#  define FM_END_CS() Py_END_CRITICAL_SECTION()
#else
#  define FM_BEGIN_CS(op) {
#  define FM_END_CS() }
#endif

/* Relaxed atomics for the cached hash (free-threaded builds). */
#if FM_FREE_THREADED
#  define FM_LOAD_HASH(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#  define FM_STORE_HASH(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)
#else
#  define FM_LOAD_HASH(p) (p)
#  define FM_STORE_HASH(p, v) ((p) = (v))
#endif

/* A small version's key (the flat form, flat.c): in insertion order, each
 * with its stored hash. */
typedef struct {
    Py_uhash_t hash;
    PyObject *key;
} flat_key;

/* A flat version's keys: a block that the versions made from one another by
 * value changes share.  Not a Python object and never seen by the GC: every
 * version (or builder) holding the block counts once in rc and holds its
 * own strong reference to each key in it, which its tp_traverse visits and
 * its tp_clear releases; the block itself keeps only the memory.  So no
 * version's tp_clear empties what another reads, and a version keeps no
 * other version's values alive.  Atomic counts when free-threaded. */
typedef struct {
    Py_ssize_t rc;
    flat_key keys[]; /* as many as the holders' len (room for more is harmless) */
} flat_keys;

flat_keys *flat_keys_new(Py_ssize_t n); /* rc 1, keys unset; NULL: MemoryError */

#if FM_FREE_THREADED
static inline void
flat_keys_incref(flat_keys *k)
{
    __atomic_fetch_add(&k->rc, 1, __ATOMIC_RELAXED);
}
static inline void
flat_keys_decref(flat_keys *k)
{
    if (__atomic_sub_fetch(&k->rc, 1, __ATOMIC_ACQ_REL) == 0) {
        PyMem_Free(k);
    }
}
static inline Py_ssize_t
flat_keys_count(flat_keys *k)
{
    return __atomic_load_n(&k->rc, __ATOMIC_ACQUIRE);
}
#else
static inline void
flat_keys_incref(flat_keys *k)
{
    k->rc++;
}
static inline void
flat_keys_decref(flat_keys *k)
{
    if (--k->rc == 0) {
        PyMem_Free(k);
    }
}
static inline Py_ssize_t
flat_keys_count(flat_keys *k)
{
    return k->rc;
}
#endif

/* A version holds at most FLAT_MAX items flat (no tries), more in the two
 * tries.  FLAT_MAX in the pure core (flat.py). */
#define FLAT_MAX 32

/* A version: an immutable frozendict, in one of three forms (fm_form):
 *  - flat exactly when len <= FLAT_MAX (fm_is_flat): next_seq then 0,
 *    values its own PyMem array of len values and keys a key block
 *    (flat_keys, perhaps shared with the versions it was made from or made
 *    into by value changes), both NULL when empty.  Read them only through
 *    fm_flat_keys / fm_flat_values;
 *  - the table form (fm_is_table: len > FLAT_MAX and next_seq 0): built
 *    once and never derived from, its items in a private exact dict whose
 *    keys all hash without user code, and twin, the same items in tries,
 *    built by the first operation that needs tries (table.c);
 *  - the tries form (len > FLAT_MAX, next_seq > 0): root and order. */
typedef struct fd_object {
    PyObject_HEAD
    union {
        champ_node *root;  /* key trie (never NULL) in the tries form */
        PyObject **values; /* the values when flat */
        PyObject *table;   /* the table form: its private exact dict */
    };
    union {
        order_node *order;      /* order trie in the tries form */
        flat_keys *keys;        /* flat: the key block */
        struct fd_object *twin; /* the table form: its tries, once built, or NULL */
    };
    Py_ssize_t len;
    uint64_t next_seq;
    Py_hash_t hash; /* -1: unknown; relaxed atomics when free-threaded.
                            * The XOR accumulator behind it is not stored:
                            * hashing_unfinalize recovers it from the hash
                            * (8 + 8 bytes less per version, and one word
                            * to publish atomically). */
} fd_object;

/* The internal builder: a private editable version.  Two modes:
 *  - tries: root (never NULL) and order, as a version's;
 *  - flat (flat != NULL; root and order NULL, next_seq 0): the items are
 *    those of the flat version flat, an exact frozendict edited in place
 *    while t holds its only reference (else copied first), up to FLAT_MAX
 *    items; one more promotes t to tries (flat_t_promote).  An Evolver's
 *    (shared) is its private copy, untracked by the GC (its items are
 *    visited through the Evolver), and freeze() publishes a copy of it.  Only
 *    transient_init_flat_from starts one (|, the Evolver); flat.c's flat_t_*
 *    do its edits.  See "10. Small maps" in the essay (frozendict.c). */
typedef struct {
    champ_node *root;
    order_node *order;
    struct fd_object *flat;
    PyObject *table; /* table mode: a private exact dict (root, order, flat NULL) */
    Py_ssize_t len;
    uint64_t next_seq;
    Py_uhash_t acc;
    int acc_valid;
    uint64_t owner; /* 1: edits what only it references in place;
                           * 0: a one-shot derivation, every edit copies */
    int shared;     /* an Evolver's: user code (a finalizer) can reach it */
} transient;

typedef struct {
    PyObject_HEAD
    transient t;
    int busy;                /* an edit is running (re-entrancy guard) */
    int depth;               /* the edit lock's recursion depth (0: free) */
    unsigned long holder;    /* thread holding the edit lock (when depth) */
    PyThread_type_lock lock; /* serialises edits across threads */
    uint64_t resized;        /* bumped when keys are added or removed */
    uint64_t edits;          /* bumped by every edit (freeze's cache check) */
    PyObject *frozen;        /* cached freeze() result, or NULL */
    PyObject *origin;        /* the last version published (or the source), or
                            * NULL: freeze() returns it when nothing changed */
} evolver_object;

/* Whether a version is in the flat form (flat.c). */
static inline int
fm_is_flat(const fd_object *fd)
{
    return fd->len <= FLAT_MAX;
}

/* Whether a version is in the table form (table.c): more than FLAT_MAX
 * items and no seq ever given (a tries version's next_seq exceeds its
 * length). */
static inline int
fm_is_table(const fd_object *fd)
{
    return fd->len > FLAT_MAX && fd->next_seq == 0;
}

/* The first position at or after i whose stored hash is h among
 * keys[0:n], or n.  Four hashes a step, tested together: one branch per
 * four entries on the common path (no equal hash). */
static inline Py_ssize_t
fm_flat_next_hash(const flat_key *keys, Py_ssize_t n, Py_ssize_t i, Py_uhash_t h)
{
    for (; i + 4 <= n; i += 4) {
        if ((keys[i].hash == h) | (keys[i + 1].hash == h) | (keys[i + 2].hash == h)
            | (keys[i + 3].hash == h)) {
            break;
        }
    }
    for (; i < n; i++) {
        if (keys[i].hash == h) {
            return i;
        }
    }
    return n;
}

/* The values of a flat version, in insertion order (len of them). */
static inline PyObject **
fm_flat_values(const fd_object *fd)
{
    return fd->values;
}

/* The hashes and keys of a flat version, in insertion order (len of them;
 * NULL when empty), from its key block, which the version holds. */
static inline flat_key *
fm_flat_keys(const fd_object *fd)
{
    return fd->keys == NULL ? NULL : fd->keys->keys;
}

/* The object as a frozendict / an Evolver (the caller knows it is one). */
static inline fd_object *
fm_as_fd(PyObject *op)
{
    return (fd_object *)op;
}
static inline evolver_object *
fm_as_evolver(PyObject *op)
{
    return (evolver_object *)op;
}
/* Whether obj is one of this module's frozendicts / Evolvers (or a subclass
 * instance), by its real type. */
static inline int
fm_is_frozendict(fm_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, st->frozendict_type);
}
static inline int
fm_is_evolver(fm_state *st, PyObject *obj)
{
    return PyObject_TypeCheck(obj, st->evolver_type);
}

/* ------------------------------------------------------------------------ */
/* transient.c: the builder, versions made and derived                        */

/* The outcome of a lookup or a removal by key (the -1/0/1 convention, with
 * names): transient_lookup, transient_dissoc, transient_shared_get,
 * mapping_get. */
typedef enum {
    FM_ERROR = -1,  /* an exception is set */
    FM_MISSING = 0, /* the key is absent (nothing changed) */
    FM_FOUND = 1,   /* found (or removed); out parameters are set */
} fm_lookup;

/* Find key (hash h) in the flat version fd, which the caller holds: the
 * stored hashes in insertion order, identity then __eq__ on an equal hash.
 * FM_FOUND and *index, FM_MISSING or FM_ERROR. */
static inline fm_lookup
flat_scan(fd_object *fd, Py_uhash_t h, PyObject *key, Py_ssize_t *index)
{
    /* The caller holds fd, which holds its key block and a reference to
     * every key in it, so they stay valid across __eq__.  (Only a tp_clear
     * called through ctypes could empty a version someone holds: the scan
     * reads the length and the keys again after each call.) */
    Py_ssize_t n = fd->len;
    flat_key *keys = fm_flat_keys(fd);
    for (Py_ssize_t i = fm_flat_next_hash(keys, n, 0, h); i < n;
         i = fm_flat_next_hash(keys, n, i + 1, h)) {
        int r = champ_keys_equal(keys[i].key, key);
        if (r != 0) {
            if (r < 0) {
                return FM_ERROR;
            }
            *index = i;
            return FM_FOUND;
        }
        n = fd->len;
        keys = fm_flat_keys(fd);
    }
    return FM_MISSING;
}

/* The outcome of setting a key (transient_assoc). */
typedef enum {
    FM_EDIT_FAILED = -1, /* an exception is set; the transient is unchanged */
    FM_UNCHANGED = 0,    /* the key already held that very value object */
    FM_CHANGED = 1,      /* the key was added or its value replaced */
} fm_edit;

/* The accumulator of a version (from its cached hash): 1 and *acc, or 0
 * when unknown. */
static inline int
fm_version_acc(fd_object *fd, Py_uhash_t *acc)
{
    Py_hash_t h = FM_LOAD_HASH(fd->hash);
    return h != -1 && hashing_unfinalize(h, fd->len, acc);
}
/* A new version of type tp from the parts (new refs taken on the roots).
 * New ref or NULL. */
PyObject *transient_version_new(PyTypeObject *tp, champ_node *root, order_node *order,
                                Py_ssize_t len, uint64_t next_seq, Py_uhash_t acc,
                                int acc_valid);
/* An operation on two versions walks their key tries together (champ_diff,
 * skipping shared subtrees) when the operand holds at least
 * 1/FM_SHARING_WALK_RATIO as many entries as the other side: see
 * mapping_pair_path (reads.c).  SHARING_WALK_RATIO in the pure core. */
#define FM_SHARING_WALK_RATIO 4
/* qsort order of champ_entry copies by seq (insertion order). */
int transient_compare_seq(const void *x, const void *y);
/* op (a frozendict, any subclass) as an exact frozendict: op itself when
 * exact, else a new version sharing its roots.  New ref or NULL. */
PyObject *transient_version_exact(fm_state *st, PyObject *op);

/* Start from a version's parts (new refs taken; root NULL means empty), in
 * in-place mode (owner 1).  0 or -1. */
int transient_init(fm_state *st, transient *t, champ_node *root, order_node *order,
                   Py_ssize_t len, uint64_t next_seq, Py_uhash_t acc, int acc_valid);
/* transient_init from a version (a frozendict, any subclass): 0 or -1. */
int transient_init_from(fm_state *st, transient *t, PyObject *version);
/* transient_init_from, but a flat version's items stay flat (t in flat
 * mode, promoted when it outgrows FLAT_MAX): for the builders whose every
 * edit goes through transient_assoc/_put_new/_dissoc (|, the Evolver). */
int transient_init_flat_from(fm_state *st, transient *t, PyObject *version);
void transient_clear(transient *t);
/* Install new roots, then release the old ones (which can run finalizers:
 * they see the new state).  The caller sets the other fields first. */
static inline void
transient_install(transient *t, champ_node *root, order_node *order)
{
    champ_node *old_root = t->root;
    order_node *old_order = t->order;
    t->root = root;
    t->order = order;
    champ_xdecref(old_root);
    Py_XDECREF(old_order);
}
/* tp_traverse of a transient's references (the order trie owns the items). */
int transient_traverse(transient *t, visitproc visit, void *arg);
/* Find key: FM_FOUND (*entry, valid until the next edit), FM_MISSING or
 * FM_ERROR.  Computes the key hash into *h (runs __hash__ and __eq__). */
fm_lookup transient_lookup(transient *t, PyObject *key, Py_uhash_t *h, champ_entry **entry);
/* Set key to value: FM_CHANGED, FM_UNCHANGED (the key already held that
 * very value) or FM_EDIT_FAILED (the transient unchanged). */
fm_edit transient_assoc(fm_state *st, transient *t, PyObject *key, PyObject *value);
/* Append a key known to be absent: 0 or -1 (unchanged on error). */
int transient_put_new(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                      PyObject *value);
/* Remove key: FM_FOUND removed (old value into *old_value as a new ref if
 * not NULL), FM_MISSING absent, FM_ERROR (the transient unchanged). */
fm_lookup transient_dissoc(fm_state *st, transient *t, PyObject *key, PyObject **old_value);
/* transient_dissoc for a key whose hash h is known (a stored key). */
fm_lookup transient_dissoc_hashed(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                                  PyObject **old_value);
/* Remove the entry found by transient_lookup: 0 or -1 (unchanged on
 * error).  The old key and value are returned as new refs if the out
 * pointers are not NULL. */
/* Remove the item at position index of a transient in flat mode: 0 or -1
 * (unchanged on error; the value's __hash__ runs for the accumulator).
 * The old key and value as transient_remove_entry gives them. */
int transient_remove_at(fm_state *st, transient *t, Py_ssize_t index, PyObject **old_key,
                        PyObject **old_value);
int transient_remove_entry(fm_state *st, transient *t, champ_entry *found, PyObject **old_key,
                           PyObject **old_value);
/* The contents as a new version of type tp (which references the roots, so
 * later edits of t copy what they touch).  New ref or NULL. */
PyObject *transient_publish(fm_state *st, transient *t, PyTypeObject *tp);

/* Look key up in a transient user code can reach (an Evolver's), holding
 * its roots while the keys' __eq__ runs (holder: the object whose critical
 * section guards t): FM_FOUND and *value (new ref), FM_MISSING, FM_ERROR. */
fm_lookup transient_shared_get(PyObject *holder, transient *t, PyObject *key,
                               PyObject **value);
/* Set key (its hash h known: a stored key) to value: as transient_assoc. */
fm_edit transient_assoc_hashed(fm_state *st, transient *t, Py_uhash_t h, PyObject *key,
                               PyObject *value);
/* Fill an empty transient from n > 0 hashed entries with distinct keys, seq
 * i at index i, each holding a reference to its key and its value: the
 * tries built bottom-up, no lookups, no user code.  Takes the PyMem array
 * and its references, also on failure.  may_gc as for order_build.  0 or
 * -1. */
int transient_load_entries(fm_state *st, transient *t, champ_entry *entries, Py_ssize_t n,
                           int may_gc);

/* ------------------------------------------------------------------------ */
/* derive.c: the one-key derivations of a version                             */

/* op.set(key, value) and op.delete(key) (op.discard(key) when missing_ok)
 * of a frozendict op, for its methods and for paths.c: a new exact version,
 * or transient_version_exact(op) when nothing changes; NULL on error
 * (KeyError for a missing key unless missing_ok). */
PyObject *derive_with(fm_state *st, PyObject *op, PyObject *key, PyObject *value);
PyObject *derive_without(PyObject *op, PyObject *key, int missing_ok);
/* Release entries[0:n]'s references to their keys and values, then the
 * PyMem array (a fill that failed before the tries took them). */
void transient_entries_free(champ_entry *entries, Py_ssize_t n);

/* ------------------------------------------------------------------------ */
/* reads.c: the reads both types share                                        */

/* Reads of "a mapping": a frozendict (any subclass) or an Evolver. */
/* The value for key in a mapping: FM_FOUND and *value (new ref),
 * FM_MISSING, FM_ERROR. */
fm_lookup mapping_get(fm_state *st, PyObject *mapping, PyObject *key, PyObject **value);
/* The order root of a mapping to iterate (an Evolver's as a snapshot: the
 * reference makes later edits copy), new ref or NULL when empty; *resized
 * gets an Evolver's resized counter (0 for a frozendict). */
order_node *mapping_order(fm_state *st, PyObject *mapping, uint64_t *resized);
/* The stored length (never a subclass's __len__, which dict's own
 * operations never consult either). */
Py_ssize_t mapping_len(fm_state *st, PyObject *mapping);
/* mapping == other: a new ref to True, False or NotImplemented, or NULL. */
PyObject *mapping_equal(fm_state *st, PyObject *mapping, PyObject *other);
/* Name({k: v, ...}), Name() when empty, Name({...}) on recursion. */
PyObject *mapping_repr(fm_state *st, PyObject *mapping, PyObject *name);
/* Whether obj counts as a dict or frozendict (any core, the builtin). */
int mapping_is_anydict(fm_state *st, PyObject *obj);

/* How an operation reads two versions of this core (mapping_pair_path):
 * the one choice every operation on two maps makes, and the guarantees
 * every path keeps, are written beside mapping_pair_path in reads.c. */
typedef enum {
    FM_PAIR_FLAT = 0,    /* both flat: entries paired by position first */
    FM_PAIR_WALK = 1,    /* the two key tries walked together (champ_diff) */
    FM_PAIR_ENTRIES = 2, /* b's entries one by one, in b's order, stored hashes */
    FM_PAIR_TABLES = 3,  /* both tables: == compares them; else as FM_PAIR_WALK */
} fm_pair_path;
/* The three forms of a version (and the modes of a transient). */
typedef enum { FM_FORM_FLAT, FM_FORM_TRIES, FM_FORM_TABLE } fm_form;
static inline fm_form
fm_form_of(const fd_object *fd)
{
    return fm_is_flat(fd) ? FM_FORM_FLAT : fm_is_table(fd) ? FM_FORM_TABLE : FM_FORM_TRIES;
}
/* The path for a (a_len entries in the form a_form: a version or a
 * transient) and b, a frozendict of this core (any subclass) read from
 * its own storage.  O(1). */
fm_pair_path mapping_pair_path(Py_ssize_t a_len, fm_form a_form, fd_object *b);
/* The entries of b (a frozendict) in insertion order, with their stored
 * hashes (a flat version's positions for seqs): into out, whose entries
 * borrow from b (held by the caller).  0 or -1 (MemoryError). */
int mapping_entries_in_order(fd_object *b, champ_difflist *out);

/* Positions, read from a version (an Evolver's methods read its freeze()). */
typedef enum { FM_POSITION_KEY, FM_POSITION_VALUE, FM_POSITION_ITEM } fm_position;
/* The key, value or (key, value) at position index of v: new ref, or NULL
 * with TypeError (index not an integer) or IndexError ("<name> index out of
 * range").  O(log n). */
PyObject *position_at(fd_object *v, PyObject *index, const char *name, fm_position what);
/* The position of key in v (an int), or NULL (KeyError when absent; the
 * key's __hash__ and __eq__ run).  O(log n). */
PyObject *position_of(fd_object *v, PyObject *key);
/* An exact frozendict of the items of op (a frozendict) at positions
 * start:stop (a list's slice rules); op itself when that is all of an exact
 * one.  Each kept key's __hash__ runs once (position_slice_load); no
 * __eq__.  O(log n + k) for k items kept.  New ref or NULL. */
PyObject *position_slice(fm_state *st, PyObject *op, PyObject *start, PyObject *stop);
/* The frozendict type of another core (or the builtin) that obj's real type
 * derives from: new ref, or NULL (an error set, or none). */
PyObject *mapping_foreign_base(fm_state *st, PyObject *obj);

/* ------------------------------------------------------------------------ */
/* merge.c: the one merge                                                     */

/* merge_into: add arg (read as dict(arg) reads it; NULL for none), then the
 * keywords (a dict, or kwvalues/kwnames from a vectorcall; either may be
 * NULL).  The one merge behind the constructor, |, __replace__ and
 * Evolver.update.  0 or -1 (t then holds a partial merge: callers discard
 * or restore it). */
int merge_into(fm_state *st, transient *t, PyObject *arg, PyObject *kwargs,
               PyObject *const *kwvalues, PyObject *kwnames);

/* ------------------------------------------------------------------------ */
/* table.c: the table form (a version built once and read) and a transient's
 * table mode; see the file's opening comment.                                */

/* A new table version of type tp holding table (stolen: an exact dict of
 * more than FLAT_MAX keys, all pure, never changed again), its hash from
 * acc when acc_valid.  New ref or NULL. */
PyObject *table_version_new(PyTypeObject *tp, PyObject *table, Py_uhash_t acc, int acc_valid);
/* tp_traverse of what a private dict (a table) holds: its keys and values
 * (the dict itself is out of the GC's lists: it is never handed out). */
int table_traverse(PyObject *table, visitproc visit, void *arg);
/* Whether every key of dict hashes without user code. */
int table_keys_are_pure(PyObject *dict);
/* frozendict(dict) of an exact dict: a new table version of type tp, or
 * None (a new ref) when dict has at most FLAT_MAX keys or a key that is not
 * pure (the caller builds otherwise), or NULL. */
PyObject *table_from_dict(PyTypeObject *tp, PyObject *dict);
/* A new version of type tp with the items of the table version fd: a copy
 * of its table (a dict has one holder), its twin shared.  New ref or NULL. */
PyObject *table_version_share(PyTypeObject *tp, fd_object *fd);
/* The twin of a table version once built (borrowed), or NULL. */
fd_object *table_twin_if_built(fd_object *fd);
/* The twin of the table version fd, built the first time (a tries version
 * of the exact type with the same items in the same order): new ref, or
 * NULL (MemoryError).  No user code runs but a GC pass's. */
PyObject *table_twin(fm_state *st, fd_object *fd);
/* op (a frozendict) in a form with tries or flat: its twin when op is a
 * table version, else op itself.  New ref or NULL. */
PyObject *table_version_tries(fm_state *st, PyObject *op);
/* table_find's key known (h): a pure key in the dict (hashed again, no user
 * code), another in the twin. */
fm_lookup table_find_hashed(fd_object *fd, Py_uhash_t h, PyObject *key, PyObject **value);
/* Find key in the table version fd (held by the caller): FM_FOUND and
 * *value (borrowed), FM_MISSING, FM_ERROR.  A key that hashes without user
 * code is the dict's own lookup (it hashes it); another is hashed once
 * (PEP 814's message when it cannot be) and found in the twin.  Inline: it
 * is every lookup of a table, and a dict's costs a few nanoseconds. */
static inline fm_lookup
table_find(fd_object *fd, PyObject *key, PyObject **value)
{
    if (FM_LIKELY(PyUnicode_CheckExact(key) || hashing_key_is_pure(key))) {
        PyObject *found = PyDict_GetItemWithError(fd->table, key);
        if (found != NULL) {
            *value = found; /* borrowed: the dict is held by fd, held by the caller */
            return FM_FOUND;
        }
        return PyErr_Occurred() ? FM_ERROR : FM_MISSING;
    }
    Py_uhash_t h;
    if (hashing_key_hash(key, &h) < 0) {
        return FM_ERROR;
    }
    return table_find_hashed(fd, h, key, value);
}
/* The next item of the table version fd in order (borrowed), from the dict
 * position *position (start at 0): 1, or 0 at the end. */
int table_walk_next(fd_object *fd, Py_ssize_t *position, PyObject **key, PyObject **value);
/* Start t in table mode (t->table an empty private dict): for the builds
 * that make versions from nothing (the constructor, fromkeys).  0 or -1. */
int transient_init_table(fm_state *st, transient *t);
/* Leave table mode: t's items in tries (flat at most FLAT_MAX), built from
 * the dict with the keys' (pure) hashes.  0 or -1 (t unchanged). */
int transient_table_leave(fm_state *st, transient *t);
/* Publish a transient in table mode: a table version of type tp (more
 * than FLAT_MAX items; t then empty) or a flat one.  New ref or NULL. */
PyObject *transient_table_publish(fm_state *st, transient *t, PyTypeObject *tp);
/* _check() and _dump() of a table version. */
PyObject *table_check(fd_object *fd);
PyObject *table_dump(fd_object *fd);

/* ------------------------------------------------------------------------ */
/* flat.c: versions of at most FLAT_MAX items, one array in insertion order */

/* Release a flat version's parts (the caller detached them from any object
 * first: the releases can run finalizers): its n values and its references
 * to the n keys of the block keys, then its count in the block. */
void flat_release(PyObject **values, flat_keys *keys, Py_ssize_t n);
/* Make the flat version fd the empty one, then release what it held
 * (tp_clear). */
void flat_clear(fd_object *fd);
/* A new flat version of type tp holding the n values and the key block
 * keys, with a reference to each of its keys (all stolen, also on failure;
 * both NULL when n == 0).  New ref or NULL. */
PyObject *flat_version_new(PyTypeObject *tp, PyObject **values, flat_keys *keys, Py_ssize_t n,
                           Py_uhash_t acc, int acc_valid);
/* A flat version of type tp with the items of the flat version fd (new
 * references; fd's key block shared).  New ref or NULL. */
PyObject *flat_version_copy(PyTypeObject *tp, fd_object *fd);
/* frozendict(d) of an exact dict d of at most FLAT_MAX items, and
 * frozendict(**kw) of at most FLAT_MAX keywords (a vectorcall's names and
 * values): new flat versions of type tp, or NULL. */
PyObject *flat_from_dict(PyTypeObject *tp, PyObject *dict);
PyObject *flat_from_kwnames(PyTypeObject *tp, PyObject *const *kwvalues, PyObject *kwnames);
/* The flat version of type tp of the items of the key trie root but the
 * entry skip (a pointer into that trie, or NULL), len <= FLAT_MAX of them
 * (borrowed; no user code runs).  New ref or NULL. */
PyObject *flat_demote(PyTypeObject *tp, champ_node *root, const champ_entry *skip,
                      Py_ssize_t len, Py_uhash_t acc, int acc_valid);
/* Start t (transient_init) with the items of the flat version fd, seqs 0..
 * len-1 in order.  0 or -1. */
int flat_promote(fm_state *st, transient *t, fd_object *fd);
/* op.set(key, value) / op.delete(key) of a flat version op (key's hash h):
 * as derive_with / derive_without, which call them. */
PyObject *flat_with(fm_state *st, PyObject *op, Py_uhash_t h, PyObject *key, PyObject *value);
PyObject *flat_without(fm_state *st, PyObject *op, Py_uhash_t h, PyObject *key,
                       int missing_ok);
/* A key trie of the items of the flat version fd (seqs 0..len-1 in
 * order), whose entries borrow from fd: for the cold paths that walk two
 * key tries (diff).  New ref or NULL. */
champ_node *flat_key_trie(fm_state *st, fd_object *fd);
/* An order trie of the items of the flat version fd (new ref; NULL with no
 * error when empty, NULL with an error). */
order_node *flat_order(fm_state *st, fd_object *fd);
/* Whether the items of the flat version fd are, in order and by identity,
 * those of the tries root (len items): no user code runs. */
int flat_same_items(fd_object *fd, champ_node *root, Py_ssize_t len);
/* A flat version of type tp of n <= FLAT_MAX entries with distinct keys
 * (their hashes known), in the order given, values from values[i] when
 * values is not NULL: one block, no lookups, no user code.  New ref or
 * NULL. */
PyObject *flat_from_entries(PyTypeObject *tp, const champ_entry *entries, Py_ssize_t n,
                            PyObject *const *values);
/* A new version of type tp with fd's items (a flat version; its key block
 * shared), its hash from acc when acc_valid.  New ref or NULL. */
PyObject *flat_copy(PyTypeObject *tp, fd_object *fd, Py_uhash_t acc, int acc_valid);
/* A transient in flat mode (t->flat set; see transient).  Find key (hash h)
 * in t's items, holding them across the keys' __eq__: FM_FOUND and *index,
 * FM_MISSING (t may then be in either mode: an Evolver cleared meanwhile),
 * or FM_ERROR (also when found in items replaced meanwhile). */
fm_lookup flat_t_find(transient *t, Py_uhash_t h, PyObject *key, Py_ssize_t *index);
/* Make t->flat editable in place (flat_t_editable: t holds the only
 * reference to it, and to its key block when keys change), else copy its
 * items first (the values only, beside the same key block, when
 * values_only): 0, or -1 (MemoryError, t unchanged).  *replaced gets the
 * version replaced (the caller releases it when its edit is done: that can
 * run finalizers), or NULL.  No user code runs, but the copy allocates a GC
 * object. */
int flat_t_own(fm_state *st, transient *t, int values_only, fd_object **replaced);
/* Edits of an editable t->flat (flat_t_own first; none runs user code).
 * set_at returns the value replaced (the caller's reference to release);
 * append adds an item at the end (len < FLAT_MAX): 0, or -1 with
 * MemoryError and nothing changed; remove_at hands over the references to
 * the key and value removed. */
PyObject *flat_t_set_at(transient *t, Py_ssize_t index, PyObject *value);
int flat_t_append(transient *t, Py_uhash_t h, PyObject *key, PyObject *value);
void flat_t_remove_at(transient *t, Py_ssize_t index, PyObject **old_key,
                      PyObject **old_value);
/* Put t in tries mode with its items, then extra (its key not among them;
 * NULL for none), seqs 0.. in order; t's hash accumulator is kept.  0 or -1
 * (t unchanged). */
int flat_t_promote(fm_state *st, transient *t, const champ_entry *extra);
/* Whether the flat version fd holds t's items, in order, by identity. */
int flat_t_same_items(fd_object *fd, transient *t);
/* _check(), _dump() and _node_ids() of a flat version. */
PyObject *flat_check(fd_object *fd);
PyObject *flat_dump(fd_object *fd);

/* ------------------------------------------------------------------------ */
/* paths.c: get_in, set_in, update_in, delete_in, the methods of both the
 * frozendict and the Evolver (self is either).                               */

PyObject *path_py_get_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *path_py_set_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *path_py_update_in(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *path_py_delete_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);

/* Type specs, registered by module.c. */
extern PyType_Spec order_node_spec;
extern PyType_Spec fd_spec;
extern PyType_Spec evolver_spec;
extern PyType_Spec view_keys_spec;
extern PyType_Spec view_values_spec;
extern PyType_Spec view_items_spec;
extern PyType_Spec view_iter_spec;
extern vectorcallfunc fd_tp_vectorcall_ptr;

/* drafts.c: create the draft base types and add them to the module.  0 or -1. */
int draft_module_exec(PyObject *module, fm_state *st);

/* ------------------------------------------------------------------------ */
/* views.c                                                                    */

/* The read methods frozendict and Evolver share, for both method tables:
 * iter(m), reversed(m), m.keys(), m.values(), m.items(); new refs or NULL. */
PyObject *view_mapping_tp_iter(PyObject *op);
PyObject *view_mapping_py_reversed(PyObject *op, PyObject *unused);
PyObject *view_mapping_py_keys(PyObject *op, PyObject *unused);
PyObject *view_mapping_py_values(PyObject *op, PyObject *unused);
PyObject *view_mapping_py_items(PyObject *op, PyObject *unused);

#endif /* FROZENMAP_CFROZENMAP_H */
