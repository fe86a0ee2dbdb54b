/* keytrie.c -- the key index: a CHAMP trie over the full 64-bit hash.
 * Mirrors frozenmap/_pycore/keytrie.py function by function; see the essay at
 * the top of frozendict.c for the algorithm and the contracts in
 * cfrozenmap.h.
 *
 * C-only details:
 *  - Nodes are plain C structs with their own reference count (see
 *    cfrozenmap.h): they hold references only to other key-trie nodes (keys
 *    and values are borrowed from the order trie of the same version), so no
 *    reference cycle can pass through them and the GC never needs them.
 *  - In-place edit rights come from uniqueness: a node is editable by a
 *    transient when its count and every count above it on the path is 1.
 *  - Edits are failure-atomic: a node is written in place only when its shape
 *    stays the same (an entry's value replaced, a child pointer swapped);
 *    every shape change allocates a new node.  Editable nodes form a
 *    top-closed set (the parent of an editable node is editable), so an allocation that fails
 *    happens before any in-place write on the path and the trie is left
 *    exactly as it was.
 *  - A one-shot derivation (set/delete of a version) walks the trie once:
 *    champ_find_path records the nodes it passes, champ_put_path and
 *    champ_remove_path copy along that record (the pure core copies
 *    top-down as it walks, champ_set_copying / champ_delete_copying; the
 *    result is the same trie).
 *  - Loans (champ_loan in cfrozenmap.h): a copy borrows the children it
 *    shares with its source instead of taking a reference on each.  The pure
 *    core needs no such thing (a list slice is one C call either way).
 */
#include "cfrozenmap.h"

#define ENTRY_UNITS ((Py_ssize_t)(sizeof(champ_entry) / sizeof(void *)))

/* Whether a transient (owner != 0) may edit node in place: callers pass the
 * owner on to a child only when the parent itself was editable, so a count
 * of 1 here means nothing else reaches the node (see cfrozenmap.h). */
static inline int
champ_editable(champ_node *node, uint64_t owner)
{
    return owner != 0 && champ_unique(node);
}

/* The owner a walk passes on to node's child at digit bit: none when node
 * borrows that child, whose count then does not include node's reference
 * (so a count of 1 there says nothing about who else reaches it). */
static inline uint64_t
champ_child_owner(champ_node *node, uint32_t bit, uint64_t owner)
{
    if (owner != 0 && champ_has_loan(node) && !(champ_loan_of(node)->owned & bit)) {
        return 0;
    }
    return owner;
}

/* --- allocation ---------------------------------------------------------- */

