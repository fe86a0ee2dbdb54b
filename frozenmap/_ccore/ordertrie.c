/* ordertrie.c -- the insertion-order index: a 16-way radix trie on seq.
 * Mirrors frozenmap/_pycore/ordertrie.py function by function; the essay at
 * the top of frozendict.c explains it, cfrozenmap.h has the contracts.
 *
 * C-only details:
 *  - Leaves store key and value as two pointers (strong references: the order
 *    trie is what owns a version's keys and values); the pure core stores a
 *    (key, value) tuple.
 *  - ob_size is the capacity in pointers.  Nodes made by a transient get room
 *    for all 16 slots, so appends in an evolver or builder fill a leaf in
 *    place; published copies are sized exactly.
 *  - Like keytrie.c, edits are failure-atomic: allocation first, in-place
 *    writes (only in owned nodes, which are top-closed) after.
 */
#include "cfrozenmap.h"

static inline int
order_editable(order_node *node, uint64_t owner)
{
    return owner != 0 && node->owner == owner;
}

static inline uint64_t
order_prefix_of(uint64_t seq, int shift)
{
    return shift + ORDER_BITS >= 64 ? 0 : seq >> (shift + ORDER_BITS);
}

/* The smallest seq the node's range covers. */
static inline uint64_t
order_base(order_node *node)
{
    return node->shift + ORDER_BITS >= 64 ? 0
           : node->prefix << (node->shift + ORDER_BITS);
}

static inline int
order_covers(order_node *node, uint64_t seq)
{
    return order_prefix_of(seq, node->shift) == node->prefix;
}

#define ORDER_DIGIT(seq, shift) ((unsigned)(((seq) >> (shift)) & ORDER_MASK))
#define ORDER_INDEX(bitmap, bit) FM_POPCOUNT32((bitmap) & ((bit) - 1))
#define ORDER_UNITS(shift) ((shift) == 0 ? 2 : 1)

/* --- allocation ---------------------------------------------------------- */

/* An untracked node with room for cap slots and nothing in it yet. */
static order_node *
order_alloc(fm_state *st, int shift, uint64_t prefix, int cap, uint64_t owner)
{
    order_node *n = PyObject_GC_NewVar(order_node, st->order_type,
                                       (Py_ssize_t)cap * ORDER_UNITS(shift));
    if (n == NULL) {
        return NULL;
    }
    n->prefix = prefix;
    n->owner = owner;
    n->bitmap = 0;
    n->shift = (uint8_t)shift;
    return n;
}

static inline int
order_capacity(order_node *n)
{
    return (int)(Py_SIZE(n) / ORDER_UNITS(n->shift));
}

static inline int
order_new_capacity(int count, uint64_t owner)
{
    return owner != 0 ? ORDER_FANOUT : count;
}

/* A copy of node with the same contents (new refs), room for cap slots. */
static order_node *
order_copy(fm_state *st, order_node *node, int cap, uint64_t owner)
{
    order_node *n = order_alloc(st, node->shift, node->prefix, cap, owner);
    if (n == NULL) {
        return NULL;
    }
    int units = ORDER_COUNT(node) * ORDER_UNITS(node->shift);
    for (int i = 0; i < units; i++) {
        n->slots[i] = Py_NewRef(node->slots[i]);
    }
    n->bitmap = node->bitmap;
    PyObject_GC_Track(n);
    return n;
}

static order_node *
order_leaf(fm_state *st, uint64_t seq, PyObject *key, PyObject *value,
           uint64_t owner)
{
    order_node *n = order_alloc(st, 0, seq >> ORDER_BITS,
                                order_new_capacity(1, owner), owner);
    if (n == NULL) {
        return NULL;
    }
    n->slots[0] = Py_NewRef(key);
    n->slots[1] = Py_NewRef(value);
    n->bitmap = (uint16_t)(1u << ORDER_DIGIT(seq, 0));
    PyObject_GC_Track(n);
    return n;
}

