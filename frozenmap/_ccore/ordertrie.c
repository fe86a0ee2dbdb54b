/* ordertrie.c -- the insertion-order index: a radix trie on seq (leaves of
 * 8 items, inner nodes of 16 children; the pure core's are 16 and 8).
 * Mirrors frozenmap/_pycore/ordertrie.py function by function; the essay at
 * the top of frozendict.c explains it, cfrozenmap.h has the contracts.
 *
 * C-only details:
 *  - Leaves store key and value as two pointers (strong references: the order
 *    trie is what owns a version's keys and values); the pure core stores a
 *    (key, value) tuple.
 *  - cap is the room in slots.  Nodes made by a transient get room for the
 *    whole fanout, so appends in an evolver or builder fill a node in place;
 *    published copies, and order_build's nodes, are sized exactly.
 *  - In-place edit rights come from uniqueness, as in keytrie.c: a transient
 *    edits a node whose count, and every count above it, is 1.  (The pure
 *    core compares owner tokens; the two rules agree because every holder of
 *    a version -- a frozendict, an iterator, a saved transient -- holds a
 *    reference on its roots.)
 *  - Like keytrie.c, edits are failure-atomic: allocation first, in-place
 *    writes (only in editable nodes, which are top-closed) after.
 *  - A node is tracked by the GC only when a reference cycle can pass through
 *    it: a leaf holding a key or value of a GC type, an inner node with a
 *    tracked child (as CPython untracks dicts and tuples of atomic objects).
 *    A node over str/int/float/bytes/None items holds nothing a cycle can
 *    come back through, and the collections that every allocation triggers
 *    then skip it (they were ~20% of a construction).  The rule is kept
 *    conservatively: a copy of a tracked node is tracked, and an edit that
 *    stores a GC object or a tracked child tracks the node (order_track_if),
 *    including in-place edits, whose parents check again on the way up.
 */
#include "cfrozenmap.h"

/* Whether a transient (owner != 0) may edit node in place; callers pass the
 * owner on to children only below an editable node. */
static inline int
order_editable(order_node *node, uint64_t owner)
{
    return owner != 0 && fm_unique((PyObject *)node);
}

static inline uint64_t
order_prefix_of(uint64_t seq, int shift)
{
    int top = shift + order_width(shift);
    return top >= 64 ? 0 : seq >> top;
}

/* The smallest seq the node's range covers. */
static inline uint64_t
order_base(order_node *node)
{
    int top = node->shift + order_width(node->shift);
    return top >= 64 ? 0 : node->prefix << top;
}

static inline int
order_covers(order_node *node, uint64_t seq)
{
    return order_prefix_of(seq, node->shift) == node->prefix;
}

static inline unsigned
order_digit(uint64_t seq, int shift)
{
    return (unsigned)(seq >> shift) & ((1u << order_width(shift)) - 1);
}

/* The dense index of bit among the bits set in bitmap. */
static inline int
order_index(uint32_t bitmap, uint32_t bit)
{
    return FM_POPCOUNT32(bitmap & (bit - 1));
}

/* Pointers a slot takes: 2 in a leaf (key, value), 1 in an inner node. */
static inline int
order_units(int shift)
{
    return shift == 0 ? 2 : 1;
}

/* --- allocation ---------------------------------------------------------- */

/* Whether a cycle can pass through o (a key, value or child): o's type is a
 * GC type (a type object, a dict, ...), or o is a tracked node. */
static inline int
order_item_needs_gc(PyObject *o)
{
    return PyType_IS_GC(Py_TYPE(o));
}

/* Track n (not yet or already tracked) when cond says it must be. */
static inline void
order_track_if(order_node *n, int cond)
{
    if (cond && !n->gc) {
        n->gc = 1;
        PyObject_GC_Track(n);
    }
}

/* n->gc mirrors PyObject_GC_IsTracked (a call) for a live node: set when
 * it is tracked, never cleared before its deallocation. */