static champ_node *
champ_alloc_raw(size_t size, Py_ssize_t rc)
{
    champ_node *n = (champ_node *)PyObject_Malloc(size);
    if (n == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    n->rc = rc;
    return n;
}

/* A bitmap node with room for the given maps, and for a loan after the
 * children when flags has CHAMP_RC_LOAN; entries, children (and the loan)
 * are left for the caller to fill (children must all be set before it is
 * released). */
static inline champ_node *
champ_bitmap_alloc_flags(uint32_t datamap, uint32_t nodemap, Py_ssize_t flags)
{
    Py_ssize_t units = FM_POPCOUNT32(datamap) * ENTRY_UNITS + FM_POPCOUNT32(nodemap);
    size_t size = offsetof(champ_bitmap, entries) + (size_t)units * sizeof(void *);
    champ_node *n = champ_alloc_raw((flags & CHAMP_RC_LOAN) ? size + sizeof(champ_loan) : size,
                                    CHAMP_RC_ONE | flags);
    if (n == NULL) {
        return NULL;
    }
    n->datamap = datamap;
    n->nodemap = nodemap;
    return n;
}

FM_POPCNT_CLONES
static champ_node *
champ_bitmap_alloc(uint32_t datamap, uint32_t nodemap)
{
    return champ_bitmap_alloc_flags(datamap, nodemap, 0);
}

/* --- loans ---------------------------------------------------------------
 *
 * Every node a derivation makes from an existing node src is allocated by
 * champ_derive_alloc and completed by champ_adopt: the caller copies the
 * entries and the child pointers it keeps from src (plain copies, no
 * references taken), stores the children it brings (fresh: the digits of
 * those, references it hands over), then champ_adopt takes the references
 * the node needs: one on the lender if the node borrows, else one on each
 * kept child.
 *
 * Memory: a borrower keeps its lender alive, and the lender the children the
 * borrower replaced.  Lenders are nodes of older versions; when those
 * versions are gone, what stays is at most the old node on each path that
 * changed since it lent, with what hung below it then: in the worst case
 * (a long chain of derivations that drops every old version) about one old
 * key trie, 40 bytes or so per entry, and no key or value object.  A copy
 * of a borrower that would own more than CHAMP_LOAN_MAX_OWNED digits (or
 * borrow fewer than CHAMP_LOAN_MIN children) takes full references and no
 * loan, which ends that lender's life as far as it is concerned: a lender
 * keeps at most CHAMP_LOAN_MAX_OWNED replaced children alive per borrower
 * lineage.  (Measured on 2,000,000 derivations dropping every old version,
 * 100,000 keys: 87 B per entry at the end with 4, 78 B without loans,
 * 109 B with no bound; docs/design-decisions.md, "Loans in the C key
 * trie".)  In-place edits of a
 * transient's own borrower can own more digits than that; the borrower is
 * the transient's until it is frozen, and its next copy drops the loan. */

#define CHAMP_LOAN_MIN 4
#define CHAMP_LOAN_MAX_OWNED 4

/* A bitmap node with maps (datamap, nodemap) derived from src (a bitmap
 * node): its children at the digits of nodemap outside fresh (at most one
 * digit) are src's at the same digits.  With a loan when that spares at
 * least CHAMP_LOAN_MIN references, unless owner is nonzero: src is a
 * transient's, editable, and released as soon as the new node replaces it,
 * so a loan would only keep it alive.  NULL with MemoryError. */
FM_POPCNT_CLONES
static champ_node *
champ_derive_alloc(champ_node *src, uint32_t datamap, uint32_t nodemap, uint32_t fresh,
                   uint64_t owner)
{
    if (owner != 0) {
        return champ_bitmap_alloc(datamap, nodemap);
    }
    uint32_t kept = nodemap & ~fresh;
    champ_node *lender = src;
    uint32_t owned = fresh;
    if (champ_has_loan(src)) {
        champ_loan *l = champ_loan_of(src);
        lender = l->lender;
        owned |= l->owned & kept;
    }
    if (FM_POPCOUNT32(owned) > CHAMP_LOAN_MAX_OWNED
        || FM_POPCOUNT32(kept & ~owned) < CHAMP_LOAN_MIN) {
        return champ_bitmap_alloc(datamap, nodemap);
    }
    champ_node *n = champ_bitmap_alloc_flags(datamap, nodemap, CHAMP_RC_LOAN);
    if (n == NULL) {
        return NULL;
    }
    champ_loan *l = champ_loan_of(n);
    l->lender = lender;
    l->owned = owned;
    return n;
}

/* The references n (from champ_derive_alloc, children in place) needs on
 * what it shares with its source.  Cannot fail. */
FM_POPCNT_CLONES
static void
champ_adopt(champ_node *n, uint32_t fresh)
{
    champ_node **c = champ_children(n);
    if (champ_has_loan(n)) {
        champ_loan *l = champ_loan_of(n);
        champ_incref(l->lender);
        for (uint32_t m = l->owned & ~fresh; m != 0; m &= m - 1) {
            champ_incref(c[champ_index(n->nodemap, m & (~m + 1))]);
        }
        return;
    }
    int nc = champ_nchild(n);
    int skip = fresh ? champ_index(n->nodemap, fresh) : nc;
    FM_UNROLL4
    for (int k = 0; k < skip; k++) {
        champ_incref(c[k]);
    }
    FM_UNROLL4
    for (int k = skip + 1; k < nc; k++) {
        champ_incref(c[k]);
    }
}

static champ_collision *
champ_collision_alloc(Py_uhash_t hash, Py_ssize_t count)
{
    champ_collision *n = (champ_collision *)champ_alloc_raw(
        offsetof(champ_collision, entries) + (size_t)count * sizeof(champ_entry),
        CHAMP_RC_ONE | CHAMP_RC_COLLISION);
    if (n == NULL) {
        return NULL;
    }
    n->head.datamap = 0;
    n->head.nodemap = 0;
    n->hash = hash;
    n->count = count;
    return n;
}

/* The empty root every empty trie shares: a static node that is never
 * freed.  Its count starts half-way to the maximum, so no balance of
 * references can bring it to 0 (nor ever make it look unique: it is never
 * edited in place, an insert copies it) or overflow it; the flag bits are
 * clear (a bitmap node, no loan).  A version or transient that has nothing
 * holds it instead of NULL, so every reader can walk any root: that is what
 * a GC-cleared frozendict or Evolver holds too (fd_tp_clear,
 * evolver_tp_clear).  The count is shared by every interpreter: with
 * per-interpreter GILs two increments may race and one be lost, which only
 * moves a count that stays far from both ends. */
#define CHAMP_RC_IMMORTAL ((PY_SSIZE_T_MAX / 2) & ~(Py_ssize_t)(CHAMP_RC_ONE - 1))
static champ_node champ_empty = {CHAMP_RC_IMMORTAL, 0, 0};

champ_node *
champ_empty_root(void)
{
    return champ_newref(&champ_empty);
}

/* A copy of a bitmap node with the same shape. */
FM_POPCNT_CLONES
static champ_node *
champ_bitmap_copy(champ_node *node)
{
    champ_node *n = champ_derive_alloc(node, node->datamap, node->nodemap, 0, 0);
    if (n == NULL) {
        return NULL;
    }
    int nd = champ_ndata(node), nc = champ_nchild(node);
    memcpy(champ_entries(n), champ_entries(node), nd * sizeof(champ_entry));
    memcpy(champ_children(n), champ_children(node), nc * sizeof(champ_node *));
    champ_adopt(n, 0);
    return n;
}

/* node with its child at digit bit replaced by new_child (stolen): node
 * itself when the child was edited in place or node is editable, else a
 * copy.  New ref or NULL (new_child released). */
FM_POPCNT_CLONES
static champ_node *
champ_with_child(champ_node *node, uint32_t bit, champ_node *new_child, uint64_t owner)
{
    int j = champ_index(node->nodemap, bit);
    champ_node *child = champ_children(node)[j];
    if (new_child == child) {
        champ_decref(new_child);
        return champ_newref(node);
    }
    if (champ_editable(node, owner)) {
        champ_children(node)[j] = new_child;
        if (champ_has_loan(node) && !(champ_loan_of(node)->owned & bit)) {
            /* The old child was the lender's: now this node owns the digit. */
            champ_loan_of(node)->owned |= bit;
        }
        else {
            champ_decref(child);
        }
        return champ_newref(node);
    }
    /* A copy sharing every child but the one replaced. */
    champ_node *n = champ_derive_alloc(node, node->datamap, node->nodemap, bit, 0);
    if (n == NULL) {
        champ_decref(new_child);
        return NULL;
    }
    int nd = champ_ndata(node), nc = champ_nchild(node);
    memcpy(champ_entries(n), champ_entries(node), nd * sizeof(champ_entry));
    champ_node **dst = champ_children(n);
    memcpy(dst, champ_children(node), nc * sizeof(champ_node *));
    dst[j] = new_child;
    champ_adopt(n, bit);
    return n;
}

FM_POPCNT_CLONES
void
champ_free(champ_node *node)
{
    if (champ_has_loan(node)) {
        champ_loan *l = champ_loan_of(node);
        champ_node **children = champ_children(node);
        for (uint32_t m = l->owned; m != 0; m &= m - 1) {
            champ_decref(children[champ_index(node->nodemap, m & (~m + 1))]);
        }
        champ_decref(l->lender);
    }
    else if (!champ_is_collision(node)) {
        int nc = champ_nchild(node);
        champ_node **children = champ_children(node);
        FM_UNROLL4
        for (int i = 0; i < nc; i++) {
            champ_decref(children[i]);
        }
    }
    PyObject_Free(node);
}

/* --- lookup -------------------------------------------------------------- */

FM_POPCNT_CLONES
int
champ_find(champ_node *node, Py_uhash_t h, PyObject *key, champ_entry **out)
{
    return champ_walk(node, h, key, out, NULL);
}

FM_POPCNT_CLONES
int
champ_find_path(champ_node *root, Py_uhash_t h, PyObject *key, champ_path *path,
                champ_entry **out)
{
    return champ_walk(root, h, key, out, path);
}

typedef struct {
    PyObject *key;
    uint64_t seq;
    champ_entry *found;
} champ_stored_scan;

static int
champ_is_stored_key(champ_entry *e, void *arg)
{
    champ_stored_scan *scan = arg;
    if (e->key != scan->key || e->seq != scan->seq) {
        return 0;
    }
    scan->found = e;
    return 1;
}

champ_entry *
champ_find_stored(champ_node *node, const Py_uhash_t *h, PyObject *key, uint64_t seq)
{
    if (h == NULL) {
        champ_stored_scan scan = {key, seq, NULL};
        champ_foreach(node, champ_is_stored_key, &scan);
        return scan.found;
    }
    int shift = 0;
    for (;;) {
        uint32_t bit = champ_bit(*h, shift);
        if (node->datamap & bit) {
            champ_entry *e = &champ_entries(node)[champ_index(node->datamap, bit)];
            return e->key == key && e->seq == seq ? e : NULL;
        }
        if (!(node->nodemap & bit)) {
            return NULL;
        }
        node = champ_children(node)[champ_index(node->nodemap, bit)];
        shift += CHAMP_BITS;
        if (champ_is_collision(node)) {
            champ_collision *c = (champ_collision *)node;
            for (Py_ssize_t i = 0; i < c->count; i++) {
                if (c->entries[i].key == key && c->entries[i].seq == seq) {
                    return &c->entries[i];
                }
            }
            return NULL;
        }
    }
}

/* --- insertion ----------------------------------------------------------- */

/* The canonical subtree at shift holding two entries of distinct keys. */
static champ_node *
champ_pair_subtree(const champ_entry *a, const champ_entry *b, int shift)
{
    if (a->hash == b->hash) {
        champ_collision *c = champ_collision_alloc(a->hash, 2);
        if (c == NULL) {
            return NULL;
        }
        c->entries[0] = *a;
        c->entries[1] = *b;
        return &c->head;
    }
    unsigned da = champ_digit(a->hash, shift), db = champ_digit(b->hash, shift);
    if (da == db) {
        champ_node *child = champ_pair_subtree(a, b, shift + CHAMP_BITS);
        if (child == NULL) {
            return NULL;
        }
        champ_node *n = champ_bitmap_alloc(0, (uint32_t)1 << da);
        if (n == NULL) {
            champ_decref(child);
            return NULL;
        }
        champ_children(n)[0] = child;
        return n;
    }
    champ_node *n = champ_bitmap_alloc(((uint32_t)1 << da) | ((uint32_t)1 << db), 0);
    if (n == NULL) {
        return NULL;
    }
    champ_entries(n)[da < db ? 0 : 1] = *a;
    champ_entries(n)[da < db ? 1 : 0] = *b;
    return n;
}

/* A bitmap node at shift holding coll and an entry of another hash. */
static champ_node *
champ_split_collision(champ_node *coll, const champ_entry *entry, int shift)
{
    Py_uhash_t ch = ((champ_collision *)coll)->hash;
    unsigned dc = champ_digit(ch, shift), de = champ_digit(entry->hash, shift);
    if (dc == de) {
        champ_node *child = champ_split_collision(coll, entry, shift + CHAMP_BITS);
        if (child == NULL) {
            return NULL;
        }
        champ_node *n = champ_bitmap_alloc(0, (uint32_t)1 << dc);
        if (n == NULL) {
            champ_decref(child);
            return NULL;
        }
        champ_children(n)[0] = child;
        return n;
    }
    champ_node *n = champ_bitmap_alloc((uint32_t)1 << de, (uint32_t)1 << dc);
    if (n == NULL) {
        return NULL;
    }
    champ_entries(n)[0] = *entry;
    champ_children(n)[0] = champ_newref(coll);
    return n;
}

static champ_node *
champ_collision_put(champ_node *node, int shift, const champ_entry *entry,
                    const champ_entry *old, uint64_t owner)
{
    champ_collision *c = (champ_collision *)node;
    if (entry->hash != c->hash) {
        return champ_split_collision(node, entry, shift);
    }
    if (old != NULL) {
        for (Py_ssize_t i = 0; i < c->count; i++) {
            if (&c->entries[i] == old) {
                if (champ_editable(node, owner)) {
                    c->entries[i] = *entry;
                    return champ_newref(node);
                }
                champ_collision *n = champ_collision_alloc(c->hash, c->count);
                if (n == NULL) {
                    return NULL;
                }
                memcpy(n->entries, c->entries, c->count * sizeof(champ_entry));
                n->entries[i] = *entry;
                return &n->head;
            }
        }
        PyErr_SetString(PyExc_SystemError, "champ_put: old entry not in its collision node");
        return NULL;
    }
    champ_collision *n = champ_collision_alloc(c->hash, c->count + 1);
    if (n == NULL) {
        return NULL;
    }
    memcpy(n->entries, c->entries, c->count * sizeof(champ_entry));
    n->entries[c->count] = *entry;
    return &n->head;
}

FM_POPCNT_CLONES
champ_node *
champ_put(champ_node *node, int shift, const champ_entry *entry, const champ_entry *old,
          uint64_t owner)
{
    /* Below a node that must be copied nothing is editable. */
    owner = champ_editable(node, owner) ? owner : 0;
    uint32_t bit = champ_bit(entry->hash, shift);
    int nd = champ_ndata(node), nc = champ_nchild(node);
    if (node->datamap & bit) {
        int i = champ_index(node->datamap, bit);
        champ_entry *current = &champ_entries(node)[i];
        if (current == old) {
            if (champ_editable(node, owner)) {
                *current = *entry;
                return champ_newref(node);
            }
            champ_node *n = champ_bitmap_copy(node);
            if (n == NULL) {
                return NULL;
            }
            champ_entries(n)[i] = *entry;
            return n;
        }
        /* Two keys clash at this digit: they move down into a subtree. */
        champ_node *child = champ_pair_subtree(current, entry, shift + CHAMP_BITS);
        if (child == NULL) {
            return NULL;
        }
        champ_node *n =
            champ_derive_alloc(node, node->datamap ^ bit, node->nodemap | bit, bit, owner);
        if (n == NULL) {
            champ_decref(child);
            return NULL;
        }
        champ_entry *se = champ_entries(node), *de = champ_entries(n);
        memcpy(de, se, i * sizeof(champ_entry));
        memcpy(de + i, se + i + 1, (nd - i - 1) * sizeof(champ_entry));
        champ_node **sc = champ_children(node), **dc = champ_children(n);
        int j = champ_index(n->nodemap, bit);
        memcpy(dc, sc, j * sizeof(champ_node *));
        dc[j] = child;
        memcpy(dc + j + 1, sc + j, (nc - j) * sizeof(champ_node *));
        champ_adopt(n, bit);
        return n;
    }
    if (node->nodemap & bit) {
        int j = champ_index(node->nodemap, bit);
        champ_node *child = champ_children(node)[j];
        champ_node *new_child;
        uint64_t below = champ_child_owner(node, bit, owner);
        if (champ_is_collision(child)) {
            new_child = champ_collision_put(child, shift + CHAMP_BITS, entry, old, below);
        }
        else {
            new_child = champ_put(child, shift + CHAMP_BITS, entry, old, below);
        }
        if (new_child == NULL) {
            return NULL;
        }
        return champ_with_child(node, bit, new_child, owner);
    }
    /* A free digit: the entry goes in inline. */
    champ_node *n = champ_derive_alloc(node, node->datamap | bit, node->nodemap, 0, owner);
    if (n == NULL) {
        return NULL;
    }
    int i = champ_index(n->datamap, bit);
    champ_entry *se = champ_entries(node), *de = champ_entries(n);
    memcpy(de, se, i * sizeof(champ_entry));
    de[i] = *entry;
    memcpy(de + i + 1, se + i, (nd - i) * sizeof(champ_entry));
    memcpy(champ_children(n), champ_children(node), nc * sizeof(champ_node *));
    champ_adopt(n, 0);
    return n;
}

FM_POPCNT_CLONES
champ_node *
champ_put_path(const champ_path *path, const champ_entry *entry, const champ_entry *old)
{
    /* The walk stopped where the entry is, or would go (its digit free or
     * held by another entry, or a collision child): champ_put places it
     * there without descending further (except into that collision node). */
    int d = path->depth - 1;
    champ_node *n = champ_put(path->nodes[d], d * CHAMP_BITS, entry, old, 0);
    while (n != NULL && d > 0) {
        d--;
        n = champ_with_child(path->nodes[d], champ_bit(entry->hash, d * CHAMP_BITS), n, 0);
    }
    return n;
}

/* --- removal ------------------------------------------------------------- */

/* Always a new node (see the file comment); may hold a single entry, which
 * the parent then inlines. */
static champ_node *
champ_collision_remove(champ_node *node, const champ_entry *old)
{
    champ_collision *c = (champ_collision *)node;
    for (Py_ssize_t i = 0; i < c->count; i++) {
        if (&c->entries[i] == old) {
            champ_collision *n = champ_collision_alloc(c->hash, c->count - 1);
            if (n == NULL) {
                return NULL;
            }
            memcpy(n->entries, c->entries, i * sizeof(champ_entry));
            memcpy(n->entries + i, c->entries + i + 1,
                   (c->count - i - 1) * sizeof(champ_entry));
            return &n->head;
        }
    }
    PyErr_SetString(PyExc_SystemError, "champ_remove: old entry not in its collision node");
    return NULL;
}

/* node with its child j (at digit bit) replaced by new_child (stolen), what
 * a removal below left of that child, keeping the shape canonical: a child
 * left with a single entry is inlined into node, a bitmap child left holding
 * only a collision node is replaced by it.  New ref or NULL. */
FM_POPCNT_CLONES
static champ_node *
champ_remove_merge(champ_node *node, uint32_t bit, int j, champ_node *new_child,
                   uint64_t owner)
{
    int single = 0;
    champ_entry lone;
    if (champ_is_collision(new_child)) {
        single = ((champ_collision *)new_child)->count == 1;
        if (single) {
            lone = ((champ_collision *)new_child)->entries[0];
        }
    }
    else if (new_child->nodemap == 0) {
        single = champ_ndata(new_child) == 1;
        if (single) {
            lone = champ_entries(new_child)[0];
        }
    }
    else if (new_child->datamap == 0 && champ_nchild(new_child) == 1) {
        champ_node *only = champ_children(new_child)[0];
        if (champ_is_collision(only)) {
            /* A lone collision node moves up. */
            champ_incref(only);
            champ_setref(&new_child, only);
        }
    }
    if (!single) {
        return champ_with_child(node, bit, new_child, owner);
    }
    /* Inline the child's last entry into this node. */
    champ_decref(new_child);
    int nd = champ_ndata(node), nc = champ_nchild(node);
    champ_node *n =
        champ_derive_alloc(node, node->datamap | bit, node->nodemap ^ bit, 0, owner);
    if (n == NULL) {
        return NULL;
    }
    int i = champ_index(n->datamap, bit);
    champ_entry *se = champ_entries(node), *de = champ_entries(n);
    memcpy(de, se, i * sizeof(champ_entry));
    de[i] = lone;
    memcpy(de + i + 1, se + i, (nd - i) * sizeof(champ_entry));
    champ_node **sc = champ_children(node), **dc = champ_children(n);
    memcpy(dc, sc, j * sizeof(champ_node *));
    memcpy(dc + j, sc + j + 1, (nc - j - 1) * sizeof(champ_node *));
    champ_adopt(n, 0);
    return n;
}

FM_POPCNT_CLONES
champ_node *
champ_remove(champ_node *node, int shift, const champ_entry *old, uint64_t owner)
{
    owner = champ_editable(node, owner) ? owner : 0;
    uint32_t bit = champ_bit(old->hash, shift);
    int nd = champ_ndata(node), nc = champ_nchild(node);
    if (node->datamap & bit) {
        int i = champ_index(node->datamap, bit);
        champ_node *n = champ_derive_alloc(node, node->datamap ^ bit, node->nodemap, 0, owner);
        if (n == NULL) {
            return NULL;
        }
        champ_entry *se = champ_entries(node), *de = champ_entries(n);
        memcpy(de, se, i * sizeof(champ_entry));
        memcpy(de + i, se + i + 1, (nd - i - 1) * sizeof(champ_entry));
        memcpy(champ_children(n), champ_children(node), nc * sizeof(champ_node *));
        champ_adopt(n, 0);
        return n;
    }
    if (!(node->nodemap & bit)) {
        PyErr_SetString(PyExc_SystemError, "champ_remove: entry not in the trie");
        return NULL;
    }
    int j = champ_index(node->nodemap, bit);
    champ_node *child = champ_children(node)[j];
    champ_node *new_child;
    if (champ_is_collision(child)) {
        new_child = champ_collision_remove(child, old);
    }
    else {
        new_child =
            champ_remove(child, shift + CHAMP_BITS, old, champ_child_owner(node, bit, owner));
    }
    if (new_child == NULL) {
        return NULL;
    }
    return champ_remove_merge(node, bit, j, new_child, owner);
}

FM_POPCNT_CLONES
champ_node *
champ_remove_path(const champ_path *path, const champ_entry *old)
{
    /* The walk stopped at the node holding the entry, or at the parent of
     * the collision node holding it: champ_remove goes no deeper. */
    int d = path->depth - 1;
    champ_node *n = champ_remove(path->nodes[d], d * CHAMP_BITS, old, 0);
    while (n != NULL && d > 0) {
        d--;
        n = champ_remove_merge(path->nodes[d], champ_bit(old->hash, d * CHAMP_BITS),
                               path->child[d], n, 0);
    }
    return n;
}

/* --- bulk build ---------------------------------------------------------- */

/* champ_build and its champ_build_* helpers build the trie insertion would
 * give, by a radix sort in place (one or two digits per pass, into a
 * scratch array), where the pure core's champ_build splits the entries into
 * lists by digit (keytrie.py: _build, _collision): the same trie node for
 * node, by the route that is fast in each language, so the helpers have no
 * twins there. */

static champ_node *champ_build_bitmap(champ_entry *a, champ_entry *tmp, Py_ssize_t n,
                                      int shift);
static champ_node *champ_build_wide(champ_entry *a, champ_entry *tmp, Py_ssize_t n, int shift);

/* The two digits at shift and shift + 5 as one bucket number, the first
 * digit (read first by the trie) ranking higher. */
static inline unsigned
champ_digit_pair(Py_uhash_t h, int shift)
{
    return (champ_digit(h, shift) << CHAMP_BITS) | champ_digit(h, shift + CHAMP_BITS);
}

/* A collision node holding a[0:n] when they all have one hash (n >= 2):
 * *out = the node (NULL on MemoryError) and 1; else 0. */
static int
champ_build_collision(champ_entry *a, Py_ssize_t n, champ_node **out)
{
    for (Py_ssize_t i = 1; i < n; i++) {
        if (a[i].hash != a[0].hash) {
            return 0;
        }
    }
    champ_collision *c = champ_collision_alloc(a[0].hash, n);
    if (c != NULL) {
        memcpy(c->entries, a, n * sizeof(champ_entry));
    }
    *out = c != NULL ? &c->head : NULL;
    return 1;
}

/* Below this many entries a node is built by one-digit partitions only. */
#define CHAMP_WIDE_MIN 512

/* The canonical child for n >= 2 entries sharing the digits above shift. */
FM_POPCNT_CLONES
static champ_node *
champ_build_child(champ_entry *a, champ_entry *tmp, Py_ssize_t n, int shift)
{
    champ_node *c;
    if (n <= 6) {
        /* Most children (near the bottom): a few entries at distinct
         * digits, placed straight into a node of data only. */
        uint32_t occupied = 0, multi = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            uint32_t bit = champ_bit(a[i].hash, shift);
            multi |= occupied & bit;
            occupied |= bit;
        }
        if (multi == 0) {
            c = champ_bitmap_alloc(occupied, 0);
            if (c != NULL) {
                champ_entry *e = champ_entries(c);
                for (Py_ssize_t i = 0; i < n; i++) {
                    e[champ_index(occupied, champ_bit(a[i].hash, shift))] = a[i];
                }
            }
            return c;
        }
    }
    if (champ_build_collision(a, n, &c)) {
        return c;
    }
    if (n >= CHAMP_WIDE_MIN && shift + 2 * CHAMP_BITS < 64) {
        return champ_build_wide(a, tmp, n, shift);
    }
    return champ_build_bitmap(a, tmp, n, shift);
}