static int
order_traverse(PyObject *self, visitproc visit, void *arg)
{
    order_node *n = (order_node *)self;
    int units = ORDER_COUNT(n) * ORDER_UNITS(n->shift);
    for (int i = 0; i < units; i++) {
        Py_VISIT(n->slots[i]);
    }
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static void
order_dealloc(PyObject *self)
{
    order_node *n = (order_node *)self;
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    Py_TRASHCAN_BEGIN(self, order_dealloc)
    int units = ORDER_COUNT(n) * ORDER_UNITS(n->shift);
    for (int i = 0; i < units; i++) {
        Py_DECREF(n->slots[i]);
    }
    tp->tp_free(self);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

static PyType_Slot order_node_slots[] = {
    {Py_tp_dealloc, order_dealloc},
    {Py_tp_traverse, order_traverse},
    {Py_tp_doc, "internal: a node of frozenmap's order trie"},
    {0, NULL},
};

PyType_Spec order_node_spec = {
    .name = "frozenmap._ccore._cfrozenmap.OrderNode",
    .basicsize = offsetof(order_node, slots),
    .itemsize = sizeof(PyObject *),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
             | Py_TPFLAGS_DISALLOW_INSTANTIATION,
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
        unsigned bit = 1u << ORDER_DIGIT(seq, node->shift);
        if (!(node->bitmap & bit)) {
            return 0;
        }
        int i = ORDER_INDEX(node->bitmap, bit);
        if (node->shift == 0) {
            *key = ORDER_KEY(node, i);
            *value = ORDER_VALUE(node, i);
            return 1;
        }
        node = ORDER_CHILD(node, i);
    }
    return 0;
}

int
order_last(order_node *node, PyObject **key, PyObject **value)
{
    if (node == NULL) {
        return 0;
    }
    while (node->shift) {
        node = ORDER_CHILD(node, ORDER_COUNT(node) - 1);
    }
    int i = ORDER_COUNT(node) - 1;
    *key = ORDER_KEY(node, i);
    *value = ORDER_VALUE(node, i);
    return 1;
}

/* --- insertion ----------------------------------------------------------- */

/* A new inner node over two nodes with disjoint ranges (steals both). */
static order_node *
order_join(fm_state *st, order_node *a, order_node *b, uint64_t owner)
{
    uint64_t sa = order_base(a), sb = order_base(b);
    int shift = (63 - FM_CLZ64(sa ^ sb)) / ORDER_BITS * ORDER_BITS;
    unsigned da = ORDER_DIGIT(sa, shift), db = ORDER_DIGIT(sb, shift);
    order_node *n = order_alloc(st, shift, order_prefix_of(sa, shift),
                                order_new_capacity(2, owner), owner);
    if (n == NULL) {
        Py_DECREF(a);
        Py_DECREF(b);
        return NULL;
    }
    n->slots[da < db ? 0 : 1] = (PyObject *)a;
    n->slots[da < db ? 1 : 0] = (PyObject *)b;
    n->bitmap = (uint16_t)((1u << da) | (1u << db));
    PyObject_GC_Track(n);
    return n;
}

/* node (which must be editable or is copied) with slot i replaced by
 * new_child (stolen). */
static order_node *
order_with_child(fm_state *st, order_node *node, int i, order_node *new_child,
                 uint64_t owner)
{
    if (order_editable(node, owner)) {
        Py_SETREF(node->slots[i], (PyObject *)new_child);
        return (order_node *)Py_NewRef(node);
    }
    order_node *n = order_copy(st, node, order_new_capacity(ORDER_COUNT(node), owner),
                               owner);
    if (n == NULL) {
        Py_DECREF(new_child);
        return NULL;
    }
    Py_SETREF(n->slots[i], (PyObject *)new_child);
    return n;
}

FM_POPCNT_CLONES order_node *
order_insert(fm_state *st, order_node *node, uint64_t seq, PyObject *key,
             PyObject *value, uint64_t owner)
{
    if (node == NULL) {
        return order_leaf(st, seq, key, value, owner);
    }
    if (!order_covers(node, seq)) {
        order_node *leaf = order_leaf(st, seq, key, value, owner);
        if (leaf == NULL) {
            return NULL;
        }
        return order_join(st, (order_node *)Py_NewRef(node), leaf, owner);
    }
    int shift = node->shift;
    unsigned bit = 1u << ORDER_DIGIT(seq, shift);
    int i = ORDER_INDEX(node->bitmap, bit);
    if (node->bitmap & bit) {
        if (shift == 0) {
            PyErr_SetString(PyExc_SystemError, "order_insert: seq already present");
            return NULL;
        }
        order_node *child = ORDER_CHILD(node, i);
        order_node *new_child = order_insert(st, child, seq, key, value, owner);
        if (new_child == NULL) {
            return NULL;
        }
        if (new_child == child) {
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
    int count = ORDER_COUNT(node), units = ORDER_UNITS(shift);
    order_node *n;
    if (order_editable(node, owner) && order_capacity(node) > count) {
        n = (order_node *)Py_NewRef(node);
        memmove(&n->slots[(i + 1) * units], &n->slots[i * units],
                (size_t)(count - i) * units * sizeof(PyObject *));
    }
    else {
        n = order_alloc(st, shift, node->prefix,
                        order_new_capacity(count + 1, owner), owner);
        if (n == NULL) {
            Py_XDECREF(leaf);
            return NULL;
        }
        for (int k = 0; k < i * units; k++) {
            n->slots[k] = Py_NewRef(node->slots[k]);
        }
        for (int k = i * units; k < count * units; k++) {
            n->slots[k + units] = Py_NewRef(node->slots[k]);
        }
        n->bitmap = node->bitmap;
        PyObject_GC_Track(n);
    }
    if (shift == 0) {
        n->slots[2 * i] = Py_NewRef(key);
        n->slots[2 * i + 1] = Py_NewRef(value);
    }
    else {
        n->slots[i] = (PyObject *)leaf;
    }
    n->bitmap |= (uint16_t)bit;
    return n;
}

FM_POPCNT_CLONES order_node *
order_replace(fm_state *st, order_node *node, uint64_t seq, PyObject *value,
              uint64_t owner)
{
    unsigned bit = 1u << ORDER_DIGIT(seq, node->shift);
    int i = ORDER_INDEX(node->bitmap, bit);
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
            n = order_copy(st, node, order_new_capacity(ORDER_COUNT(node), owner), owner);
            if (n == NULL) {
                return NULL;
            }
        }
        Py_SETREF(n->slots[2 * i + 1], Py_NewRef(value));
        return n;
    }
    order_node *child = ORDER_CHILD(node, i);
    order_node *new_child = order_replace(st, child, seq, value, owner);
    if (new_child == NULL) {
        return NULL;
    }
    if (new_child == child) {
        Py_DECREF(new_child);
        return (order_node *)Py_NewRef(node);
    }
    return order_with_child(st, node, i, new_child, owner);
}

FM_POPCNT_CLONES int
order_remove(fm_state *st, order_node *node, uint64_t seq, uint64_t owner,
             order_node **result)
{
    unsigned bit = 1u << ORDER_DIGIT(seq, node->shift);
    int i = ORDER_INDEX(node->bitmap, bit);
    int count = ORDER_COUNT(node), units = ORDER_UNITS(node->shift);
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
        order_node *child = ORDER_CHILD(node, i);
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
                                order_new_capacity(count - 1, owner), owner);
    if (n == NULL) {
        return -1;
    }
    for (int k = 0; k < i * units; k++) {
        n->slots[k] = Py_NewRef(node->slots[k]);
    }
    for (int k = (i + 1) * units; k < count * units; k++) {
        n->slots[k - units] = Py_NewRef(node->slots[k]);
    }
    n->bitmap = node->bitmap ^ (uint16_t)bit;
    PyObject_GC_Track(n);
    *result = n;
    return 0;
}