static inline int
order_is_tracked(order_node *n)
{
    return n->gc;
}

/* Free lists: every derivation allocates a path of nodes and frees the one
 * of the version it replaces, so a dealloc'd node is kept (per size, in the
 * module state, up to ORDER_FREE_MAX) and the next allocation of that size
 * takes it back: no trip through the GC allocator and its per-allocation
 * bookkeeping (as CPython's tuples do).  A kept node holds no references
 * (not even its type); PyObject_Init makes it an object again.  Free-
 * threaded builds allocate every time (the lists would need a lock). */
void
order_free_lists_clear(fm_state *st)
{
#if !FM_FREE_THREADED
    for (int i = 0; i < ORDER_FREE_SIZES; i++) {
        while (st->order_free[i] != NULL) {
            order_node *n = st->order_free[i];
            st->order_free[i] = (order_node *)n->slots[0];
            PyObject_GC_Del(n);
        }
        st->order_nfree[i] = 0;
    }
#else
    (void)st;
#endif
}

/* An untracked node with room for cap slots and nothing in it yet. */
static order_node *
order_alloc(fm_state *st, int shift, uint64_t prefix, int cap)
{
    int units = cap * order_units(shift);
    order_node *n;
#if !FM_FREE_THREADED
    n = st->order_free[units];
    if (n != NULL) {
        st->order_free[units] = (order_node *)n->slots[0];
        st->order_nfree[units]--;
        PyObject_Init((PyObject *)n, st->order_type);
    }
    else
#endif
    {
        n = PyObject_GC_NewVar(order_node, st->order_type, (Py_ssize_t)units);
        if (n == NULL) {
            return NULL;
        }
    }
    n->prefix = prefix; /* overwrites the ob_size the allocator wrote */
    n->bitmap = 0;
    n->shift = (uint8_t)shift;
    n->cap = (uint8_t)cap;
    n->gc = 0;
    return n;
}

static inline int
order_capacity(order_node *n)
{
    return n->cap;
}

/* Room for a node of count slots: transients get the whole fanout so that
 * appends fill a node in place; one-shot derivations get exact sizes. */
static inline int
order_new_capacity(int count, int shift, uint64_t owner)
{
    return owner != 0 ? order_fanout_at(shift) : count;
}

/* A copy of node with the same contents (new refs), room for cap slots. */
FM_POPCNT_CLONES
static order_node *
order_copy(fm_state *st, order_node *node, int cap)
{
    order_node *n = order_alloc(st, node->shift, node->prefix, cap);
    if (n == NULL) {
        return NULL;
    }
    int units = order_count(node) * order_units(node->shift);
    PyObject **src = node->slots, **dst = n->slots;
    FM_UNROLL4
    for (int i = 0; i < units; i++) {
        dst[i] = Py_NewRef(src[i]);
    }
    n->bitmap = node->bitmap;
    order_track_if(n, order_is_tracked(node));
    return n;
}

static order_node *
order_leaf(fm_state *st, uint64_t seq, PyObject *key, PyObject *value, uint64_t owner)
{
    order_node *n =
        order_alloc(st, 0, order_prefix_of(seq, 0), order_new_capacity(1, 0, owner));
    if (n == NULL) {
        return NULL;
    }
    n->slots[0] = Py_NewRef(key);
    n->slots[1] = Py_NewRef(value);
    n->bitmap = (uint16_t)(1u << order_digit(seq, 0));
    order_track_if(n, order_item_needs_gc(key) || order_item_needs_gc(value));
    return n;
}

static PyObject *
order_sizeof(PyObject *self, PyObject *unused)
{
    order_node *n = (order_node *)self;
    return PyLong_FromSsize_t((Py_ssize_t)offsetof(order_node, slots)
                              + (Py_ssize_t)n->cap * order_units(n->shift)
                                    * (Py_ssize_t)sizeof(PyObject *));
}