/* Release children[0:nc] (a build failed). */
static void
champ_build_drop(champ_node **children, int nc)
{
    while (nc > 0) {
        champ_decref(children[--nc]);
    }
}

/* The node with the entries *singles[0:popcount(datamap)] and the children
 * (references handed over, released on failure), in digit order.  New ref
 * or NULL. */
static champ_node *
champ_build_node(uint32_t datamap, uint32_t nodemap, champ_entry *const *singles,
                 champ_node **children)
{
    int ns = FM_POPCOUNT32(datamap), nc = FM_POPCOUNT32(nodemap);
    champ_node *node = champ_bitmap_alloc(datamap, nodemap);
    if (node == NULL) {
        champ_build_drop(children, nc);
        return NULL;
    }
    champ_entry *e = champ_entries(node);
    for (int k = 0; k < ns; k++) {
        e[k] = *singles[k];
    }
    memcpy(champ_children(node), children, nc * sizeof(champ_node *));
    return node;
}

/* The node at shift over the 32 buckets base + d * stride (d a digit) of
 * a two-digit partition: bucket k is a[ends[k - 1]:ends[k]] (from 0 for
 * k == 0); scratch holds at least the largest bucket (the children are
 * built one after the other, each using scratch from its start).  stride
 * 32: the upper node (each of its digits covers 32 buckets, a child one
 * level down); stride 1: one of those children. */