/* --- bulk build ---------------------------------------------------------- */

order_node *
order_build(fm_state *st, PyObject *const *keys, PyObject *const *values,
            Py_ssize_t n, uint64_t owner)
{
    if (n == 0) {
        return NULL;
    }
    Py_ssize_t nlevel = (n + ORDER_FANOUT - 1) / ORDER_FANOUT;
    order_node **level = PyMem_Malloc(nlevel * sizeof(order_node *));
    if (level == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t j = 0; j < nlevel; j++) {
        Py_ssize_t start = j * ORDER_FANOUT;
        int len = (int)(n - start < ORDER_FANOUT ? n - start : ORDER_FANOUT);
        order_node *leaf = order_alloc(st, 0, (uint64_t)start >> ORDER_BITS,
                                       owner ? ORDER_FANOUT : len, owner);
        if (leaf == NULL) {
            while (j > 0) {
                Py_DECREF(level[--j]);
            }
            PyMem_Free(level);
            return NULL;
        }
        for (int k = 0; k < len; k++) {
            leaf->slots[2 * k] = Py_NewRef(keys[start + k]);
            leaf->slots[2 * k + 1] = Py_NewRef(values[start + k]);
        }
        leaf->bitmap = (uint16_t)((1u << len) - 1);
        PyObject_GC_Track(leaf);
        level[j] = leaf;
    }
    int shift = ORDER_BITS;
    while (nlevel > 1) {
        Py_ssize_t nparents = 0;
        for (Py_ssize_t start = 0; start < nlevel; start += ORDER_FANOUT) {
            int len = (int)(nlevel - start < ORDER_FANOUT ? nlevel - start : ORDER_FANOUT);
            if (len == 1) {
                level[nparents++] = level[start];   /* a lone child is not wrapped */
                continue;
            }
            uint64_t base = order_base(level[start]);
            order_node *p = order_alloc(st, shift, order_prefix_of(base, shift),
                                        owner ? ORDER_FANOUT : len, owner);
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
            for (int k = 0; k < len; k++) {
                order_node *child = level[start + k];
                bitmap |= 1u << ORDER_DIGIT(order_base(child), shift);
                p->slots[k] = (PyObject *)child;
            }
            p->bitmap = (uint16_t)bitmap;
            PyObject_GC_Track(p);
            level[nparents++] = p;
        }
        nlevel = nparents;
        shift += ORDER_BITS;
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
    c->pos[0] = (int8_t)(reverse ? ORDER_COUNT(root) - 1 : 0);
}

FM_POPCNT_CLONES int
order_cursor_next(order_cursor *c, PyObject **key, PyObject **value)
{
    while (c->depth >= 0) {
        order_node *n = c->stack[c->depth];
        int p = c->pos[c->depth];
        if (p < 0 || p >= ORDER_COUNT(n)) {
            c->depth--;
            continue;
        }
        c->pos[c->depth] = (int8_t)(c->reverse ? p - 1 : p + 1);
        if (n->shift == 0) {
            *key = ORDER_KEY(n, p);
            *value = ORDER_VALUE(n, p);
            return 1;
        }
        order_node *child = ORDER_CHILD(n, p);
        c->depth++;
        c->stack[c->depth] = child;
        c->pos[c->depth] = (int8_t)(c->reverse ? ORDER_COUNT(child) - 1 : 0);
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
    if (node->shift % ORDER_BITS != 0 || node->shift > 60) {
        return order_fail("bad order-node shift");
    }
    if (parent_shift >= 0 && node->shift >= parent_shift) {
        return order_fail("child not below its parent");
    }
    if (node->bitmap == 0) {
        return order_fail("empty order node");
    }
    if (order_capacity(node) < ORDER_COUNT(node)) {
        return order_fail("order node over capacity");
    }
    if (node->shift && ORDER_COUNT(node) < 2) {
        return order_fail("inner node with one child (must be collapsed)");
    }
    unsigned bits = node->bitmap;
    for (int i = 0; i < ORDER_COUNT(node); i++) {
        unsigned bit = bits & (~bits + 1);
        bits ^= bit;
        uint64_t here = order_base(node)
                        | ((uint64_t)FM_POPCOUNT32(bit - 1) << node->shift);
        if (node->shift == 0) {
            if (ORDER_KEY(node, i) == NULL || ORDER_VALUE(node, i) == NULL) {
                return order_fail("leaf slot is not a (key, value)");
            }
            if (*seen && here <= *last) {
                return order_fail("seqs out of order");
            }
            *last = here;
            *seen = 1;
            (*count)++;
        }
        else {
            order_node *child = ORDER_CHILD(node, i);
            if (order_base(child) >> node->shift != here >> node->shift) {
                return order_fail("child off its digit");
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
        for (int i = 0; i < ORDER_COUNT(node); i++) {
            if (order_node_ids(ORDER_CHILD(node, i), out) < 0) {
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
    PyOS_snprintf(buf, sizeof(buf), "Order shift=%d prefix=0x%llx bitmap=0x%x",
                  node->shift, (unsigned long long)node->prefix,
                  (unsigned)node->bitmap);
    if (order_dump_line(out, PyUnicode_FromFormat("%s%s", pad, buf)) < 0) {
        return -1;
    }
    for (int i = 0; i < ORDER_COUNT(node); i++) {
        if (node->shift == 0) {
            if (order_dump_line(out, PyUnicode_FromFormat(
                    "%s  (%R, %R)", pad, ORDER_KEY(node, i), ORDER_VALUE(node, i))) < 0) {
                return -1;
            }
        }
        else if (order_dump(ORDER_CHILD(node, i), indent + 1, out) < 0) {
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