static int
order_traverse(PyObject *self, visitproc visit, void *arg)
{
    order_node *n = (order_node *)self;
    int units = order_count(n) * order_units(n->shift);
    for (int i = 0; i < units; i++) {
        Py_VISIT(n->slots[i]);
    }
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static void order_release(order_node *n);

/* A tracked node (one that holds a GC object somewhere below it: see
 * order_track_if) goes through the trashcan: the items it releases can
 * release other tries in turn (an iterator over one, a list holding a
 * frozendict, ...), a chain of any length.  An untracked node has no GC
 * object below it: its own recursion is bounded by the trie's depth, and a
 * chain through its items (atoms, or a non-GC type holding a reference)
 * reaches a frozendict, Evolver or iterator, whose own trashcan bounds it.
 * So it skips the trashcan, whose bookkeeping was ~2% of a derivation, and
 * the call that untracks. */
static void
order_dealloc(PyObject *self)
{
    order_node *n = (order_node *)self;
    if (!n->gc) {
        order_release(n);
        return;
    }
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, order_dealloc)
    order_release(n);
    Py_TRASHCAN_END
}

/* Release n's slots, then keep n on a free list or free it. */
FM_POPCNT_CLONES
static void
order_release(order_node *n)
{
    PyObject *self = (PyObject *)n;
    PyTypeObject *tp = Py_TYPE(self);
    int units = order_count(n) * order_units(n->shift);
    PyObject **slots = n->slots;
    FM_UNROLL4
    for (int i = 0; i < units; i++) {
        Py_DECREF(slots[i]);
    }
#if !FM_FREE_THREADED
    /* A node holds its type, the type its module (ht_module, which the
     * type's tp_clear drops when the GC breaks the module's cycles: then,
     * or after the module's own clear set order_type to NULL, nothing is
     * kept). */
    PyObject *module = ((PyHeapTypeObject *)tp)->ht_module;
    fm_state *st = module != NULL ? (fm_state *)PyModule_GetState(module) : NULL;
    int size = n->cap * order_units(n->shift);
    if (st != NULL && st->order_type == tp && st->order_nfree[size] < ORDER_FREE_MAX) {
        n->slots[0] = (PyObject *)st->order_free[size];
        st->order_free[size] = n;
        st->order_nfree[size]++;
    }
    else
#endif
    {
        tp->tp_free(self);
    }
    Py_DECREF(tp);
}