static champ_node *
champ_build_buckets(champ_entry *a, champ_entry *scratch, const Py_ssize_t *ends, int base,
                    int stride, int shift)
{
    champ_node *children[32];
    champ_entry *singles[32];
    uint32_t datamap = 0, nodemap = 0;
    int nc = 0, ns = 0;
    for (unsigned d = 0; d < 32; d++) {
        int k = base + (int)d * stride;
        Py_ssize_t start = k ? ends[k - 1] : 0, count = ends[k + stride - 1] - start;
        if (count == 1) {
            datamap |= (uint32_t)1 << d;
            singles[ns++] = &a[start];
        }
        else if (count > 1) {
            champ_node *c;
            if (stride == 1) {
                c = champ_build_child(a + start, scratch, count, shift + CHAMP_BITS);
            }
            else if (!champ_build_collision(a + start, count, &c)) {
                c = champ_build_buckets(a, scratch, ends, k, 1, shift + CHAMP_BITS);
            }
            if (c == NULL) {
                champ_build_drop(children, nc);
                return NULL;
            }
            nodemap |= (uint32_t)1 << d;
            children[nc++] = c;
        }
    }
    return champ_build_node(datamap, nodemap, singles, children);
}

/* A bitmap node at shift over many entries a[0:n] (tmp: scratch of the same
 * size): one radix partition by two digits (1,024 buckets: one pass counts,
 * one scatters) places every entry for this level and the next, where
 * one-digit partitions would move each entry twice. */
static champ_node *
champ_build_wide(champ_entry *a, champ_entry *tmp, Py_ssize_t n, int shift)
{
    Py_ssize_t ends[1 << (2 * CHAMP_BITS)];
    memset(ends, 0, sizeof(ends));
    for (Py_ssize_t i = 0; i < n; i++) {
        ends[champ_digit_pair(a[i].hash, shift)]++;
    }
    Py_ssize_t pos = 0;
    for (int k = 0; k < (1 << (2 * CHAMP_BITS)); k++) {
        Py_ssize_t c = ends[k];
        ends[k] = pos;
        pos += c;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        tmp[ends[champ_digit_pair(a[i].hash, shift)]++] = a[i];
    }
    /* ends[k] is now the end of bucket k in tmp. */
    return champ_build_buckets(tmp, a, ends, 0, 32, shift);
}

/* A bitmap node at shift over a[0:n]; tmp is scratch of the same size.  An
 * MSD radix partition by digit: one pass counts, one scatters.  Only the
 * occupied digits are visited afterwards (most nodes hold a few entries, so
 * walking all 32 digits three times was most of the build). */
FM_POPCNT_CLONES
static champ_node *
champ_build_bitmap(champ_entry *a, champ_entry *tmp, Py_ssize_t n, int shift)
{
    Py_ssize_t count[32], fill[32]; /* meaningful for occupied digits only */
    uint32_t occupied = 0, multi = 0;
    if (n >= 64) {
        /* Many entries: plain counting (no branch per entry), then the
         * maps from the 32 counts. */
        memset(count, 0, sizeof(count));
        for (Py_ssize_t i = 0; i < n; i++) {
            count[champ_digit(a[i].hash, shift)]++;
        }
        for (unsigned d = 0; d < 32; d++) {
            occupied |= (uint32_t)(count[d] != 0) << d;
            multi |= (uint32_t)(count[d] > 1) << d;
        }
    }
    else {
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned d = champ_digit(a[i].hash, shift);
            uint32_t bit = (uint32_t)1 << d;
            if (occupied & bit) {
                multi |= bit;
                count[d]++;
            }
            else {
                occupied |= bit;
                count[d] = 1;
            }
        }
    }
    uint32_t datamap = occupied & ~multi, nodemap = multi;
    if (nodemap == 0) {
        /* Every digit once (most nodes near the bottom): each entry goes
         * straight to its place, with no scatter and no gather. */
        champ_node *node = champ_bitmap_alloc(datamap, 0);
        if (node == NULL) {
            return NULL;
        }
        champ_entry *e = champ_entries(node);
        for (Py_ssize_t i = 0; i < n; i++) {
            e[champ_index(datamap, champ_bit(a[i].hash, shift))] = a[i];
        }
        return node;
    }
    Py_ssize_t pos = 0;
    for (uint32_t bits = occupied; bits; bits &= bits - 1) {
        unsigned d = (unsigned)FM_CTZ32(bits);
        fill[d] = pos;
        pos += count[d];
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        tmp[fill[champ_digit(a[i].hash, shift)]++] = a[i];
    }
    /* fill[d] is now the end of digit d's run in tmp. */
    champ_node *children[32];
    int nc = 0;
    for (uint32_t bits = nodemap; bits; bits &= bits - 1) {
        unsigned d = (unsigned)FM_CTZ32(bits);
        Py_ssize_t start = fill[d] - count[d];
        champ_node *c = NULL;           /* the collision call always sets it here */
        if (shift + CHAMP_BITS >= 64) { /* past the last digit: one hash */
            champ_build_collision(tmp + start, count[d], &c);
        }
        else {
            c = champ_build_child(tmp + start, a + start, count[d], shift + CHAMP_BITS);
        }
        if (c == NULL) {
            while (nc > 0) {
                champ_decref(children[--nc]);
            }
            return NULL;
        }
        children[nc++] = c;
    }
    champ_node *node = champ_bitmap_alloc(datamap, nodemap);
    if (node == NULL) {
        while (nc > 0) {
            champ_decref(children[--nc]);
        }
        return NULL;
    }
    champ_entry *e = champ_entries(node);
    int k = 0;
    for (uint32_t bits = datamap; bits; bits &= bits - 1) {
        e[k++] = tmp[fill[FM_CTZ32(bits)] - 1];
    }
    memcpy(champ_children(node), children, nc * sizeof(champ_node *));
    return node;
}

/* Partition a[0:n] in place by the two digits at shift 0 (American flag
 * sort: each misplaced entry is swapped into the next free slot of its
 * bucket until the slot's entry belongs here): ends[k] = the end of bucket
 * k.  No scratch copy of the entries, which was the bulk build's second
 * copy of the map (32 bytes per item at the peak). */
static void
champ_build_partition(champ_entry *a, Py_ssize_t n, Py_ssize_t *ends)
{
    enum { BUCKETS = 1 << (2 * CHAMP_BITS) };
    Py_ssize_t next[BUCKETS]; /* the first slot of each bucket still to fill */
    memset(ends, 0, BUCKETS * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < n; i++) {
        ends[champ_digit_pair(a[i].hash, 0)]++;
    }
    Py_ssize_t pos = 0;
    for (int k = 0; k < BUCKETS; k++) {
        next[k] = pos;
        pos += ends[k];
        ends[k] = pos;
    }
    for (unsigned k = 0; k < BUCKETS; k++) {
        while (next[k] < ends[k]) {
            champ_entry e = a[next[k]];
            unsigned b = champ_digit_pair(e.hash, 0);
            while (b != k) {
                champ_entry displaced = a[next[b]];
                a[next[b]++] = e;
                e = displaced;
                b = champ_digit_pair(e.hash, 0);
            }
            a[next[k]++] = e;
        }
    }
}