static PyMethodDef order_node_methods[] = {
    {"__sizeof__", order_sizeof, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot order_node_slots[] = {
    {Py_tp_dealloc, order_dealloc},
    {Py_tp_methods, order_node_methods},
    {Py_tp_traverse, order_traverse},
    {Py_tp_doc, "internal: a node of frozenmap's order trie"},
    {0, NULL},
};

PyType_Spec order_node_spec = {
    .name = "frozenmap._ccore._cfrozenmap.OrderNode",
    .basicsize = offsetof(order_node, slots),
    .itemsize = sizeof(PyObject *),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = order_node_slots,
};

/* --- lookup -------------------------------------------------------------- */

int
order_get(order_node *node, uint64_t seq, PyObject **key, PyObject **value)
{
    while (node != NULL) {
        if (!order_covers(node, seq)) {
            return 0;
        }
        unsigned bit = 1u << order_digit(seq, node->shift);
        if (!(node->bitmap & bit)) {
            return 0;
        }
        int i = order_index(node->bitmap, bit);
        if (node->shift == 0) {
            *key = order_key(node, i);
            *value = order_value(node, i);
            return 1;
        }
        node = order_child(node, i);
    }
    return 0;
}

int
order_last(order_node *node, uint64_t *seq, PyObject **key, PyObject **value)
{
    if (node == NULL) {
        return 0;
    }
    while (node->shift) {
        node = order_child(node, order_count(node) - 1);
    }
    int i = order_count(node) - 1;
    /* the leaf's highest digit: bitmap < 2**8 */
    *seq = order_base(node) | (uint64_t)(63 - FM_CLZ64((uint64_t)node->bitmap));
    *key = order_key(node, i);
    *value = order_value(node, i);
    return 1;
}

/* --- insertion ----------------------------------------------------------- */

/* A new inner node over two nodes with disjoint ranges (steals both). */
static order_node *
order_join(fm_state *st, order_node *a, order_node *b, uint64_t owner)
{
    uint64_t sa = order_base(a), sb = order_base(b);
    /* The lowest level whose digit tells the two ranges apart. */
    int top = 63 - FM_CLZ64(sa ^ sb);
    int shift =
        top < ORDER_LEAF_BITS
            ? 0
            : ORDER_LEAF_BITS + (top - ORDER_LEAF_BITS) / ORDER_INNER_BITS * ORDER_INNER_BITS;
    unsigned da = order_digit(sa, shift), db = order_digit(sb, shift);
    order_node *n = order_alloc(st, shift, order_prefix_of(sa, shift),
                                order_new_capacity(2, shift, owner));
    if (n == NULL) {
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
    }
    n->slots[da < db ? 0 : 1] = (PyObject *)a;
    n->slots[da < db ? 1 : 0] = (PyObject *)b;
    n->bitmap = (uint16_t)((1u << da) | (1u << db));
    order_track_if(n, order_is_tracked(a) || order_is_tracked(b));
    return n;
}

/* node (which must be editable or is copied) with slot i replaced by
 * new_child (stolen). */
FM_POPCNT_CLONES
static order_node *
order_with_child(fm_state *st, order_node *node, int i, order_node *new_child, uint64_t owner)
{
    if (order_editable(node, owner)) {
        order_track_if(node, order_is_tracked(new_child));
        Py_SETREF(node->slots[i], (PyObject *)new_child);
        return (order_node *)Py_NewRef(node);
    }
    /* A copy that takes new refs on every child but the one replaced (no
     * incref and decref of the old child). */
    order_node *n = order_alloc(st, node->shift, node->prefix,
                                order_new_capacity(order_count(node), node->shift, owner));
    if (n == NULL) {
        Py_DECREF(new_child);
        return NULL;
    }
    int count = order_count(node);
    PyObject **src = node->slots, **dst = n->slots;
    FM_UNROLL4
    for (int k = 0; k < i; k++) {
        dst[k] = Py_NewRef(src[k]);
    }
    dst[i] = (PyObject *)new_child;
    FM_UNROLL4
    for (int k = i + 1; k < count; k++) {
        dst[k] = Py_NewRef(src[k]);
    }
    n->bitmap = node->bitmap;
    order_track_if(n, order_is_tracked(node) || order_is_tracked(new_child));
    return n;
}

FM_POPCNT_CLONES
order_node *
order_insert(fm_state *st, order_node *node, uint64_t seq, PyObject *key, PyObject *value,
             uint64_t owner)
{
    if (node == NULL) {
        return order_leaf(st, seq, key, value, owner);
    }
    owner = order_editable(node, owner) ? owner : 0;
    if (!order_covers(node, seq)) {
        order_node *leaf = order_leaf(st, seq, key, value, owner);
        if (leaf == NULL) {
            return NULL;
        }
        return order_join(st, (order_node *)Py_NewRef(node), leaf, owner);
    }
    int shift = node->shift;
    unsigned bit = 1u << order_digit(seq, shift);
    int i = order_index(node->bitmap, bit);
    if (node->bitmap & bit) {
        if (shift == 0) {
            PyErr_SetString(PyExc_SystemError, "order_insert: seq already present");
            return NULL;
        }
        order_node *child = order_child(node, i);
        order_node *new_child = order_insert(st, child, seq, key, value, owner);
        if (new_child == NULL) {
            return NULL;
        }
        if (new_child == child) { /* edited in place: it may track now */
            order_track_if(node, order_is_tracked(child));
            Py_DECREF(new_child);
            return (order_node *)Py_NewRef(node);
        }
        return order_with_child(st, node, i, new_child, owner);
    }
    /* A free digit: a new slot at index i. */
    order_node *leaf = NULL;
    if (shift != 0) {
        leaf = order_leaf(st, seq, key, value, owner);
        if (leaf == NULL) {
            return NULL;
        }
    }
    int count = order_count(node), units = order_units(shift);
    order_node *n;
    if (order_editable(node, owner) && order_capacity(node) > count) {
        n = (order_node *)Py_NewRef(node);
        memmove(&n->slots[(i + 1) * units], &n->slots[i * units],
                (size_t)(count - i) * units * sizeof(PyObject *));
    }
    else {
        n = order_alloc(st, shift, node->prefix, order_new_capacity(count + 1, shift, owner));
        if (n == NULL) {
            Py_XDECREF(leaf);
            return NULL;
        }
        FM_UNROLL4
        for (int k = 0; k < i * units; k++) {
            n->slots[k] = Py_NewRef(node->slots[k]);
        }
        FM_UNROLL4
        for (int k = i * units; k < count * units; k++) {
            n->slots[k + units] = Py_NewRef(node->slots[k]);
        }
        n->bitmap = node->bitmap;
        order_track_if(n, order_is_tracked(node));
    }
    if (shift == 0) {
        n->slots[2 * i] = Py_NewRef(key);
        n->slots[2 * i + 1] = Py_NewRef(value);
    }
    else {
        n->slots[i] = (PyObject *)leaf;
    }
    n->bitmap |= (uint16_t)bit;
    order_track_if(n, shift == 0 ? order_item_needs_gc(key) || order_item_needs_gc(value)
                                 : order_is_tracked(leaf));
    return n;
}

FM_POPCNT_CLONES
order_node *
order_replace(fm_state *st, order_node *node, uint64_t seq, PyObject *value, uint64_t owner)
{
    owner = order_editable(node, owner) ? owner : 0;
    unsigned bit = 1u << order_digit(seq, node->shift);
    int i = order_index(node->bitmap, bit);
    if (!(node->bitmap & bit) || !order_covers(node, seq)) {
        PyErr_SetString(PyExc_SystemError, "order_replace: seq absent");
        return NULL;
    }
    if (node->shift == 0) {
        order_node *n;
        if (order_editable(node, owner)) {
            n = (order_node *)Py_NewRef(node);
        }
        else {
            n = order_copy(st, node, order_new_capacity(order_count(node), 0, owner));
            if (n == NULL) {
                return NULL;
            }
        }
        order_track_if(n, order_item_needs_gc(value));
        Py_SETREF(n->slots[2 * i + 1], Py_NewRef(value));
        return n;
    }
    order_node *child = order_child(node, i);
    order_node *new_child = order_replace(st, child, seq, value, owner);
    if (new_child == NULL) {
        return NULL;
    }
    if (new_child == child) { /* edited in place: it may track now */
        order_track_if(node, order_is_tracked(child));
        Py_DECREF(new_child);
        return (order_node *)Py_NewRef(node);
    }
    return order_with_child(st, node, i, new_child, owner);
}

FM_POPCNT_CLONES
int
order_remove(fm_state *st, order_node *node, uint64_t seq, uint64_t owner, order_node **result)
{
    owner = order_editable(node, owner) ? owner : 0;
    unsigned bit = 1u << order_digit(seq, node->shift);
    int i = order_index(node->bitmap, bit);
    int count = order_count(node), units = order_units(node->shift);
    if (!(node->bitmap & bit) || !order_covers(node, seq)) {
        PyErr_SetString(PyExc_SystemError, "order_remove: seq absent");
        return -1;
    }
    if (node->shift == 0) {
        if (node->bitmap == bit) {
            *result = NULL;
            return 0;
        }
    }
    else {
        order_node *child = order_child(node, i);
        order_node *new_child;
        if (order_remove(st, child, seq, owner, &new_child) < 0) {
            return -1;
        }
        if (new_child != NULL) {
            if (new_child == child) {
                Py_DECREF(new_child);
                *result = (order_node *)Py_NewRef(node);
                return 0;
            }
            *result = order_with_child(st, node, i, new_child, owner);
            return *result == NULL ? -1 : 0;
        }
        if (count == 2) {
            /* An inner node left with one child gives way to it. */
            *result = (order_node *)Py_NewRef(node->slots[1 - i]);
            return 0;
        }
    }
    /* Drop slot i. */
    if (order_editable(node, owner)) {
        PyObject *dropped[2];
        memcpy(dropped, &node->slots[i * units], units * sizeof(PyObject *));
        memmove(&node->slots[i * units], &node->slots[(i + 1) * units],
                (size_t)(count - i - 1) * units * sizeof(PyObject *));
        node->bitmap ^= (uint16_t)bit;
        for (int k = 0; k < units; k++) {
            Py_DECREF(dropped[k]);
        }
        *result = (order_node *)Py_NewRef(node);
        return 0;
    }
    order_node *n = order_alloc(st, node->shift, node->prefix,
                                order_new_capacity(count - 1, node->shift, owner));
    if (n == NULL) {
        return -1;
    }
    FM_UNROLL4
    for (int k = 0; k < i * units; k++) {
        n->slots[k] = Py_NewRef(node->slots[k]);
    }
    FM_UNROLL4
    for (int k = (i + 1) * units; k < count * units; k++) {
        n->slots[k - units] = Py_NewRef(node->slots[k]);
    }
    n->bitmap = node->bitmap ^ (uint16_t)bit;
    order_track_if(n, order_is_tracked(node));
    *result = n;
    return 0;
}

/* --- bulk build ---------------------------------------------------------- */

/* Release the references of entries[from:n] (order_build failed). */
static void
order_build_release(const champ_entry *entries, Py_ssize_t from, Py_ssize_t n)
{
    for (Py_ssize_t i = from; i < n; i++) {
        Py_DECREF(entries[i].key);
        Py_DECREF(entries[i].value);
    }
}

order_node *
order_build(fm_state *st, const champ_entry *entries, Py_ssize_t n, int may_gc)
{
    if (n == 0) {
        return NULL;
    }
    const int leaf_fanout = order_fanout_at(0), inner_fanout = order_fanout_at(1);
    Py_ssize_t nlevel = (n + leaf_fanout - 1) / leaf_fanout;
    order_node **level = PyMem_Malloc(nlevel * sizeof(order_node *));
    if (level == NULL) {
        order_build_release(entries, 0, n);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t j = 0; j < nlevel; j++) {
        Py_ssize_t start = j * leaf_fanout;
        int len = (int)(n - start < leaf_fanout ? n - start : leaf_fanout);
        order_node *leaf = order_alloc(st, 0, order_prefix_of((uint64_t)start, 0), len);
        if (leaf == NULL) {
            order_build_release(entries, start, n);
            while (j > 0) {
                Py_DECREF(level[--j]);
            }
            PyMem_Free(level);
            return NULL;
        }
        const champ_entry *e = entries + start;
        if (FM_LIKELY(len == leaf_fanout)) {
            /* Every leaf but the last is full: a fixed-count copy that the
             * compiler unrolls (the loop's counter, compare and branch were
             * as many instructions as the copy itself). */
            _Static_assert(1 << ORDER_LEAF_BITS == 8, "FM_UNROLL8 unrolls a full leaf's copy");
            FM_UNROLL8
            for (int k = 0; k < (1 << ORDER_LEAF_BITS); k++) {
                leaf->slots[2 * k] = e[k].key; /* the caller's references */
                leaf->slots[2 * k + 1] = e[k].value;
            }
        }
        else {
            for (int k = 0; k < len; k++) {
                leaf->slots[2 * k] = e[k].key;
                leaf->slots[2 * k + 1] = e[k].value;
            }
        }
        leaf->bitmap = (uint16_t)((1u << len) - 1);
        if (may_gc) {
            int gc = 0;
            for (int k = 0; k < len; k++) {
                gc |= order_item_needs_gc(e[k].key) | order_item_needs_gc(e[k].value);
            }
            order_track_if(leaf, gc);
        }
        level[j] = leaf;
    }
    int shift = ORDER_LEAF_BITS;
    while (nlevel > 1) {
        Py_ssize_t nparents = 0;
        for (Py_ssize_t start = 0; start < nlevel; start += inner_fanout) {
            int len = (int)(nlevel - start < inner_fanout ? nlevel - start : inner_fanout);
            if (len == 1) {
                level[nparents++] = level[start]; /* a lone child is not wrapped */
                continue;
            }
            uint64_t base = order_base(level[start]);
            order_node *p = order_alloc(st, shift, order_prefix_of(base, shift), len);
            if (p == NULL) {
                for (Py_ssize_t k = 0; k < nparents; k++) {
                    Py_DECREF(level[k]);
                }
                for (Py_ssize_t k = start; k < nlevel; k++) {
                    Py_DECREF(level[k]);
                }
                PyMem_Free(level);
                return NULL;
            }
            unsigned bitmap = 0;
            int tracked = 0;
            for (int k = 0; k < len; k++) {
                order_node *child = level[start + k];
                bitmap |= 1u << order_digit(order_base(child), shift);
                p->slots[k] = (PyObject *)child;
                tracked |= order_is_tracked(child);
            }
            p->bitmap = (uint16_t)bitmap;
            order_track_if(p, tracked);
            level[nparents++] = p;
        }
        nlevel = nparents;
        shift += ORDER_INNER_BITS;
    }
    order_node *root = level[0];
    PyMem_Free(level);
    return root;
}

/* --- iteration ----------------------------------------------------------- */

void
order_cursor_init(order_cursor *c, order_node *root, int reverse)
{
    c->reverse = reverse;
    if (root == NULL) {
        c->depth = -1;
        return;
    }
    c->depth = 0;
    c->stack[0] = root;
    c->pos[0] = (int8_t)(reverse ? order_count(root) - 1 : 0);
}

FM_POPCNT_CLONES
int
order_cursor_next(order_cursor *c, PyObject **key, PyObject **value)
{
    while (c->depth >= 0) {
        order_node *n = c->stack[c->depth];
        int p = c->pos[c->depth];
        if (p < 0 || p >= order_count(n)) {
            c->depth--;
            continue;
        }
        c->pos[c->depth] = (int8_t)(c->reverse ? p - 1 : p + 1);
        if (n->shift == 0) {
            *key = order_key(n, p);
            *value = order_value(n, p);
            return 1;
        }
        order_node *child = order_child(n, p);
        c->depth++;
        c->stack[c->depth] = child;
        c->pos[c->depth] = (int8_t)(c->reverse ? order_count(child) - 1 : 0);
    }
    return 0;
}

/* --- checking and debugging ---------------------------------------------- */

static int
order_fail(const char *msg)
{
    PyErr_SetString(PyExc_AssertionError, msg);
    return -1;
}

/* Checks node; *count += items; *last is the last seq seen (strictly
 * increasing), *seen whether any. */
static int
order_check_node(order_node *node, int parent_shift, uint64_t *last, int *seen,
                 Py_ssize_t *count)
{
    if (node->shift != 0
        && ((node->shift - ORDER_LEAF_BITS) % ORDER_INNER_BITS != 0
            || node->shift > ORDER_MAX_SHIFT)) {
        return order_fail("bad order-node shift");
    }
    if (parent_shift >= 0 && node->shift >= parent_shift) {
        return order_fail("child not below its parent");
    }
    if (node->bitmap == 0) {
        return order_fail("empty order node");
    }
    if (node->gc != PyObject_GC_IsTracked((PyObject *)node)) {
        return order_fail("order node's gc flag differs from the GC's state");
    }
    if (order_capacity(node) < order_count(node)
        || order_capacity(node) > order_fanout_at(node->shift)) {
        return order_fail("order node over capacity");
    }
    if (node->shift && order_count(node) < 2) {
        return order_fail("inner node with one child (must be collapsed)");
    }
    unsigned bits = node->bitmap;
    for (int i = 0; i < order_count(node); i++) {
        unsigned bit = bits & (~bits + 1);
        bits ^= bit;
        uint64_t here = order_base(node) | ((uint64_t)FM_POPCOUNT32(bit - 1) << node->shift);
        if (node->shift == 0) {
            if (order_key(node, i) == NULL || order_value(node, i) == NULL) {
                return order_fail("leaf slot is not a (key, value)");
            }
            if ((order_item_needs_gc(order_key(node, i))
                 || order_item_needs_gc(order_value(node, i)))
                && !order_is_tracked(node)) {
                return order_fail("leaf holding a GC object is not tracked");
            }
            if (*seen && here <= *last) {
                return order_fail("seqs out of order");
            }
            *last = here;
            *seen = 1;
            (*count)++;
        }
        else {
            order_node *child = order_child(node, i);
            if (order_base(child) >> node->shift != here >> node->shift) {
                return order_fail("child off its digit");
            }
            if (order_is_tracked(child) && !order_is_tracked(node)) {
                return order_fail("node over a tracked child is not tracked");
            }
            if (order_check_node(child, node->shift, last, seen, count) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

Py_ssize_t
order_check(order_node *root, PyObject *unused)
{
    Py_ssize_t count = 0;
    uint64_t last = 0;
    int seen = 0;
    if (root != NULL && order_check_node(root, -1, &last, &seen, &count) < 0) {
        return -1;
    }
    return count;
}

int
order_node_ids(order_node *node, PyObject *out)
{
    if (node == NULL) {
        return 0;
    }
    PyObject *id = PyLong_FromVoidPtr(node);
    if (id == NULL || PyList_Append(out, id) < 0) {
        Py_XDECREF(id);
        return -1;
    }
    Py_DECREF(id);
    if (node->shift) {
        for (int i = 0; i < order_count(node); i++) {
            if (order_node_ids(order_child(node, i), out) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

static int
order_dump_line(PyObject *out, PyObject *line)
{
    if (line == NULL) {
        return -1;
    }
    int r = PyList_Append(out, line);
    Py_DECREF(line);
    return r;
}

int
order_dump(order_node *node, int indent, PyObject *out)
{
    char pad[80];
    int w = indent * 2 < 78 ? indent * 2 : 78;
    memset(pad, ' ', w);
    pad[w] = 0;
    if (node == NULL) {
        return order_dump_line(out, PyUnicode_FromFormat("%s(empty)", pad));
    }
    char buf[96];
    PyOS_snprintf(buf, sizeof(buf), "Order shift=%d prefix=0x%llx bitmap=0x%x", node->shift,
                  (unsigned long long)node->prefix, (unsigned)node->bitmap);
    if (order_dump_line(out, PyUnicode_FromFormat("%s%s", pad, buf)) < 0) {
        return -1;
    }
    for (int i = 0; i < order_count(node); i++) {
        if (node->shift == 0) {
            if (order_dump_line(out,
                                PyUnicode_FromFormat("%s  (%R, %R)", pad, order_key(node, i),
                                                     order_value(node, i)))
                < 0) {
                return -1;
            }
        }
        else if (order_dump(order_child(node, i), indent + 1, out) < 0) {
            return -1;
        }
    }
    return 0;
}

/* A new dict of the trie's items in order (what pickling and __getnewargs__
 * need); root is borrowed and may be NULL; new ref or NULL. */
PyObject *
order_as_dict(order_node *root)
{
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return NULL;
    }
    order_cursor c;
    order_cursor_init(&c, root, 0);
    PyObject *k, *v;
    while (order_cursor_next(&c, &k, &v)) {
        if (PyDict_SetItem(d, k, v) < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}