/* The root over many entries (n >= CHAMP_WIDE_MIN), consuming the array a
 * (a PyMem allocation, freed here): after the in-place partition the root's
 * digits are built from the last to the first, and a is shrunk after each
 * one to the entries still to place.  The finished nodes thus replace the
 * array as it is consumed, so the peak stays near the finished map (the
 * order trie, the key trie and one digit's worth of entries) instead of the
 * map plus two full copies of the entries.  The root's own single entries
 * are copied out before their part of a is released. */
static champ_node *
champ_build_root(champ_entry *a, Py_ssize_t n)
{
    Py_ssize_t ends[1 << (2 * CHAMP_BITS)];
    champ_build_partition(a, n, ends);
    Py_ssize_t largest = 0;
    for (int k = 0; k < (1 << (2 * CHAMP_BITS)); k++) {
        Py_ssize_t size = ends[k] - (k ? ends[k - 1] : 0);
        largest = size > largest ? size : largest;
    }
    uint32_t datamap = 0, nodemap = 0;
    for (unsigned d = 0; d < 32; d++) {
        Py_ssize_t start = d ? ends[32 * d - 1] : 0, count = ends[32 * d + 31] - start;
        datamap |= (uint32_t)(count == 1) << d;
        nodemap |= (uint32_t)(count > 1) << d;
    }
    int nc = FM_POPCOUNT32(nodemap), built = 0;
    Py_ssize_t kept = n; /* entries a still holds */
    champ_node *children[32], *root = NULL;
    champ_entry single_entries[32], *singles[32];
    champ_entry *scratch = PyMem_Malloc((largest ? largest : 1) * sizeof(champ_entry));
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int d = 31; d >= 0; d--) {
        uint32_t bit = (uint32_t)1 << d;
        Py_ssize_t start = d ? ends[32 * d - 1] : 0;
        if (datamap & bit) {
            int k = FM_POPCOUNT32(datamap & (bit - 1));
            single_entries[k] = a[start];
            singles[k] = &single_entries[k];
        }
        else if (nodemap & bit) {
            champ_node *c;
            if (!champ_build_collision(a + start, ends[32 * d + 31] - start, &c)) {
                c = champ_build_buckets(a, scratch, ends, 32 * d, 1, CHAMP_BITS);
            }
            if (c == NULL) {
                goto done;
            }
            children[nc - 1 - built++] = c;
        }
        if (start > 0 && start < kept) {
            champ_entry *shrunk = PyMem_Realloc(a, start * sizeof(champ_entry));
            if (shrunk != NULL) { /* a failed shrink keeps the larger block */
                a = shrunk;
                kept = start;
            }
        }
    }
    root = champ_build_node(datamap, nodemap, singles, children);
    built = 0; /* handed over (released on failure) */
done:
    champ_build_drop(children + nc - built, built);
    PyMem_Free(scratch);
    PyMem_Free(a);
    return root;
}

champ_node *
champ_build(champ_entry *entries, Py_ssize_t n)
{
    if (n >= CHAMP_WIDE_MIN) {
        return champ_build_root(entries, n);
    }
    champ_node *root = NULL;
    champ_entry *tmp = PyMem_Malloc((n ? n : 1) * sizeof(champ_entry));
    if (tmp == NULL) {
        PyErr_NoMemory();
    }
    else {
        root = champ_build_bitmap(entries, tmp, n, 0);
    }
    PyMem_Free(tmp);
    PyMem_Free(entries);
    return root;
}

/* --- whole-trie walks ---------------------------------------------------- */

int
champ_foreach(champ_node *node, int (*fn)(champ_entry *, void *), void *arg)
{
    if (champ_is_collision(node)) {
        champ_collision *c = (champ_collision *)node;
        for (Py_ssize_t i = 0; i < c->count; i++) {
            int r = fn(&c->entries[i], arg);
            if (r) {
                return r;
            }
        }
        return 0;
    }
    int nd = champ_ndata(node), nc = champ_nchild(node);
    for (int i = 0; i < nd; i++) {
        int r = fn(&champ_entries(node)[i], arg);
        if (r) {
            return r;
        }
    }
    for (int i = 0; i < nc; i++) {
        int r = champ_foreach(champ_children(node)[i], fn, arg);
        if (r) {
            return r;
        }
    }
    return 0;
}

/* Whether two entries at one position hold equal keys and equal values. */
static int
champ_same_pair(const champ_entry *a, const champ_entry *b)
{
    if (a->hash != b->hash) {
        return 0;
    }
    PyObject *ka = a->key, *kb = b->key;
    if (ka != kb) {
        Py_INCREF(ka);
        Py_INCREF(kb);
        int r = PyObject_RichCompareBool(ka, kb, Py_EQ);
        Py_DECREF(ka);
        Py_DECREF(kb);
        if (r <= 0) {
            return r;
        }
    }
    PyObject *va = a->value, *vb = b->value;
    if (va == vb) {
        return 1;
    }
    Py_INCREF(va);
    Py_INCREF(vb);
    int r = PyObject_RichCompareBool(va, vb, Py_EQ);
    Py_DECREF(va);
    Py_DECREF(vb);
    return r;
}

/* The entry of entries[0:n] with entry's hash and a key equal to its key
 * (e.key == entry.key); 1 (*out), 0 or -1.  skip marks entries to pass over
 * (may be NULL). */
static int
champ_find_in(champ_entry *entries, Py_ssize_t n, const champ_entry *entry, const char *skip,
              Py_ssize_t *out)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((skip != NULL && skip[i]) || entries[i].hash != entry->hash) {
            continue;
        }
        int r = champ_keys_equal(entries[i].key, entry->key);
        if (r != 0) {
            if (r > 0) {
                *out = i;
            }
            return r;
        }
    }
    return 0;
}

int
champ_identical(champ_node *a, champ_node *b)
{
    if (a == b) {
        return 1;
    }
    if (champ_is_collision(a) != champ_is_collision(b)) {
        return 0;
    }
    champ_entry *ea, *eb;
    Py_ssize_t n;
    if (champ_is_collision(a)) {
        champ_collision *ca = (champ_collision *)a, *cb = (champ_collision *)b;
        if (ca->count != cb->count) {
            return 0;
        }
        ea = ca->entries;
        eb = cb->entries;
        n = ca->count;
    }
    else {
        if (a->datamap != b->datamap || a->nodemap != b->nodemap) {
            return 0;
        }
        ea = champ_entries(a);
        eb = champ_entries(b);
        n = champ_ndata(a);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ea[i].key != eb[i].key || ea[i].value != eb[i].value || ea[i].seq != eb[i].seq) {
            return 0;
        }
    }
    if (!champ_is_collision(a)) {
        champ_node **xa = champ_children(a), **xb = champ_children(b);
        for (Py_ssize_t i = 0, m = champ_nchild(a); i < m; i++) {
            if (!champ_identical(xa[i], xb[i])) {
                return 0;
            }
        }
    }
    return 1;
}

int
champ_equal(champ_node *a, champ_node *b)
{
    if (a == b) {
        return 1;
    }
    if (champ_is_collision(a) != champ_is_collision(b)) {
        return 0;
    }
    if (champ_is_collision(a)) {
        champ_collision *ca = (champ_collision *)a, *cb = (champ_collision *)b;
        if (ca->hash != cb->hash || ca->count != cb->count) {
            return 0;
        }
        /* Versions derived from one another keep the same key objects in the
         * same order: look at the next position, then anywhere by identity,
         * and only then call __eq__ -- O(k) for them instead of O(k**2). */
        Py_ssize_t n = ca->count, j = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *key = ca->entries[i].key;
            Py_ssize_t k = -1;
            if (j < n && cb->entries[j].key == key) {
                k = j;
            }
            else {
                for (Py_ssize_t m = 0; m < n; m++) {
                    if (cb->entries[m].key == key) {
                        k = j = m;
                        break;
                    }
                }
                if (k < 0) {
                    int r = champ_find_in(cb->entries, n, &ca->entries[i], NULL, &k);
                    if (r <= 0) {
                        return r;
                    }
                }
            }
            int r = champ_same_pair(&ca->entries[i], &cb->entries[k]);
            if (r <= 0) {
                return r;
            }
            j++;
        }
        return 1;
    }
    if (a->datamap != b->datamap || a->nodemap != b->nodemap) {
        return 0;
    }
    int nd = champ_ndata(a), nc = champ_nchild(a);
    champ_entry *ea = champ_entries(a), *eb = champ_entries(b);
    for (int i = 0; i < nd; i++) {
        if (ea[i].key == eb[i].key && ea[i].value == eb[i].value) {
            continue;
        }
        int r = champ_same_pair(&ea[i], &eb[i]);
        if (r <= 0) {
            return r;
        }
    }
    for (int i = 0; i < nc; i++) {
        int r = champ_equal(champ_children(a)[i], champ_children(b)[i]);
        if (r <= 0) {
            return r;
        }
    }
    return 1;
}

/* --- diff ---------------------------------------------------------------- */

void
champ_difflist_free(champ_difflist *l)
{
    PyMem_Free(l->items);
    l->items = NULL;
    l->len = l->cap = 0;
}

int
champ_difflist_append(champ_difflist *l, const champ_entry *e)
{
    if (l->len == l->cap) {
        Py_ssize_t cap = l->cap ? l->cap * 2 : 8;
        champ_entry *items = PyMem_Realloc(l->items, cap * sizeof(champ_entry));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->len++] = *e;
    return 0;
}

static int
champ_collect(champ_entry *e, void *arg)
{
    return champ_difflist_append((champ_difflist *)arg, e) < 0 ? -1 : 0;
}

int
champ_diff_lists(champ_entry *a, Py_ssize_t na, champ_entry *b, Py_ssize_t nb,
                 champ_difflist *added, champ_difflist *removed, champ_difflist *changed,
                 int by_identity)
{
    char *used = PyMem_Calloc(nb ? nb : 1, 1);
    if (used == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < na; i++) {
        Py_ssize_t k;
        int r = champ_find_in(b, nb, &a[i], used, &k);
        if (r < 0) {
            goto error;
        }
        if (r == 0) {
            if (removed != NULL && champ_difflist_append(removed, &a[i]) < 0) {
                goto error;
            }
            continue;
        }
        used[k] = 1;
        PyObject *va = a[i].value, *vb = b[k].value;
        if (changed == NULL || va == vb) {
            continue;
        }
        if (by_identity) {
            if (champ_difflist_append(changed, &a[i]) < 0
                || champ_difflist_append(changed, &b[k]) < 0) {
                goto error;
            }
            continue;
        }
        Py_INCREF(va);
        Py_INCREF(vb);
        int ne = PyObject_RichCompareBool(va, vb, Py_NE);
        Py_DECREF(va);
        Py_DECREF(vb);
        if (ne < 0) {
            goto error;
        }
        if (ne
            && (champ_difflist_append(changed, &a[i]) < 0
                || champ_difflist_append(changed, &b[k]) < 0)) {
            goto error;
        }
    }
    for (Py_ssize_t k = 0; added != NULL && k < nb; k++) {
        if (!used[k] && champ_difflist_append(added, &b[k]) < 0) {
            goto error;
        }
    }
    PyMem_Free(used);
    return 0;
error:
    PyMem_Free(used);
    return -1;
}

/* Entries of node under one digit: the inline entry or the child's. */
static int
champ_subtree_entries(champ_node *node, uint32_t bit, champ_difflist *out)
{
    if (node->datamap & bit) {
        return champ_difflist_append(out,
                                     &champ_entries(node)[champ_index(node->datamap, bit)]);
    }
    if (node->nodemap & bit) {
        return champ_foreach(champ_children(node)[champ_index(node->nodemap, bit)],
                             champ_collect, out);
    }
    return 0;
}

int
champ_diff(champ_node *a, champ_node *b, champ_difflist *added, champ_difflist *removed,
           champ_difflist *changed, int by_identity)
{
    if (a == b) {
        return 0;
    }
    if (champ_is_collision(a) || champ_is_collision(b)) {
        champ_difflist la = {0}, lb = {0};
        int r = -1;
        if (champ_foreach(a, champ_collect, &la) == 0
            && champ_foreach(b, champ_collect, &lb) == 0) {
            r = champ_diff_lists(la.items, la.len, lb.items, lb.len, added, removed, changed,
                                 by_identity);
        }
        champ_difflist_free(&la);
        champ_difflist_free(&lb);
        return r;
    }
    if (a->datamap == b->datamap && a->nodemap == b->nodemap) {
        /* The same digits on both sides (the usual case between versions):
         * the slots pair up by position, and a shared one is skipped. */
        int nd = champ_ndata(a), nc = champ_nchild(a);
        for (int i = 0; i < nd; i++) {
            champ_entry *x = &champ_entries(a)[i], *y = &champ_entries(b)[i];
            if ((x->hash != y->hash || x->key != y->key || x->value != y->value
                 || x->seq != y->seq)
                && champ_diff_lists(x, 1, y, 1, added, removed, changed, by_identity) < 0) {
                return -1;
            }
        }
        for (int i = 0; i < nc; i++) {
            if (champ_diff(champ_children(a)[i], champ_children(b)[i], added, removed, changed,
                           by_identity)
                < 0) {
                return -1;
            }
        }
        return 0;
    }
    uint32_t a_bits = a->datamap | a->nodemap, b_bits = b->datamap | b->nodemap;
    /* digits only one side holds, when what they would give is not wanted */
    uint32_t skip =
        (removed != NULL ? 0 : a_bits & ~b_bits) | (added != NULL ? 0 : b_bits & ~a_bits);
    uint32_t bits = (a_bits | b_bits) & ~skip;
    while (bits) {
        uint32_t bit = bits & (~bits + 1);
        bits ^= bit;
        if ((a->nodemap & bit) && (b->nodemap & bit)) {
            if (champ_diff(champ_children(a)[champ_index(a->nodemap, bit)],
                           champ_children(b)[champ_index(b->nodemap, bit)], added, removed,
                           changed, by_identity)
                < 0) {
                return -1;
            }
            continue;
        }
        if ((a->datamap & bit) && (b->datamap & bit)) {
            champ_entry *x = &champ_entries(a)[champ_index(a->datamap, bit)];
            champ_entry *y = &champ_entries(b)[champ_index(b->datamap, bit)];
            if (x->hash == y->hash && x->key == y->key && x->value == y->value
                && x->seq == y->seq) {
                continue;
            }
        }
        champ_difflist la = {0}, lb = {0};
        int r = -1;
        if (champ_subtree_entries(a, bit, &la) == 0
            && champ_subtree_entries(b, bit, &lb) == 0) {
            r = champ_diff_lists(la.items, la.len, lb.items, lb.len, added, removed, changed,
                                 by_identity);
        }
        champ_difflist_free(&la);
        champ_difflist_free(&lb);
        if (r < 0) {
            return -1;
        }
    }
    return 0;
}

/* --- checking and debugging ---------------------------------------------- */

static Py_ssize_t
champ_fail(const char *msg)
{
    PyErr_SetString(PyExc_AssertionError, msg);
    return -1;
}

Py_ssize_t
champ_check(champ_node *node, int shift, Py_uhash_t prefix, int is_root)
{
    Py_uhash_t low = shift >= 64 ? ~(Py_uhash_t)0 : (((Py_uhash_t)1 << shift) - 1);
    if (node->rc < CHAMP_RC_ONE) {
        return champ_fail("key-trie node with no references");
    }
    if (champ_is_collision(node)) {
        champ_collision *c = (champ_collision *)node;
        if (is_root) {
            return champ_fail("the root must be a BitmapNode");
        }
        if (node->datamap != 0 || node->nodemap != 0) {
            return champ_fail("collision node with bitmaps set");
        }
        if (c->count < 2) {
            return champ_fail("collision node with fewer than 2 entries");
        }
        for (Py_ssize_t i = 0; i < c->count; i++) {
            if (c->entries[i].hash != c->hash) {
                return champ_fail("collision node holds a foreign hash");
            }
            if ((c->entries[i].hash & low) != prefix) {
                return champ_fail("collision hash off its path");
            }
            if (c->entries[i].key == NULL || c->entries[i].value == NULL) {
                return champ_fail("malformed entry");
            }
        }
        return c->count;
    }
    if (shift > CHAMP_MAX_SHIFT) {
        return champ_fail("bitmap node below the last digit");
    }
    if (node->datamap & node->nodemap) {
        return champ_fail("digit both inline and child");
    }
    int nd = champ_ndata(node), nc = champ_nchild(node);
    champ_entry *e = champ_entries(node);
    uint32_t bits = node->datamap;
    for (int i = 0; i < nd; i++) {
        uint32_t bit = bits & (~bits + 1);
        bits ^= bit;
        if ((e[i].hash & low) != prefix) {
            return champ_fail("entry hash off its path");
        }
        if (champ_bit(e[i].hash, shift) != bit) {
            return champ_fail("entry at the wrong digit");
        }
        if (e[i].key == NULL || e[i].value == NULL) {
            return champ_fail("malformed entry");
        }
    }
    if (champ_has_loan(node)) {
        champ_loan *l = champ_loan_of(node);
        champ_node *lender = l->lender;
        if (lender == NULL || lender->rc < CHAMP_RC_ONE) {
            return champ_fail("loan from a freed node");
        }
        if (champ_is_collision(lender) || champ_has_loan(lender)) {
            return champ_fail("a lender must be a bitmap node without a loan");
        }
        if ((l->owned & ~node->nodemap) != 0) {
            return champ_fail("loan owns a digit that holds no child");
        }
        uint32_t lent = node->nodemap & ~l->owned;
        if ((lent & ~lender->nodemap) != 0) {
            return champ_fail("borrowed child missing from the lender");
        }
        for (uint32_t m = lent; m != 0; m &= m - 1) {
            uint32_t bit = m & (~m + 1);
            if (champ_children(node)[champ_index(node->nodemap, bit)]
                != champ_children(lender)[champ_index(lender->nodemap, bit)]) {
                return champ_fail("borrowed child differs from the lender's");
            }
        }
    }
    Py_ssize_t total = nd;
    int has_bitmap_child = 0;
    Py_uhash_t first_hash = 0;
    int distinct = 0; /* distinct hashes seen directly here, capped at 2 */
    for (int i = 0; i < nd; i++) {
        if (distinct == 0) {
            first_hash = e[i].hash;
            distinct = 1;
        }
        else if (e[i].hash != first_hash) {
            distinct = 2;
        }
    }
    bits = node->nodemap;
    for (int i = 0; i < nc; i++) {
        uint32_t bit = bits & (~bits + 1);
        bits ^= bit;
        int d = FM_POPCOUNT32(bit - 1);
        champ_node *child = champ_children(node)[i];
        Py_ssize_t sub =
            champ_check(child, shift + CHAMP_BITS, prefix | ((Py_uhash_t)d << shift), 0);
        if (sub < 0) {
            return -1;
        }
        total += sub;
        if (champ_is_collision(child)) {
            Py_uhash_t h = ((champ_collision *)child)->hash;
            if (distinct == 0) {
                first_hash = h;
                distinct = 1;
            }
            else if (h != first_hash) {
                distinct = 2;
            }
        }
        else {
            has_bitmap_child = 1;
        }
    }
    if (!is_root) {
        if (total < 2) {
            return champ_fail("non-root node with fewer than 2 entries (must be inlined)");
        }
        if (!has_bitmap_child && distinct < 2) {
            return champ_fail("non-root bitmap node over a single hash");
        }
    }
    return total;
}

int
champ_node_ids(champ_node *node, PyObject *out)
{
    PyObject *id = PyLong_FromVoidPtr(node);
    if (id == NULL || PyList_Append(out, id) < 0) {
        Py_XDECREF(id);
        return -1;
    }
    Py_DECREF(id);
    if (!champ_is_collision(node)) {
        int nc = champ_nchild(node);
        for (int i = 0; i < nc; i++) {
            if (champ_node_ids(champ_children(node)[i], out) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

static int
champ_dump_line(PyObject *out, PyObject *line)
{
    if (line == NULL) {
        return -1;
    }
    int r = PyList_Append(out, line);
    Py_DECREF(line);
    return r;
}

static void
champ_pad(char *pad, int indent)
{
    int w = indent * 2 < 78 ? indent * 2 : 78;
    memset(pad, ' ', w);
    pad[w] = 0;
}

static int
champ_dump_entry(PyObject *out, int indent, const champ_entry *e)
{
    char pad[80], buf[64];
    champ_pad(pad, indent);
    PyOS_snprintf(buf, sizeof(buf), "%llu, %llu", (unsigned long long)e->hash,
                  (unsigned long long)e->seq);
    return champ_dump_line(
        out, PyUnicode_FromFormat("%s  (%s, %R, %R)", pad, buf, e->key, e->value));
}

int
champ_dump(champ_node *node, int indent, PyObject *out)
{
    char pad[80], buf[64];
    champ_pad(pad, indent);
    if (champ_is_collision(node)) {
        champ_collision *c = (champ_collision *)node;
        PyOS_snprintf(buf, sizeof(buf), "Collision hash=0x%llx", (unsigned long long)c->hash);
        if (champ_dump_line(out, PyUnicode_FromFormat("%s%s", pad, buf)) < 0) {
            return -1;
        }
        for (Py_ssize_t i = 0; i < c->count; i++) {
            if (champ_dump_entry(out, indent, &c->entries[i]) < 0) {
                return -1;
            }
        }
        return 0;
    }
    PyOS_snprintf(buf, sizeof(buf), "Bitmap data=0x%x nodes=0x%x", (unsigned)node->datamap,
                  (unsigned)node->nodemap);
    if (champ_dump_line(out, PyUnicode_FromFormat("%s%s", pad, buf)) < 0) {
        return -1;
    }
    int nd = champ_ndata(node), nc = champ_nchild(node);
    for (int i = 0; i < nd; i++) {
        if (champ_dump_entry(out, indent, &champ_entries(node)[i]) < 0) {
            return -1;
        }
    }
    for (int i = 0; i < nc; i++) {
        if (champ_dump(champ_children(node)[i], indent + 1, out) < 0) {
            return -1;
        }
    }
    return 0;
}
