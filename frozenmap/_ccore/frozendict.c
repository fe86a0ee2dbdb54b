/* frozendict.c -- the public frozendict: PEP 814's behaviour plus persistent
 * derivations.  Mirrors frozenmap/_pycore/frozendict.py.
 *
 * ==========================================================================
 * How frozenmap's frozendict works
 * ==========================================================================
 *
 * A frozendict is an immutable, insertion-ordered mapping.  Every "modified
 * copy" (set, delete, |, -, &, an Evolver batch) shares all but O(log n)
 * nodes with the version it came from, and old versions stay valid forever.
 * A version (fd_object) holds two tries, its length, next_seq and the cached
 * hash:
 *
 *        fd_object
 *        +-----------+      key trie (CHAMP, keytrie.c)
 *        | root -----+----> key -> entry {hash, seq, key, value}
 *        | order ----+----> order trie (radix, ordertrie.c)
 *        | len       |      seq -> (key, value), in insertion order
 *        | next_seq  |
 *        | hash      |
 *        +-----------+
 *
 * (A version of at most FLAT_MAX = 32 items holds no tries at all: see 10;
 * how two versions are read together: see 11.)
 *
 * 1. How a key finds its entry: the key trie
 * ------------------------------------------
 * The key trie is a CHAMP trie (Steindorfer & Vinju, "Optimizing Hash-Array
 * Mapped Tries for Fast and Lean Immutable JVM Collections", OOPSLA 2015)
 * over the full 64-bit hash, read 5 bits at a time from the low end:
 *
 *     hash = ...  01101 10010 00111        digit at shift s = (h >> s) & 31
 *                 shift10 shift5 shift0
 *
 * A bitmap node has two 32-bit maps: `datamap` marks digits that hold an
 * entry inline, `nodemap` digits that hold a child node.  Entries and
 * children are stored densely in digit order and indexed by the popcount of
 * the map below the digit's bit:
 *
 *     datamap = 0b...0100100    entries:  [e(digit 2), e(digit 5)]
 *     nodemap = 0b...1000000    children: [node(digit 6)]
 *
 * Lookup (champ_find): take the digit; if its datamap bit is set, compare
 * the stored hash, then identity, then stored_key == key; if its nodemap bit
 * is set, descend and take the next 5 bits; else the key is absent.  At most
 * 13 levels; log32(n) in practice (4 for a million keys).  A key's __hash__
 * runs once per operation; stored hashes mean stored keys are never hashed
 * again, not even when an entry must move down.
 *
 * Two entries whose digits clash at a level move into a child built
 * canonically: equal full hashes make a *collision node* (a short list,
 * compared as a set) right there; different hashes make a bitmap node at the
 * next shift (recursively, while the digits agree).  Deletion undoes exactly
 * that: a non-root child left with one entry is inlined into its parent, and
 * a non-root bitmap node left holding only a collision node is replaced by
 * it.  So the shape of the trie is a function of the *set of hashes* alone,
 * never of history.  That is what makes `==` and diff() fast: two versions
 * are compared by walking both tries in parallel position by position
 * (champ_equal, champ_diff), skipping subtrees they share by identity --
 * O(d log n) for versions d edits apart, where dict-backed or HAMT maps
 * (hamt.c, immutables) pay O(n).  The same walk makes |, -, & and
 * Evolver.update with a related frozendict cost what changed: only the
 * entries it reports go through the builder (merge_version,
 * fd_keys_missing_from; mapping_pair_path chooses the walk, section 11).
 *
 * 2. How insertion order is kept: the order trie
 * ----------------------------------------------
 * Each new key takes seq = next_seq and next_seq grows by one (64-bit, only
 * along a line of descent).  Replacing a value keeps the seq, so the key
 * keeps its position, as in dict.  The order trie maps seq -> (key, value):
 * a radix trie with the most significant digit first, so walking it in
 * order is insertion order and walking it backwards is reversed().  Leaves
 * hold 8 items (digit = the low 3 bits of seq); inner nodes hold 16 children
 * (4-bit digits at shifts 3, 7, 11, ...).  Small leaves keep the path a
 * derivation copies short: 8 + 4 x 16 slots at n = 100,000, against
 * 16 + 5 x 8 with leaves of 16 and inner nodes of 8 (5-11% fewer
 * instructions for set and delete, for about 3.5 more bytes per item).
 *
 *     shift 7          [ 0 | 1 ]                 prefix = seq >> (shift+width)
 *                      /     \
 *     shift 3    [0 1 .. 15]  leaf (shift 0, prefix 0x10)    <- compressed
 *                /   \              path: a child may skip levels; its
 *     shift 0  leaf  leaf ...       prefix tells a hit from a miss
 *
 * Leaves (shift 0) hold the items; inner nodes hold children.  Deletion
 * really removes: an emptied leaf disappears and an inner node left with one
 * child is replaced by it, so the trie has < 2n nodes under any deletion
 * pattern, and no edit ever pays for tombstones or compaction -- not even
 * when the same old version is derived from again and again (which defeats
 * every amortized "vector + tombstones + rebuild" scheme).  Appending walks
 * the right spine; iteration (order_cursor) uses an explicit stack of
 * ORDER_MAX_DEPTH (17) slots and does no lookups, so it calls no user code.
 *
 * 3. Who owns the keys and values (C core only)
 * ---------------------------------------------
 * Values live in both tries: a lookup needs one descent, iteration needs no
 * lookups, equality reads only the key trie.  Both tries of a version always
 * hold exactly the same (key, value) pairs, and everything that holds a key
 * root (a version, a transient) also holds the matching order root.  So the
 * order trie holds the strong references and the key trie *borrows* them:
 * key-trie nodes reference only other key-trie nodes, cannot be part of a
 * reference cycle, and are therefore plain C structs with their own
 * reference count, not Python objects -- a 16-byte head instead of 32 plus
 * a GC header, and copying one needs no increfs of its entries.  The order-trie nodes are GC objects whose tp_traverse visits the
 * items (leaves) or children (inner nodes).  Iterators hold the order root
 * of what they walk, which keeps the items alive by itself.  Callers that
 * replace or remove an item hold their own reference to the old key and
 * value until both tries are updated, so no finalizer runs mid-edit.
 *
 * 4. Transient ownership: how an Evolver edits in place
 * ----------------------------------------------------
 * A transient (the internal builder behind the constructor, |, -, &,
 * fromkeys, and the public Evolver) edits a node in place when nothing else
 * can reach it: the node, and every node on the path above it, is referenced
 * exactly once.  Everything that holds a version -- a frozendict, an
 * iterator's snapshot, a transient saved for rollback -- holds a reference on
 * its roots, so a node reachable from anything but the transient has a count
 * above 1 somewhere on its path and is copied on first touch; the copy is
 * referenced once and later edits change it in place.  So k edits copy each
 * trie path at most once, freeze() wraps the roots in a new frozendict in
 * O(1), and nothing reachable from a published version is ever written
 * again.  (The pure core, which cannot count references, gives each
 * transient an owner token and stamps its nodes with it; the two rules pick
 * the same nodes, and the C nodes save the 8-byte token.)  Single-key
 * derivations on a frozendict (set, delete, discard) use owner 0: a plain
 * path copy, with exactly-sized nodes.
 *
 * Edits are split in two: locate (champ_find, the only step that runs the
 * keys' __hash__/__eq__), update the hash accumulator (a value's __hash__),
 * then change the tries, which runs no user code.  A re-entrant edit of the
 * same Evolver from inside that user code raises RuntimeError.  Each trie
 * edit is failure-atomic (allocate first, write in place after; editable
 * nodes are top-closed), and if the second of the two fails with MemoryError
 * the first is undone on its now-editable path without allocating: a failed edit
 * leaves every version and the evolver exactly as they were.  The write phase
 * runs no user code of its own, but allocating an order node can start a GC
 * run whose finalizers could read or freeze() the evolver half-way; so an
 * Evolver's write phase pauses the collector (transient_gc_pause).
 *
 * 5. Hashing
 * ----------
 * hash(fd) == hash(frozenset(fd.items())): the XOR of shuffle_bits(hash of
 * each (key, value) pair), finalised like frozenset's hash (hashing.c).  The
 * pair hash is CPython's 2-tuple hash computed from the stored key hash.  A
 * version derived from one whose hash is known gets its hash in O(1): the
 * accumulator is recovered from the cached hash (hashing_unfinalize: every
 * step of the finaliser is invertible), the old pair XORed out, the new one
 * in, and the result finalised and cached at once; a value whose hash raises
 * only leaves the new version's hash unknown.
 *
 * 6. Costs
 * --------
 *     lookup, in, get                 O(log32 n)
 *     set, delete, discard            O(log n) time and new memory, worst case
 *     |, -, & with k keys             O(k log n)
 *     |, -, &, Evolver.update with a frozendict d edits away
 *                                     O(d log n): shared subtrees skipped
 *     constructor from a dict         O(n): radix partition + bottom-up build
 *     evolve(), freeze(), copy()      O(1)
 *     iteration, repr, pickle         O(n), no lookups
 *     == of versions d edits apart    O(d log n)
 *     diff of versions d edits apart  O(d log n + output)
 *     hash()                          O(n) once, cached; O(1) when derived
 *
 * 7. Invariants (checked by _check(), i.e. fd_py_check below)
 * --------------------------------------------------------
 *  - bitmaps match the node contents; every entry's hash agrees with the
 *    digits that led to it; collision nodes hold >= 2 entries of one hash;
 *  - the key-trie shape is canonical (see 1);
 *  - order nodes: shifts decrease downwards, inner nodes have >= 2 children,
 *    seqs strictly increase in a walk;
 *  - every key-trie entry's (key, value) is the very pair at its seq in the
 *    order trie and both tries hold len items; next_seq is above every seq;
 *  - a cached hash has an accumulator behind it (unfinalise, finalise).
 *
 * 8. The safety rule: where user code runs, and why nothing breaks there
 * ---------------------------------------------------------------------
 * User code runs wherever this extension calls a key's __hash__/__eq__, a
 * value's __hash__/__eq__/__repr__, a foreign mapping's methods, or releases
 * a reference (any decref can run a finalizer or a weakref callback) or
 * allocates (any allocation can start a GC pass, which runs finalizers and
 * tp_clear).  That code may read, edit, freeze or clear the same Evolver,
 * advance the same iterator, or run in another thread (the GIL changes hands
 * inside a Python __eq__).  The rule, followed at every such point:
 *
 *   every structure reachable from Python is consistent, every pointer used
 *   after the call is held by a strong reference, and new state is
 *   installed before old state is released.
 *
 * The call sites, and how each is protected:
 *  - Key hash and key __eq__ in a frozendict read (fd_find,
 *    mapping_get, ==, diff, &, -, index: position_of):
 *    the caller holds the version and a version's tries
 *    never change (tp_clear runs only on unreachable objects, and empties
 *    the version before releasing anything: see fd_tp_clear); the stored key is
 *    held across its __eq__ (champ_keys_equal).
 *  - The kept keys' hash in slice (position_slice_load): the keys and
 *    values are referenced by the entries of the new map before the first
 *    __hash__ runs, and the tries are built after the last.
 *  - An Evolver's positional reads (key_at, ..., index, slice) read the
 *    version freeze() returns, held for the call: as a frozendict read.
 *  - Key __eq__ in an Evolver read (transient_shared_get: [], get, in,
 *    keys/items views' in): the key is hashed before the roots are read; then both
 *    roots are held for the walk, so an edit made meanwhile -- by that
 *    __eq__, a finalizer, or another thread -- copies the paths it changes
 *    instead of editing them in place, and releases nothing the walk uses;
 *    the value found is taken (incref) before the roots are let go.
 *  - Key hash/__eq__ and value __hash__ inside an Evolver edit (locate and
 *    hash accumulator, before the write phase): the edit holds the evolver's
 *    lock and its busy flag.  An edit from the same thread raises
 *    RuntimeError (evolver_begin); one from another thread waits for the
 *    lock with the GIL released (evolver_lock); reads and freeze() from that
 *    code only add references, which make the write phase copy.  So the
 *    entry located stays where it was until the write phase uses it.
 *    popitem hashes its last key the same way (evolver_popitem_hint), the
 *    key and value held, to find the entry it then removes.
 *  - The write phase (transient_write_new, transient_assoc_hashed,
 *    transient_remove_entry, merge.c: merge_bulk_load) runs no user code of its
 *    own: an Evolver's pauses the collector (transient_gc_pause), replaced
 *    values are held until both tries are updated, and every field of the
 *    transient is written before the old roots are released.
 *  - Releases that can run finalizers: Evolver.clear(), a restart by
 *    Evolver.__init__ (evolver_start), update()'s rollback, forgetting a
 *    cached freeze() (evolver_forget_frozen): each installs the new state
 *    first, then releases the old one.
 *  - tp_clear (fd_tp_clear, evolver_tp_clear, view_iter_tp_clear): the object is
 *    made the empty one (the shared empty root, no order trie, length 0, an
 *    iterator's cursor exhausted) before anything is released, and the key
 *    trie (which borrows keys and values) goes before the order trie (which
 *    owns them).  A callback that finds the object afterwards sees an empty
 *    map or an exhausted iterator (the rules below).
 *  - Allocation inside freeze() (transient_publish): the roots are
 *    referenced before the version is allocated, and the result is cached
 *    only if no edit ran during the allocation (evolver_py_freeze).
 *  - A wrong call (module.c: fm_wrong_call) hands its arguments to Python to
 *    word the TypeError (a keyword name's str subclass runs code there): it
 *    happens before the method reads or changes anything, and the method
 *    returns at once.
 *  - Iteration and repr walk a snapshot whose root they hold
 *    (mapping_order; an evolver iterator also checks the resized
 *    counter on every step); keys and values are borrowed from that
 *    snapshot, never from the live evolver.
 *  - Merges (constructor, |, update) call the argument's keys()/items()/
 *    __getitem__/__iter__ between complete single edits of a private
 *    transient, or of the Evolver under its lock; update() saves the roots
 *    and on failure puts them back before releasing the partial merge.
 *  - Threads: versions are immutable; an Evolver's edits are serialised by
 *    its lock (on GIL builds too), its reads hold references as above, and
 *    a free-threaded build also takes the object's critical section where
 *    roots are read or swapped.
 *
 * Three rules make the list above hold for code we did not foresee; each is
 * enforced in one place:
 *
 *  - Borrowed references.  No borrowed reference survives a call that can
 *    run Python code (a key's or value's method, a finalizer, a weakref
 *    callback, any allocation).  Loops over a dict take a strong reference
 *    to each name and value and check the size like dict's iterator
 *    (merge.c: merge_kwargs; merge_bulk_load only copies
 *    references, no code runs while it reads); arguments parsed from a
 *    keyword dict, which the called code can empty, are held while used
 *    (evolver.c: evolver_tp_init; the other methods take their arguments
 *    from a tuple or a vectorcall array, which the caller holds); what a
 *    type's dict lends is held across allocations (module.c:
 *    fm_type_fullname, fm_lookup_special; merge.c:
 *    merge_default_iter).
 *    Entries found in a version's trie may be borrowed while the caller
 *    holds the version, whose tries never change.
 *  - Cleared state.  After tp_clear an object is a valid empty one, for
 *    every method: an empty trie is the shared static root
 *    (keytrie.c: champ_empty_root; a root is never NULL, so no reader checks),
 *    and an empty order trie is NULL, which every order_* function takes.
 *    frozendict.c: fd_tp_clear; evolver.c: evolver_tp_clear (also what an
 *    Evolver holds before __init__, evolver_init_fields); views.c:
 *    view_iter_tp_clear (exhausted, no Evolver to watch).  Views have no
 *    tp_clear (views.c: view_tp_dealloc says why), as CPython's dict views:
 *    every cycle through a view passes through its mapping, so a view always
 *    has one -- after a collection, an emptied one.  Order nodes have none
 *    either: a cycle through them passes through the frozendict, Evolver or
 *    iterator that holds their root (gc.get_referents can hand one out, but
 *    it has no method that reads it).  Tests:
 *    tests/test_cleared_and_borrowed.py calls every method on each.
 *  - Trashcan.  Every type whose deallocation can start a chain of
 *    deallocations of any length goes through the trashcan
 *    (Py_TRASHCAN_BEGIN/END, which CPython 3.14+ applies by itself and
 *    defines as nothing): fd_tp_dealloc, evolver_tp_dealloc,
 *    view_iter_tp_dealloc and view_tp_dealloc (views.c), and order_dealloc
 *    for tracked nodes (ordertrie.c: an untracked node holds no GC object,
 *    so a chain through it reaches one of the others).
 *
 * The pure core follows the same rule; Python's own references keep its
 * nodes alive, and its reads take the evolver's lock and count themselves
 * so that an edit made from inside a read copies instead of writing under
 * it (_pycore/evolver.py).  Tests: tests/hostile/, one file per mechanism
 * (test_reentry_sweep.py is the matrix), and tests/test_threads.py.
 *
 * 9. Which function does what
 * ---------------------------
 *     hashing.c    hashing_key_hash, hashing_pair_hash, hashing_finalize,
 *                  hashing_acc_replace
 *     keytrie.c    champ_find, champ_put, champ_remove, champ_build,
 *                  champ_equal, champ_diff, champ_check, champ_node_ids
 *     ordertrie.c  order_get, order_insert, order_replace, order_remove,
 *                  order_build, order_cursor_*, order_check
 *     transient.c  transient_*: the builder (init, assoc, dissoc, publish),
 *                  transient_version_new
 *     derive.c     derive_with, derive_without: the one-key derivations
 *                  of a version (set, delete, discard)
 *     reads.c      the reads both types share: mapping_get/_order/_len,
 *                  mapping_equal, mapping_repr, position_at/_of/_slice,
 *                  mapping_pair_path (the one choice of path for two maps)
 *     merge.c      merge_into, the one merge (dict.update's reading of
 *                  an operand: merge_version, merge_keys, merge_pairs)
 *     evolver.c    the Evolver type
 *     views.c      keys/values/items views and the iterator
 *     frozendict.c the frozendict type (this file)
 *     module.c     module state, multi-phase init
 *
 *     flat.c       flat_with, flat_without, flat_promote, flat_demote
 *                  (versions of at most FLAT_MAX items; flat_scan is
 *                  inline in cfrozenmap.h)
 *
 * 10. Small maps: the flat form (flat.c)
 * --------------------------------------
 * A version is flat exactly when len <= FLAT_MAX (32; cfrozenmap.h, equal
 * to the pure core's flat.py FLAT_MAX; why 32 and not 8, with the numbers:
 * docs/design-decisions.md, "Small maps: the flat form and FLAT_MAX"): no
 * tries, next_seq 0, and fd_object's two trie fields (unions) hold
 *
 *   values -> its own PyMem array of len values, in insertion order;
 *   keys   -> a key block (flat_keys): a count of its holders, then len
 *             flat_key {hash, key} in insertion order.
 *
 * A set of an existing key (and a copy into another type, and an Evolver's
 * freeze() after value changes) makes a version that shares the key block
 * of the version it came from and holds its own values: 72 B and 8 B per
 * item (136 B at 8 keys, 328 B at 32) instead of 24 B per item.  The block
 * is not a Python object and the GC never sees it: every version (or
 * transient) that holds it counts once in it *and* holds its own strong
 * reference to each key, which its tp_traverse visits and its tp_clear
 * releases, so the GC's arithmetic is that of a private copy.  Hence no
 * version's tp_clear can empty what another reads (a weakref callback that
 * reaches a version during a collection finds its keys whole), and a
 * version keeps no other version's values alive.  No seqs: the position is
 * the order.  Every reader goes through fm_flat_keys / fm_flat_values.
 *
 *  - Lookups scan the stored hashes in order, four a step (one branch per
 *    four entries, fm_flat_next_hash); on an equal hash, identity, then the
 *    stored key's __eq__ (held, champ_keys_equal): one __eq__ per entry
 *    with an equal hash, as a trie node makes.  The version is held by the
 *    caller and holds its block and keys, so they stay valid across that
 *    call (section 8).
 *  - set of a new key / delete copy the items into new parts (flat_with,
 *    flat_without); one key past FLAT_MAX promotes (both tries built
 *    bottom-up from the entries and the new one, seqs 0..FLAT_MAX); every
 *    path that publishes tries (transient_version_new, derive_take)
 *    demotes when the result has at most FLAT_MAX items (flat_demote: the
 *    key trie's entries sorted by seq).  Seqs are never observable, so
 *    renumbering is not.
 *  - The hash accumulator is the same XOR of the same pair hashes, so a flat
 *    and a trie version with equal items hash equal.  Equal lengths mean the
 *    same form, so == compares flat with flat (by position first) or tries
 *    with tries.
 *  - Construction from an exact dict or keywords of at most FLAT_MAX items
 *    fills the parts directly (flat_from_dict, flat_from_kwnames).
 *    Iterators walk the held version's arrays by position (views.c).
 *  - A transient has a flat mode (transient_init_flat_from: t->flat, a flat
 *    version; root and order NULL): | of a flat receiver and the Evolver of a
 *    flat version edit it with transient_assoc/_put_new/_dissoc and
 *    transient_remove_at, as they edit tries (the same user calls in the same
 *    order: the keys' __hash__, the scan's __eq__, the values' __hash__ for
 *    the accumulator, then a write that runs none), and t promotes
 *    (flat_t_promote) only when an item more than FLAT_MAX arrives.  The
 *    write edits t->flat in place while t holds its only reference (and,
 *    when keys change, is the block's only holder: flat_t_own; else it
 *    copies first, as a trie edit copies a shared node): | starts from the
 *    receiver itself, so its first change copies (the values only, beside
 *    the same block, while only values change), and publishes t->flat
 *    itself (no change: the receiver).  An Evolver starts from a copy of the
 *    source's values beside its block, in a version the GC does not track
 *    (the Evolver's traverse visits its items: no GC pass or tp_clear of
 *    the source can empty it apart from the Evolver); reads hold a reference
 *    across __eq__ (an edit made meanwhile copies), an iteration walks an
 *    order trie built from a snapshot, and freeze() publishes a copy of the
 *    values beside the Evolver's block (so a later key edit copies the
 *    block first).  A ctypes tp_clear of the Evolver during its own edit is
 *    caught by checking t->flat after each user call (flat_t_find,
 *    transient_flat_unchanged).
 *  - Two flat versions meet on mapping_pair_path's FM_PAIR_FLAT: == and
 *    diff pair their entries by position first (the same key object under
 *    the same hash at the same position, or one position further past a
 *    delete: fd_flat_equal, fd_diff_flat, step for step the pure core's
 *    flat_equal and flat_diff), then look up the rest.  A flat version
 *    beside tries meets them on FM_PAIR_WALK (a key trie built for the walk,
 *    flat_key_trie, whose entries borrow from the held version) or
 *    FM_PAIR_ENTRIES; see mapping_pair_path (reads.c) for the one choice
 *    and the guarantees every path keeps.  Every result is published
 *    through the demoting paths, so the invariant holds.  A delete that
 *    leaves FLAT_MAX items demotes straight from the version's tries
 *    (flat_demote with the entry to skip).
 *  - tp_traverse visits a version's keys and values (its own references).
 *    tp_clear detaches everything (the empty flat version: values and keys
 *    NULL, len 0) before releasing its references and its count in the
 *    block; a cleared version is a valid empty map, and the versions that
 *    share its block read on unchanged.  An iterator over a version
 *    cleared with it in one cycle stops (it checks remaining against the
 *    length).
 *
 * 11. Two versions: one choice of path (reads.c: mapping_pair_path)
 * -----------------------------------------------------------------
 * Every operation on two versions of this core (==, diff, -, &, |,
 * Evolver.update, the constructor and |= through the merge, merge_with)
 * asks mapping_pair_path how to read them, from both operands' forms and
 * sizes: FM_PAIR_FLAT (both flat: by position first), FM_PAIR_TABLES (two
 * tables: == compares their dicts), FM_PAIR_WALK (the key tries walked
 * together, shared subtrees skipped; an empty builder takes the operand's
 * tries; a table walks its twin) or FM_PAIR_ENTRIES (the operand's entries
 * one by one, in its order).  Every path keeps the tries' guarantees -- stored
 * keys never hashed again, identity before __eq__ on each entry, values
 * compared identity first -- and the pure core makes the same choice with
 * the same function name, so both cores make the same user calls in the
 * same order (tests/test_transcripts.py compares them).
 *
 * 12. Maps built once and read: the table form (table.c)
 * --------------------------------------------------------
 * A version of more than FLAT_MAX keys built from a dict, pairs, keywords
 * or a pickle, whose keys all hash without user code, holds a private
 * exact dict (fd->table): construction is a dict copy and a scan of the
 * keys' types, and its reads are the dict's.  The first operation that
 * needs tries builds them, as a version of its own (fd->twin), from the
 * keys' hashes (computed again: no user code) and with no __eq__, and
 * installs it once: a build that finds one installed meanwhile (by another
 * thread, or by a finalizer its own allocations ran) releases its own and
 * returns that one (compare-and-swap on a free-threaded build).  Every derivation of a
 * table derives from its twin, so it is a tries version sharing all but a
 * path with the twin.  The dict is never changed and never shown: it is
 * untracked by the GC (the version's traverse visits its items), an
 * iterator's inner dict iterator is untracked too, and tp_clear leaves the
 * empty flat version, as for every form.
 *
 * Further reading: Bagwell, "Ideal Hash Trees" (2001); Steindorfer & Vinju
 * (2015); CPython's Python/hamt.c, whose essay this one follows.
 */
#include "cfrozenmap.h"
#include "docstrings.h"

static champ_node *fd_key_trie(fm_state *st, PyObject *op);

/* self as an exact frozendict (itself if it already is one). */
/* --- construction -------------------------------------------------------- */

static PyObject *
fd_new_impl(fm_state *st, PyTypeObject *tp, PyObject *arg, PyObject *kwargs,
            PyObject *const *kwvalues, PyObject *kwnames)
{
    int has_kw = (kwargs != NULL && PyDict_GET_SIZE(kwargs))
                 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames));
    if (arg != NULL && !has_kw && fm_is_frozendict(st, arg)) {
        if (tp == st->frozendict_type && Py_IS_TYPE(arg, st->frozendict_type)) {
            return Py_NewRef(arg);
        }
        fd_object *a = fm_as_fd(arg);
        if (fm_is_flat(a)) {
            return flat_version_copy(tp, a);
        }
        if (fm_is_table(a)) {
            return table_version_share(tp, a);
        }
        Py_uhash_t acc = 0;
        int acc_valid = fm_version_acc(a, &acc);
        return transient_version_new(tp, a->root, a->order, a->len, a->next_seq, acc,
                                     acc_valid);
    }
    if (!has_kw) {
        if (arg == NULL) {
            return flat_version_new(tp, NULL, NULL, 0, 0, 0);
        }
        if (PyDict_CheckExact(arg) && PyDict_GET_SIZE(arg) <= FLAT_MAX) {
            return flat_from_dict(tp, arg);
        }
        if (PyDict_CheckExact(arg)) {
            /* Built once from a dict: the table form, when its keys allow */
            PyObject *table = table_from_dict(tp, arg);
            if (table != Py_None) {
                return table;
            }
            Py_DECREF(table);
        }
    }
    else if (arg == NULL) {
        if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) <= FLAT_MAX) {
            return flat_from_kwnames(tp, kwvalues, kwnames);
        }
        if (kwargs != NULL && PyDict_GET_SIZE(kwargs) <= FLAT_MAX) {
            return flat_from_dict(tp, kwargs);
        }
    }
    transient t;
    if (transient_init_table(st, &t) < 0) { /* a build from nothing */
        return NULL;
    }
    PyObject *result = NULL;
    if (merge_into(st, &t, arg, kwargs, kwvalues, kwnames) == 0) {
        result = transient_publish(st, &t, tp);
    }
    transient_clear(&t);
    return result;
}

static PyObject *
fd_tp_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    fm_state *st = fm_state_of_type(tp);
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (fm_check_nargs("frozendict", nargs, 0, 1) < 0) {
        return NULL;
    }
    return fd_new_impl(st, tp, nargs ? PyTuple_GET_ITEM(args, 0) : NULL, kwargs, NULL, NULL);
}

static PyObject *
fd_tp_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    fm_state *st = fm_state_of_type(tp);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (fm_check_nargs("frozendict", nargs, 0, 1) < 0) {
        return NULL;
    }
    if (tp != st->frozendict_type) {
        /* A subclass: its __init__ must run too; take the generic path. */
        PyObject *argtuple = PyTuple_New(nargs);
        if (argtuple == NULL) {
            return NULL;
        }
        for (Py_ssize_t i = 0; i < nargs; i++) {
            PyTuple_SET_ITEM(argtuple, i, Py_NewRef(args[i]));
        }
        PyObject *kw = NULL;
        if (kwnames != NULL && PyTuple_GET_SIZE(kwnames)) {
            kw = PyDict_New();
            if (kw == NULL) {
                Py_DECREF(argtuple);
                return NULL;
            }
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
                if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0) {
                    Py_DECREF(kw);
                    Py_DECREF(argtuple);
                    return NULL;
                }
            }
        }
        PyObject *r = PyType_Type.tp_call(type, argtuple, kw);
        Py_DECREF(argtuple);
        Py_XDECREF(kw);
        return r;
    }
    return fd_new_impl(st, tp, nargs ? args[0] : NULL, NULL, args + nargs, kwnames);
}

/* --- GC and lifetime ----------------------------------------------------- */

static int
fd_tp_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(op));
    fd_object *s = fm_as_fd(op);
    if (fm_is_flat(s)) {
        /* Its own references: its values, and one to each key of its block
         * (every holder of a shared block holds its own). */
        flat_key *keys = fm_flat_keys(s);
        PyObject **values = fm_flat_values(s);
        for (Py_ssize_t i = 0; i < s->len; i++) {
            Py_VISIT(keys[i].key);
            Py_VISIT(values[i]);
        }
        return 0;
    }
    if (fm_is_table(s)) {
        Py_VISIT((PyObject *)table_twin_if_built(s));
        return table_traverse(s->table, visit, arg);
    }
    /* The key trie is not a GC object: it holds no item references. */
    Py_VISIT(s->order);
    return 0;
}

static int
fd_tp_clear(PyObject *op)
{
    /* Make this the empty version -- the shared empty root, no order trie,
     * length 0, as frozendict() -- before releasing anything: the release
     * can run a weakref callback that finds this object (through an object
     * the GC could not clear) and calls any method on it, as on any empty
     * frozendict.  The key trie goes first: it borrows the keys and values
     * the order trie owns. */
    fd_object *s = fm_as_fd(op);
    if (fm_is_flat(s)) {
        flat_clear(s);
        return 0;
    }
    if (fm_is_table(s)) {
        PyObject *table = s->table, *twin = (PyObject *)table_twin_if_built(s);
        s->table = NULL; /* the empty flat version */
        s->twin = NULL;
        s->len = 0;
        FM_STORE_HASH(s->hash, -1);
        Py_XDECREF(twin);
        Py_DECREF(table);
        return 0;
    }
    champ_node *root = s->root;
    order_node *order = s->order;
    s->values = NULL; /* the empty flat version */
    s->keys = NULL;
    s->len = 0;
    s->next_seq = 0;
    FM_STORE_HASH(s->hash, -1);
    champ_decref(root);
    Py_XDECREF(order);
    return 0;
}

static void
fd_tp_dealloc(PyObject *op)
{
    PyTypeObject *tp = Py_TYPE(op);
    PyObject_GC_UnTrack(op);
    Py_TRASHCAN_BEGIN(op, fd_tp_dealloc)
    fd_tp_clear(op); /* leaves the empty flat version: nothing more to free */
    tp->tp_free(op);
    Py_DECREF(tp);
    Py_TRASHCAN_END
}

/* --- reads --------------------------------------------------------------- */

/* The value stored for key (borrowed from op, which the caller holds):
 * FM_FOUND and *value, FM_MISSING or FM_ERROR. */
static inline int
fd_find(PyObject *op, PyObject *key, PyObject **value)
{
    fd_object *fd = fm_as_fd(op);
    if (fm_is_table(fd)) {
        return table_find(fd, key, value);
    }
    Py_uhash_t h;
    if (FM_UNLIKELY(hashing_key_hash_fast(key, &h) < 0)) {
        return FM_ERROR;
    }
    if (fm_is_flat(fd)) {
        Py_ssize_t i;
        fm_lookup r = flat_scan(fd, h, key, &i);
        if (r == FM_FOUND) {
            *value = fm_flat_values(fd)[i];
        }
        return r;
    }
    champ_entry *e;
    int r = champ_walk(fd->root, h, key, &e, NULL);
    if (r > 0) {
        *value = e->value;
    }
    return r;
}

/* The entry of key, whose hash h is known (a stored key), copied into
 * *entry (a flat version's with its position as the seq; key and value
 * borrowed from op): FM_FOUND, FM_MISSING or FM_ERROR. */
static int
fd_find_entry_hashed(PyObject *op, Py_uhash_t h, PyObject *key, champ_entry *entry)
{
    fd_object *fd = fm_as_fd(op);
    if (fm_is_table(fd)) {
        /* the entry (its seq: its position) is the twin's */
        PyObject *twin = table_twin(fm_state_of_type(Py_TYPE(op)), fd);
        if (twin == NULL) {
            return FM_ERROR;
        }
        int r = fd_find_entry_hashed(twin, h, key, entry); /* the twin is held by fd */
        Py_DECREF(twin);
        return r;
    }
    if (fm_is_flat(fd)) {
        Py_ssize_t i;
        fm_lookup r = flat_scan(fd, h, key, &i);
        if (r == FM_FOUND) {
            *entry = (champ_entry){fm_flat_keys(fd)[i].hash, (uint64_t)i,
                                   fm_flat_keys(fd)[i].key, fm_flat_values(fd)[i]};
        }
        return r;
    }
    champ_entry *e;
    int r = champ_walk(fd->root, h, key, &e, NULL);
    if (r > 0) {
        *entry = *e;
    }
    return r;
}

/* fd_find's entry, copied into *entry (as fd_find_entry_hashed). */
static int
fd_find_entry(PyObject *op, PyObject *key, champ_entry *entry)
{
    Py_uhash_t h;
    if (hashing_key_hash_fast(key, &h) < 0) {
        return FM_ERROR;
    }
    return fd_find_entry_hashed(op, h, key, entry);
}

FM_POPCNT_CLONES
static PyObject *
fd_tp_subscript(PyObject *op, PyObject *key)
{
    PyObject *value;
    int r = fd_find(op, key, &value);
    if (FM_LIKELY(r > 0)) {
        return Py_NewRef(value);
    }
    if (r < 0) {
        return NULL;
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    if (!Py_IS_TYPE(op, st->frozendict_type)) {
        /* Looked up as dict does (on the class's MRO, bound like any special
         * method), not as an attribute of the type, which a metaclass
         * controls. */
        PyObject *missing = fm_lookup_special(op, "__missing__");
        if (missing != NULL) {
            PyObject *res = PyObject_CallOneArg(missing, key);
            Py_DECREF(missing);
            return res;
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    fm_set_key_error(key);
    return NULL;
}

FM_POPCNT_CLONES
static PyObject *
fd_py_get(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("get", nargs, 1, 2) < 0) {
        return NULL;
    }
    PyObject *value;
    int r = fd_find(op, args[0], &value);
    if (r > 0) {
        return Py_NewRef(value);
    }
    if (r < 0) {
        return NULL;
    }
    return Py_NewRef(nargs > 1 ? args[1] : Py_None);
}

FM_POPCNT_CLONES
static int
fd_tp_contains(PyObject *op, PyObject *key)
{
    PyObject *value;
    return fd_find(op, key, &value);
}

static Py_ssize_t
fd_tp_length(PyObject *op)
{
    return fm_as_fd(op)->len;
}

static PyObject *
fd_py_match_self(PyObject *op, void *closure)
{
    /* case frozendict(x) binds x to the subject, as for dict(x). */
    return Py_NewRef(op);
}

static PyObject *
fd_py_copy(PyObject *op, PyObject *unused)
{
    return transient_version_exact(fm_state_of_type(Py_TYPE(op)), op);
}

static PyObject *
fd_py_fromkeys(PyObject *cls, PyObject *const *args, Py_ssize_t nargs)
{
    if (fm_check_nargs("fromkeys", nargs, 1, 2) < 0) {
        return NULL;
    }
    fm_state *st = fm_state_of_type((PyTypeObject *)cls);
    PyObject *iterable = args[0], *value = nargs > 1 ? args[1] : Py_None;
    transient t;
    PyObject *start = NULL, *it = NULL, *key, *result = NULL;
    int is_exact = cls == (PyObject *)st->frozendict_type;
    if (is_exact) {
        if (transient_init_table(st, &t) < 0) { /* a build from nothing */
            return NULL;
        }
    }
    else {
        start = PyObject_CallNoArgs(cls);
        if (start == NULL) {
            return NULL;
        }
        if (!fm_is_frozendict(st, start)) {
            it = PyObject_GetIter(iterable);
            if (it == NULL) {
                Py_DECREF(start);
                return NULL;
            }
            while ((key = PyIter_Next(it)) != NULL) {
                int r = PyObject_SetItem(start, key, value);
                Py_DECREF(key);
                if (r < 0) {
                    break;
                }
            }
            Py_DECREF(it);
            if (PyErr_Occurred()) {
                Py_DECREF(start);
                return NULL;
            }
            return start;
        }
        if (transient_init_from(st, &t, start) < 0) {
            Py_DECREF(start);
            return NULL;
        }
    }
    it = PyObject_GetIter(iterable);
    if (it == NULL) {
        goto done;
    }
    while ((key = PyIter_Next(it)) != NULL) {
        fm_edit r = transient_assoc(st, &t, key, value);
        Py_DECREF(key);
        if (r == FM_EDIT_FAILED) {
            goto done;
        }
    }
    if (PyErr_Occurred()) {
        goto done;
    }
    result = transient_publish(st, &t, st->frozendict_type);
    if (result != NULL && !is_exact) {
        Py_SETREF(result, PyObject_CallOneArg(cls, result));
    }
done:
    Py_XDECREF(it);
    Py_XDECREF(start);
    transient_clear(&t);
    return result;
}

/* --- equality and hashing ------------------------------------------------ */

/* a == b for two flat versions of one length, which the caller holds: b's
 * entry at the same position by identity first (versions derived from one
 * another keep their order), then a scan.  1, 0 or -1. */
static int
fd_flat_equal(fd_object *a, fd_object *b)
{
    Py_ssize_t n = a->len;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* Read again each time: __eq__ runs user code (a and b, which hold
         * their owners, are held by the caller). */
        flat_key ka = fm_flat_keys(a)[i], *kb = fm_flat_keys(b);
        Py_ssize_t j = i;
        if (kb[i].key != ka.key || kb[i].hash != ka.hash) {
            fm_lookup r = flat_scan(b, ka.hash, ka.key, &j);
            if (r != FM_FOUND) {
                return r == FM_ERROR ? -1 : 0;
            }
        }
        PyObject *va = fm_flat_values(a)[i], *vb = fm_flat_values(b)[j];
        if (va != vb) {
            int r = PyObject_RichCompareBool(va, vb, Py_EQ);
            if (r <= 0) {
                return r;
            }
        }
    }
    return 1;
}

/* a == b for two versions of one length, held by the caller, on the path
 * mapping_pair_path chooses: flat by position first, two tables as dicts,
 * else the key tries walked together (a table's twin).  1, 0 or -1. */
static int
fd_equal_versions(fm_state *st, fd_object *a, fd_object *b)
{
    switch (mapping_pair_path(a->len, fm_form_of(a), b)) {
    case FM_PAIR_FLAT:
        return fd_flat_equal(a, b);
    case FM_PAIR_TABLES:
        return PyObject_RichCompareBool(a->table, b->table, Py_EQ);
    default:
        break;
    }
    champ_node *ra = fd_key_trie(st, (PyObject *)a);
    champ_node *rb = ra != NULL ? fd_key_trie(st, (PyObject *)b) : NULL;
    int r = rb != NULL ? champ_equal(ra, rb) : -1;
    champ_xdecref(ra);
    champ_xdecref(rb);
    return r;
}

static PyObject *
fd_eq(fm_state *st, PyObject *op, PyObject *other)
{
    if (fm_is_frozendict(st, other)) {
        fd_object *a = fm_as_fd(op), *b = fm_as_fd(other);
        if (a == b) {
            Py_RETURN_TRUE;
        }
        if (a->len != b->len) {
            Py_RETURN_FALSE;
        }
        Py_hash_t ha = FM_LOAD_HASH(a->hash), hb = FM_LOAD_HASH(b->hash);
        if (ha != -1 && hb != -1 && ha != hb) {
            Py_RETURN_FALSE;
        }
        Py_INCREF(a);
        Py_INCREF(b);
        /* Equal lengths: both flat, or both in tries and walked. */
        int r = fd_equal_versions(st, a, b);
        Py_DECREF(a);
        Py_DECREF(b);
        if (r < 0) {
            return NULL;
        }
        return Py_NewRef(r ? Py_True : Py_False);
    }
    return mapping_equal(st, op, other);
}

static PyObject *
fd_tp_richcompare(PyObject *op, PyObject *other, int cmp)
{
    if (cmp != Py_EQ && cmp != Py_NE) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *r = fd_eq(fm_state_of_type(Py_TYPE(op)), op, other);
    if (r == NULL || r == Py_NotImplemented || cmp == Py_EQ) {
        return r;
    }
    int truth = r == Py_True;
    Py_DECREF(r);
    return Py_NewRef(truth ? Py_False : Py_True);
}

typedef struct {
    Py_uhash_t acc;
} fd_hash_state;

static int
fd_hash_entry(champ_entry *e, void *arg)
{
    Py_uhash_t ph;
    if (hashing_pair_hash(e->hash, e->value, &ph) < 0) {
        return -1;
    }
    ((fd_hash_state *)arg)->acc ^= hashing_shuffle_bits(ph);
    return 0;
}

/* Not static: hashing.c recognises a frozendict's hash by this slot. */
Py_hash_t
fd_tp_hash(PyObject *op)
{
    fd_object *s = fm_as_fd(op);
    Py_hash_t h = FM_LOAD_HASH(s->hash);
    if (h != -1) {
        return h;
    }
    fd_hash_state hs = {0};
    if (Py_EnterRecursiveCall(" while hashing a frozendict")) {
        return -1;
    }
    int r = 0;
    if (fm_is_flat(s)) {
        for (Py_ssize_t i = 0; r == 0 && i < s->len; i++) {
            champ_entry e = {fm_flat_keys(s)[i].hash, 0, fm_flat_keys(s)[i].key,
                             fm_flat_values(s)[i]};
            r = fd_hash_entry(&e, &hs);
        }
    }
    else if (fm_is_table(s)) {
        /* The keys hash without user code; the values' hashes run (each
         * value held across its __hash__ by the table, held by s). */
        PyObject *table = Py_NewRef(s->table);
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (r == 0 && PyDict_Next(table, &pos, &k, &v)) {
            Py_hash_t kh = PyObject_Hash(k);
            champ_entry e = {(Py_uhash_t)kh, 0, k, v};
            r = kh == -1 ? -1 : fd_hash_entry(&e, &hs);
        }
        Py_DECREF(table);
    }
    else {
        r = champ_foreach(s->root, fd_hash_entry, &hs);
    }
    Py_LeaveRecursiveCall();
    if (r) {
        return -1;
    }
    h = hashing_finalize(hs.acc, s->len);
    FM_STORE_HASH(s->hash, h);
    return h;
}

/* --- repr, pickle, copy -------------------------------------------------- */

static PyObject *
fd_tp_repr(PyObject *op)
{
    /* tp_name, as the builtin prints (never __name__, which a metaclass can
     * make anything); for a class made in Python that is its __name__. */
    PyObject *name = PyUnicode_FromString(Py_TYPE(op)->tp_name);
    if (name == NULL) {
        return NULL;
    }
    PyObject *r = mapping_repr(fm_state_of_type(Py_TYPE(op)), op, name);
    Py_DECREF(name);
    return r;
}

/* The order trie of op to walk: new ref, NULL when empty (no error) or
 * with an error (a flat version's is built for the walk). */
static order_node *
fd_order_snapshot(PyObject *op)
{
    uint64_t resized;
    return mapping_order(fm_state_of_type(Py_TYPE(op)), op, &resized);
}

/* dict(self._items()) */
static PyObject *
fd_as_dict(PyObject *op)
{
    fd_object *fd = fm_as_fd(op);
    if (fm_is_flat(fd)) {
        PyObject *d = PyDict_New();
        /* op is held by the caller: its entries outlive the keys' __eq__. */
        for (Py_ssize_t i = 0; d != NULL && i < fd->len; i++) {
            if (PyDict_SetItem(d, fm_flat_keys(fd)[i].key, fm_flat_values(fd)[i]) < 0) {
                Py_CLEAR(d);
            }
        }
        return d;
    }
    if (fm_is_table(fd)) {
        return PyDict_Copy(fd->table);
    }
    order_node *order = fd_order_snapshot(op);
    if (order == NULL && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *d = order_as_dict(order);
    Py_XDECREF(order);
    return d;
}

static PyObject *
fd_py_getnewargs(PyObject *op, PyObject *unused)
{
    PyObject *d = fd_as_dict(op);
    return d == NULL ? NULL : Py_BuildValue("(N)", d);
}

/* frozenmap._cold.name, the cold paths both cores share (written once, in
 * Python; imported on first use): new ref or NULL. */
static PyObject *
fd_cold(const char *name)
{
    return fm_import_attr("frozenmap._cold", name);
}

static PyObject *
fd_py_reduce_ex(PyObject *op, PyObject *protocol)
{
    /* (every protocol reduces alike) */
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *items = fd_as_dict(op);
    if (items == NULL) {
        return NULL;
    }
    if (Py_IS_TYPE(op, st->frozendict_type)) {
        return Py_BuildValue("O(Ns)", st->restore, items, "c");
    }
    /* A subclass instance's __dict__ and slot values, as pickle stores them. */
    PyObject *subclass_state = fd_cold("subclass_state");
    PyObject *state = subclass_state == NULL
                          ? NULL
                          : PyObject_CallFunctionObjArgs(
                              subclass_state, op, (PyObject *)st->frozendict_type, NULL);
    Py_XDECREF(subclass_state);
    if (state == NULL) {
        Py_DECREF(items);
        return NULL;
    }
    PyObject *newobj = fm_import_attr("copyreg", "__newobj__");
    if (newobj == NULL) {
        Py_DECREF(items);
        Py_DECREF(state);
        return NULL;
    }
    return Py_BuildValue("N(ON)N", newobj, (PyObject *)Py_TYPE(op), items, state);
}

static PyObject *
fd_py_reduce(PyObject *op, PyObject *unused)
{
    PyObject *two = PyLong_FromLong(2);
    if (two == NULL) {
        return NULL;
    }
    PyObject *r = fd_py_reduce_ex(op, two);
    Py_DECREF(two);
    return r;
}

/* copy._reconstruct(self, memo, *self.__reduce_ex__(4)), as copy.copy and
 * copy.deepcopy do it (frozenmap._cold.reconstruct). */
static PyObject *
fd_reconstruct(PyObject *op, PyObject *memo)
{
    PyObject *reconstruct = fd_cold("reconstruct");
    if (reconstruct == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(reconstruct, op, memo, NULL);
    Py_DECREF(reconstruct);
    return r;
}

static PyObject *
fd_py_dunder_copy(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("__copy__", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    if (Py_IS_TYPE(op, st->frozendict_type)) {
        return Py_NewRef(op);
    }
    return fd_reconstruct(op, Py_None);
}

/* frozenmap._cold.deepcopy: a cold path, written once for both cores. */
static PyObject *
fd_py_deepcopy(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("__deepcopy__", op, args, nargs, kwnames);
    }
    PyObject *memo = args[0];
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *deepcopy = fd_cold("deepcopy");
    if (deepcopy == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(deepcopy, op, memo,
                                               (PyObject *)st->frozendict_type, NULL);
    Py_DECREF(deepcopy);
    return r;
}

/* --- derivations --------------------------------------------------------- */

static PyObject *
fd_py_set(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 2, 2)) {
        return fm_wrong_call("set", op, args, nargs, kwnames);
    }
    return derive_with(fm_state_of_type(Py_TYPE(op)), op, args[0], args[1]);
}

static PyObject *
fd_py_delete(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("delete", op, args, nargs, kwnames);
    }
    PyObject *key = args[0];
    return derive_without(op, key, 0);
}

static PyObject *
fd_py_discard(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("discard", op, args, nargs, kwnames);
    }
    PyObject *key = args[0];
    return derive_without(op, key, 1);
}

static PyObject *fd_or_merge(fm_state *st, PyObject *op, PyObject *other);

/* op | other or other | op (op_on_left 0) for UserDict and defaultdict, whose
 * own | takes 3.15's builtin frozendict but not ours
 * (frozenmap._cold.or_foreign); NotImplemented for any other type. */
static PyObject *
fd_or_foreign(PyObject *op, PyObject *other, int op_on_left)
{
    PyObject *or_foreign = fd_cold("or_foreign");
    if (or_foreign == NULL) {
        return NULL;
    }
    PyObject *result = PyObject_CallFunctionObjArgs(or_foreign, op, other,
                                                    op_on_left ? Py_True : Py_False, NULL);
    Py_DECREF(or_foreign);
    return result;
}

static PyObject *
fd_or_impl(fm_state *st, PyObject *op, PyObject *other)
{
    int ok = mapping_is_anydict(st, other);
    if (ok <= 0) {
        return ok < 0 ? NULL : fd_or_foreign(op, other, 1);
    }
    if (Py_IS_TYPE(op, st->frozendict_type)) {
        /* The builtin's order: frozendict() | frozendict() is the right side. */
        if (fm_as_fd(op)->len == 0 && Py_IS_TYPE(other, st->frozendict_type)) {
            return Py_NewRef(other);
        }
        if ((PyDict_CheckExact(other) && PyDict_GET_SIZE(other) == 0)
            || (Py_IS_TYPE(other, st->frozendict_type) && fm_as_fd(other)->len == 0)) {
            return Py_NewRef(op);
        }
    }
    return fd_or_merge(st, op, other);
}

/* A new exact frozendict: op's items, then other's (a dict or any frozendict). */
static PyObject *
fd_or_merge(fm_state *st, PyObject *op, PyObject *other)
{
    transient t;
    if (transient_init_flat_from(st, &t, op) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    /* other is read as dict | other reads it (dict_update_arg). */
    if (merge_into(st, &t, other, NULL, NULL, NULL) == 0) {
        /* t started from op's roots (or flat version), which op also holds,
         * so any change copied them: the same ones mean every value was
         * already there (by identity), and the result is op itself. */
        fd_object *fd = fm_as_fd(op);
        if (fm_is_table(fd)) { /* t started from its twin's roots */
            fd = table_twin_if_built(fd);
        }
        int changed = fd == NULL       ? 1
                      : t.flat != NULL ? !flat_t_same_items(fd, &t)
                      : fm_is_flat(fd) ? !flat_same_items(fd, t.root, t.len)
                                       : t.root != fd->root || t.order != fd->order;
        result = changed ? transient_publish(st, &t, st->frozendict_type)
                         : transient_version_exact(st, op);
    }
    transient_clear(&t);
    return result;
}

static PyObject *
fd_ror_impl(fm_state *st, PyObject *op, PyObject *other)
{
    if (!PyDict_CheckExact(other)) {
        PyObject *result = fd_or_foreign(op, other, 0);
        if (result != Py_NotImplemented) {
            return result; /* a UserDict or defaultdict, or NULL */
        }
        Py_DECREF(result);
    }
    if (PyODict_Check(other)) {
        /* OrderedDict's | accepts the builtin frozendict (3.15): the same
         * for ours, type(other)(other) updated with op. */
        PyObject *result = PyObject_CallOneArg((PyObject *)Py_TYPE(other), other);
        if (result == NULL) {
            return NULL;
        }
        PyObject *r = PyObject_CallMethod(result, "update", "O", op);
        if (r == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(r);
        return result;
    }
    if (PyDict_Check(other)) {
        PyObject *result = PyDict_Copy(other);
        if (result == NULL) {
            return NULL;
        }
        if (!PyDict_CheckExact(result)) {
            Py_SETREF(result, PyDict_New());
            if (result == NULL || PyDict_Update(result, other) < 0) {
                Py_XDECREF(result);
                return NULL;
            }
        }
        order_node *order = fd_order_snapshot(op);
        if (order == NULL && PyErr_Occurred()) {
            Py_DECREF(result);
            return NULL;
        }
        order_cursor c;
        order_cursor_init(&c, order, 0);
        PyObject *k, *v;
        while (order_cursor_next(&c, &k, &v)) {
            if (PyDict_SetItem(result, k, v) < 0) {
                Py_DECREF(result);
                Py_XDECREF(order);
                return NULL;
            }
        }
        Py_XDECREF(order);
        return result;
    }
    int foreign = mapping_is_anydict(st, other);
    if (foreign < 0) {
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030F0000
    if (foreign && PyFrozenDict_Check(other)) {
        /* builtin | ours: the left side's type, as dict | frozendict is a
         * dict; the builtin's own | does the rest. */
        PyObject *items = PyDict_New();
        if (items == NULL || PyDict_Update(items, op) < 0) {
            Py_XDECREF(items);
            return NULL;
        }
        PyObject *r = PyNumber_Or(other, items);
        Py_DECREF(items);
        return r;
    }
#endif
    if (foreign && fm_is_frozendict(st, other)) {
        /* (only reached by a direct fd.__ror__(x) call) x | fd, with the
         * shortcuts only for an exact x, as the builtin's slot does */
        return fd_or_impl(st, other, op);
    }
    if (foreign) { /* the other core's: a new frozendict */
        PyObject *left = PyObject_CallOneArg((PyObject *)st->frozendict_type, other);
        if (left == NULL) {
            return NULL;
        }
        PyObject *r = fd_or_merge(st, left, op);
        Py_DECREF(left);
        return r;
    }
    Py_RETURN_NOTIMPLEMENTED;
}

/* In a binary slot either operand may be ours; NULL when the left is not. */
static fm_state *
fd_left_state(PyObject *a)
{
    fm_state *st = fm_find_state(Py_TYPE(a));
    return st != NULL && fm_is_frozendict(st, a) ? st : NULL;
}

static PyObject *
fd_tp_or(PyObject *a, PyObject *b)
{
    fm_state *st = fd_left_state(a);
    if (st != NULL) {
        return fd_or_impl(st, a, b);
    }
    st = fd_left_state(b);
    if (st != NULL) {
        return fd_ror_impl(st, b, a);
    }
    Py_RETURN_NOTIMPLEMENTED;
}

/* iter(keys), or NULL with no error set when keys is not iterable. */
static PyObject *
fd_iter_or_notimpl(PyObject *keys)
{
    PyObject *it = PyObject_GetIter(keys);
    if (it == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
    }
    return it;
}

/* fd - "name" would remove the letters n, a, m, e: a str or bytes operand of
 * - or & is refused with what to write instead.  1 (error set) when keys is
 * text, else 0. */
static int
fd_refuse_text_operand(PyObject *a, const char *op, PyObject *keys)
{
    if (!PyUnicode_Check(keys) && !PyBytes_Check(keys) && !PyByteArray_Check(keys)) {
        return 0;
    }
    PyErr_Format(PyExc_TypeError,
                 "unsupported operand type(s) for %s: '%s' and '%s' (text would be read as "
                 "its characters; for one key write fd %s {key})",
                 op, fm_tp_name_tail(Py_TYPE(a)), fm_tp_name_tail(Py_TYPE(keys)), op);
    return 1;
}

static PyObject *fd_from_entries(fm_state *st, champ_entry *entries, Py_ssize_t n,
                                 PyObject **values);

static int fd_diff_flat(fd_object *a, fd_object *b, champ_difflist *added,
                        champ_difflist *removed, champ_difflist *changed);

/* Whether a - b and a & b read b's keys from its storage, with the stored
 * hashes: a frozendict of this core whose type iterates as frozendict does
 * (one that overrides __iter__ is iterated, as dict's operations iterate a
 * dict subclass that overrides it). */
static int
fd_keys_from_storage(fm_state *st, PyObject *b)
{
    return fm_is_frozendict(st, b) && Py_TYPE(b)->tp_iter == st->frozendict_type->tp_iter;
}

/* a's entries whose key b lacks, in a's order, on the path
 * mapping_pair_path chose (FM_PAIR_FLAT or FM_PAIR_WALK): the removed of
 * fd_diff_flat or champ_diff (keys only, no value compared), which skip
 * what both share, so O(d log n) for versions d edits apart.  The entries
 * borrow from a, which the caller holds (and b, across the keys' __eq__).
 * 0 or -1. */
static int
fd_keys_missing_from(fm_state *st, PyObject *a, PyObject *b, fm_pair_path path,
                     champ_difflist *missing)
{
    int r;
    if (path == FM_PAIR_FLAT) {
        r = fd_diff_flat(fm_as_fd(a), fm_as_fd(b), NULL, missing, NULL);
    }
    else {
        champ_node *ra = fd_key_trie(st, a);
        champ_node *rb = ra != NULL ? fd_key_trie(st, b) : NULL;
        r = rb != NULL ? champ_diff(ra, rb, NULL, missing, NULL, 0) : -1;
        champ_xdecref(ra);
        champ_xdecref(rb);
    }
    if (r == 0 && missing->len > 1) { /* qsort(NULL, 0, ...) is undefined behaviour */
        qsort(missing->items, missing->len, sizeof(champ_entry), transient_compare_seq);
    }
    return r;
}

/* a without the entries of `gone` (a's own, none of them the whole of a):
 * each located again in a transient of a. */
static PyObject *
fd_without_entries(fm_state *st, PyObject *a, const champ_difflist *gone)
{
    PyObject *result = NULL;
    transient t;
    if (transient_init_from(st, &t, a) < 0) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < gone->len; i++) {
        /* Located again in the transient's current trie (removals copy
         * nodes), by key identity: no user code runs. */
        champ_entry *e = champ_find_stored(t.root, &gone->items[i].hash, gone->items[i].key,
                                           gone->items[i].seq);
        if (e == NULL) {
            PyErr_SetString(PyExc_SystemError, "a & b: entry lost from its own trie");
            goto done;
        }
        if (transient_remove_entry(st, &t, e, NULL, NULL) < 0) {
            goto done;
        }
    }
    result = transient_publish(st, &t, st->frozendict_type);
done:
    transient_clear(&t);
    return result;
}

/* a - b (subtract 1) or a & b (0) on the path FM_PAIR_FLAT or
 * FM_PAIR_WALK, from a's entries whose key b lacks: a - b builds a version
 * of them anew, a & b removes them from a.  The caller holds a and b. */
static PyObject *
fd_keys_walk(fm_state *st, PyObject *a, PyObject *b, fm_pair_path path, int subtract)
{
    champ_difflist missing = {0};
    PyObject *result = NULL;
    if (fd_keys_missing_from(st, a, b, path, &missing) < 0) {
        goto done;
    }
    /* a itself when b removes nothing from it: none of b's keys are in a
     * (a - b), or all of a's are in b (a & b). */
    if (missing.len == (subtract ? fm_as_fd(a)->len : 0)) {
        result = transient_version_exact(st, a);
    }
    else if (subtract) {
        result = fd_from_entries(st, missing.items, missing.len, NULL);
    }
    else {
        result = fd_without_entries(st, a, &missing);
    }
done:
    champ_difflist_free(&missing);
    return result;
}

/* a - b of a frozendict b on FM_PAIR_ENTRIES: b's entries removed from a
 * transient of a one by one, in b's order, with their stored hashes.  The
 * caller holds a and b. */
static PyObject *
fd_minus_entries(fm_state *st, PyObject *a, PyObject *b)
{
    champ_difflist entries = {0};
    PyObject *result = NULL;
    transient t;
    if (transient_init_from(st, &t, a) < 0) {
        return NULL;
    }
    if (mapping_entries_in_order(fm_as_fd(b), &entries) < 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < entries.len; i++) {
        champ_entry *e = &entries.items[i];
        if (transient_dissoc_hashed(st, &t, e->hash, e->key, NULL) == FM_ERROR) {
            goto done;
        }
    }
    result = t.len == fm_as_fd(a)->len ? transient_version_exact(st, a)
                                       : transient_publish(st, &t, st->frozendict_type);
done:
    champ_difflist_free(&entries);
    transient_clear(&t);
    return result;
}

static PyObject *
fd_tp_subtract(PyObject *a, PyObject *b)
{
    fm_state *st = fd_left_state(a);
    if (st == NULL) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (fd_refuse_text_operand(a, "-", b)) {
        return NULL;
    }
    if (fd_keys_from_storage(st, b)) {
        Py_INCREF(a);
        Py_INCREF(b);
        fm_pair_path path =
            mapping_pair_path(fm_as_fd(a)->len, fm_form_of(fm_as_fd(a)), fm_as_fd(b));
        PyObject *result = path == FM_PAIR_ENTRIES ? fd_minus_entries(st, a, b)
                                                   : fd_keys_walk(st, a, b, path, 1);
        Py_DECREF(a);
        Py_DECREF(b);
        return result;
    }
    PyObject *it = fd_iter_or_notimpl(b);
    if (it == NULL) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
    }
    transient t;
    if (transient_init_from(st, &t, a) < 0) {
        Py_DECREF(it);
        return NULL;
    }
    PyObject *key, *result = NULL;
    while ((key = PyIter_Next(it)) != NULL) {
        fm_lookup r = transient_dissoc(st, &t, key, NULL);
        Py_DECREF(key);
        if (r == FM_ERROR) {
            break;
        }
    }
    if (!PyErr_Occurred()) {
        result = t.len == fm_as_fd(a)->len ? transient_version_exact(st, a)
                                           : transient_publish(st, &t, st->frozendict_type);
    }
    Py_DECREF(it);
    transient_clear(&t);
    return result;
}

/* a & b of the entries found: a's entries, each found for one of b's keys
 * (in any order, perhaps more than once), into a version of them in a's
 * order; a itself when they are all of a's.  The caller holds a. */
static PyObject *
fd_and_found(fm_state *st, PyObject *a, champ_difflist *found)
{
    if (found->len > 1) { /* qsort(NULL, 0, ...) is undefined behaviour */
        qsort(found->items, found->len, sizeof(champ_entry), transient_compare_seq);
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < found->len; i++) {
        if (n == 0 || found->items[n - 1].seq != found->items[i].seq) {
            found->items[n++] = found->items[i];
        }
    }
    if (n == fm_as_fd(a)->len) {
        return transient_version_exact(st, a);
    }
    PyObject *result = NULL;
    transient t;
    if (transient_init(st, &t, NULL, NULL, 0, 0, 0, 0) < 0) {
        return NULL;
    }
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
        champ_entry *e = &found->items[i];
        if (transient_put_new(st, &t, e->hash, e->key, e->value) < 0) {
            break;
        }
    }
    if (i == n) {
        result = transient_publish(st, &t, st->frozendict_type);
    }
    transient_clear(&t);
    return result;
}

static PyObject *
fd_tp_and(PyObject *a, PyObject *b)
{
    fm_state *st = fd_left_state(a);
    if (st == NULL) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (fd_refuse_text_operand(a, "&", b)) {
        return NULL;
    }
    PyObject *it = NULL, *key, *result = NULL;
    champ_difflist found = {0}, entries = {0};
    Py_INCREF(a);
    Py_INCREF(b);
    if (fd_keys_from_storage(st, b)) {
        fm_pair_path path =
            mapping_pair_path(fm_as_fd(a)->len, fm_form_of(fm_as_fd(a)), fm_as_fd(b));
        if (path != FM_PAIR_ENTRIES) {
            result = fd_keys_walk(st, a, b, path, 0);
            goto done;
        }
        /* b's entries in its order, each looked for with its stored hash */
        if (mapping_entries_in_order(fm_as_fd(b), &entries) < 0) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < entries.len; i++) {
            champ_entry e;
            int r = fd_find_entry_hashed(a, entries.items[i].hash, entries.items[i].key, &e);
            if (r < 0 || (r > 0 && champ_difflist_append(&found, &e) < 0)) {
                goto done;
            }
        }
    }
    else {
        it = fd_iter_or_notimpl(b);
        if (it == NULL) {
            result = PyErr_Occurred() ? NULL : Py_NewRef(Py_NotImplemented);
            goto done;
        }
        while ((key = PyIter_Next(it)) != NULL) {
            champ_entry e;
            int r = fd_find_entry(a, key, &e);
            Py_DECREF(key);
            if (r < 0 || (r > 0 && champ_difflist_append(&found, &e) < 0)) {
                goto done;
            }
        }
        if (PyErr_Occurred()) {
            goto done;
        }
    }
    result = fd_and_found(st, a, &found);
done:
    Py_XDECREF(it);
    champ_difflist_free(&found);
    champ_difflist_free(&entries);
    Py_DECREF(a);
    Py_DECREF(b);
    return result;
}

/* copy.replace(fd, **changes): fd | changes, through the | operator, so a
 * subclass's __or__ is honoured as in the pure core (docs/pep814.md). */
static PyObject *
fd_py_replace(PyObject *op, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) != 0) {
        return fm_wrong_call_tuple("__replace__", op, args, kwargs);
    }
    PyObject *changes = kwargs != NULL ? Py_NewRef(kwargs) : PyDict_New();
    if (changes == NULL) {
        return NULL;
    }
    PyObject *result = PyNumber_Or(op, changes);
    Py_DECREF(changes);
    return result;
}

static PyObject *
fd_py_evolve(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 0)) {
        return fm_wrong_call("evolve", op, args, nargs, kwnames);
    }
    /* Evolver(op), through the type (evolver.c's business). */
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    return PyObject_CallOneArg((PyObject *)st->evolver_type, op);
}

/* --- diff ---------------------------------------------------------------- */

/* A frozendict of distinct keys with known hashes, in the order given;
 * values from values[i] when values is not NULL. */
static PyObject *
fd_from_entries(fm_state *st, champ_entry *entries, Py_ssize_t n, PyObject **values)
{
    if (n <= FLAT_MAX) {
        return flat_from_entries(st->frozendict_type, entries, n, values);
    }
    transient t;
    if (transient_init(st, &t, NULL, NULL, 0, 0, 0, 0) < 0) {
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t i;
    for (i = 0; i < n; i++) {
        if (transient_put_new(st, &t, entries[i].hash, entries[i].key,
                              values ? values[i] : entries[i].value)
            < 0) {
            break;
        }
    }
    if (i == n) {
        result = transient_publish(st, &t, st->frozendict_type);
    }
    transient_clear(&t);
    return result;
}

/* op's key trie (new ref; a flat version's built by flat_key_trie) or
 * NULL. */
static champ_node *
fd_key_trie(fm_state *st, PyObject *op)
{
    fd_object *fd = fm_as_fd(op);
    if (fm_is_table(fd)) {
        PyObject *twin = table_twin(st, fd);
        if (twin == NULL) {
            return NULL;
        }
        champ_node *root = champ_newref(fm_as_fd(twin)->root); /* the twin is held by fd */
        Py_DECREF(twin);
        return root;
    }
    return fm_is_flat(fd) ? flat_key_trie(st, fd) : champ_newref(fd->root);
}

/* The entry at position i of the flat version fd (its position for the
 * seq; key and value borrowed from fd). */
static inline champ_entry
fd_flat_entry(fd_object *fd, Py_ssize_t i)
{
    flat_key k = fm_flat_keys(fd)[i];
    return (champ_entry){k.hash, (uint64_t)i, k.key, fm_flat_values(fd)[i]};
}

/* Whether the flat versions a and b hold the same key object under the
 * same stored hash at positions i and j. */
static inline int
fd_flat_same_key(fd_object *a, Py_ssize_t i, fd_object *b, Py_ssize_t j)
{
    flat_key ka = fm_flat_keys(a)[i], kb = fm_flat_keys(b)[j];
    return ka.key == kb.key && ka.hash == kb.hash;
}

/* Whether the flat version fd holds this very key object under the stored
 * hash h at position i. */
static inline int
fd_flat_keys_at_hash(fd_object *fd, Py_ssize_t i, Py_uhash_t h, PyObject *key)
{
    flat_key k = fm_flat_keys(fd)[i];
    return k.key == key && k.hash == h;
}

/* Append (unless changed is NULL) the pair of entries of one key, a's at i
 * and b's at j, when their values differ: old is not new and old != new.
 * 0 or -1. */
static int
fd_flat_value_change(fd_object *a, Py_ssize_t i, fd_object *b, Py_ssize_t j,
                     champ_difflist *changed)
{
    if (changed == NULL) {
        return 0;
    }
    champ_entry ea = fd_flat_entry(a, i), eb = fd_flat_entry(b, j);
    if (ea.value == eb.value) {
        return 0;
    }
    Py_INCREF(ea.value);
    Py_INCREF(eb.value);
    int ne = PyObject_RichCompareBool(ea.value, eb.value, Py_NE);
    Py_DECREF(ea.value);
    Py_DECREF(eb.value);
    if (ne > 0
        && (champ_difflist_append(changed, &ea) < 0
            || champ_difflist_append(changed, &eb) < 0)) {
        return -1;
    }
    return ne < 0 ? -1 : 0;
}

/* What differs from a to b, two flat versions the caller holds, into the
 * lists as champ_diff gives them (pairs (a's entry, b's entry) in changed;
 * seqs are positions; a list given as NULL is not wanted).  Mirrors the
 * pure core's flat_diff step for step, so both make the same user calls.
 *
 * Positions first: versions derived from one another hold the same key
 * objects at the same positions, shifted by one past a delete (a new key
 * goes last).  Positions where both hold the same key and value objects
 * are skipped (no user code); where the same key object sits under the same
 * stored hash, the values are compared (old is not new and old != new);
 * one side's entry whose key the other side holds one position further is
 * left over, the walk going on from there.  The entries left over are
 * matched by hash, then key (champ_diff_lists, the keys' __eq__).  The
 * entries borrow from a and b.  0 or -1. */
static int
fd_diff_flat(fd_object *a, fd_object *b, champ_difflist *added, champ_difflist *removed,
             champ_difflist *changed)
{
    champ_difflist loose_a = {0}, loose_b = {0};
    Py_ssize_t la = a->len, lb = b->len, i = 0, j = 0;
    int r = -1;
    int same_hashes = la == lb;
    for (Py_ssize_t p = 0; same_hashes && p < la; p++) {
        same_hashes = fm_flat_keys(a)[p].hash == fm_flat_keys(b)[p].hash;
    }
    if (same_hashes) {
        /* The same stored hashes at every position (a value changed, or
         * none: versions that share their keys): only the items can differ. */
        for (Py_ssize_t p = 0; p < la; p++) {
            if (fd_flat_same_key(a, p, b, p)) {
                if (fd_flat_value_change(a, p, b, p, changed) < 0) {
                    goto done;
                }
            }
            else {
                champ_entry ea = fd_flat_entry(a, p), eb = fd_flat_entry(b, p);
                if (champ_difflist_append(&loose_a, &ea) < 0
                    || champ_difflist_append(&loose_b, &eb) < 0) {
                    goto done;
                }
            }
        }
        i = j = la;
    }
    while (i < la && j < lb) {
        int shifted = 0;
        Py_ssize_t span = la - i < lb - j ? la - i : lb - j;
        for (Py_ssize_t k = 0; k < span; k++) {
            Py_ssize_t p = i + k, q = j + k;
            if (fd_flat_same_key(a, p, b, q)) {
                /* one key, its value perhaps replaced (nothing to do when
                 * the value is the same object too) */
                if (fd_flat_value_change(a, p, b, q, changed) < 0) {
                    goto done;
                }
                continue;
            }
            champ_entry ea = fd_flat_entry(a, p), eb = fd_flat_entry(b, q);
            if (p + 1 < la && fd_flat_keys_at_hash(a, p + 1, eb.hash, eb.key)) {
                if (champ_difflist_append(&loose_a, &ea) < 0) { /* gone from b */
                    goto done;
                }
                i = p + 1;
                j = q;
                shifted = 1;
                break;
            }
            if (q + 1 < lb && fd_flat_keys_at_hash(b, q + 1, ea.hash, ea.key)) {
                if (champ_difflist_append(&loose_b, &eb) < 0) { /* not in a */
                    goto done;
                }
                i = p;
                j = q + 1;
                shifted = 1;
                break;
            }
            if (champ_difflist_append(&loose_a, &ea) < 0
                || champ_difflist_append(&loose_b, &eb) < 0) {
                goto done;
            }
        }
        if (!shifted) {
            i += span;
            j += span;
        }
    }
    for (; i < la; i++) {
        champ_entry ea = fd_flat_entry(a, i);
        if (champ_difflist_append(&loose_a, &ea) < 0) {
            goto done;
        }
    }
    for (; j < lb; j++) {
        champ_entry eb = fd_flat_entry(b, j);
        if (champ_difflist_append(&loose_b, &eb) < 0) {
            goto done;
        }
    }
    r = 0;
    if (loose_a.len || loose_b.len) {
        r = champ_diff_lists(loose_a.items, loose_a.len, loose_b.items, loose_b.len, added,
                             removed, changed, 0);
    }
done:
    champ_difflist_free(&loose_a);
    champ_difflist_free(&loose_b);
    return r;
}

static PyObject *
fd_diff_tries(fm_state *st, PyObject *op, PyObject *other)
{
    champ_difflist added = {0}, removed = {0}, changed = {0};
    PyObject *fa = NULL, *fr = NULL, *fc = NULL, *result = NULL;
    PyObject **pairs = NULL;
    champ_entry *olds = NULL;
    Py_ssize_t npairs = 0;
    champ_node *ra = NULL, *rb = NULL;
    Py_INCREF(op);
    Py_INCREF(other);
    fd_object *a = fm_as_fd(op);
    if (mapping_pair_path(a->len, fm_form_of(a), fm_as_fd(other)) == FM_PAIR_FLAT) {
        if (fd_diff_flat(a, fm_as_fd(other), &added, &removed, &changed) < 0) {
            goto done;
        }
    }
    else {
        /* diff lists every entry of both sides that differs, so it walks
         * where another operation would read the operand's entries; a flat
         * side is walked as a key trie built for the walk, whose entries
         * borrow from the version, held here. */
        ra = fd_key_trie(st, op);
        rb = ra ? fd_key_trie(st, other) : NULL;
        if (rb == NULL || champ_diff(ra, rb, &added, &removed, &changed, 0) < 0) {
            goto done;
        }
    }
    if (added.len > 1)
        qsort(added.items, added.len, sizeof(champ_entry), transient_compare_seq);
    if (removed.len > 1)
        qsort(removed.items, removed.len, sizeof(champ_entry), transient_compare_seq);
    /* changed holds (old, new) entry pairs: sort the pairs by old seq. */
    if (changed.len > 2)
        qsort(changed.items, changed.len / 2, 2 * sizeof(champ_entry),
              transient_compare_seq); /* by the first's seq */
    npairs = changed.len / 2;
    pairs = PyMem_Calloc(npairs ? npairs : 1, sizeof(PyObject *));
    olds = PyMem_Malloc((npairs ? npairs : 1) * sizeof(champ_entry));
    if (pairs == NULL || olds == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < npairs; i++) {
        olds[i] = changed.items[2 * i];
        pairs[i] = PyTuple_Pack(2, changed.items[2 * i].value, changed.items[2 * i + 1].value);
        if (pairs[i] == NULL) {
            goto done;
        }
    }
    fa = fd_from_entries(st, added.items, added.len, NULL);
    fr = fa ? fd_from_entries(st, removed.items, removed.len, NULL) : NULL;
    fc = fr ? fd_from_entries(st, olds, npairs, pairs) : NULL;
    if (fc != NULL) {
        result = PyObject_CallFunctionObjArgs(st->diff_type, fa, fr, fc, NULL);
    }
done:
    if (pairs != NULL) {
        for (Py_ssize_t i = 0; i < npairs; i++) {
            Py_XDECREF(pairs[i]);
        }
    }
    PyMem_Free(pairs);
    PyMem_Free(olds);
    Py_XDECREF(fa);
    Py_XDECREF(fr);
    Py_XDECREF(fc);
    champ_difflist_free(&added);
    champ_difflist_free(&removed);
    champ_difflist_free(&changed);
    champ_xdecref(ra);
    champ_xdecref(rb);
    Py_DECREF(op);
    Py_DECREF(other);
    return result;
}

/* diff against any other mapping (frozenmap._cold.generic_diff). */
static PyObject *
fd_diff_generic(fm_state *st, PyObject *op, PyObject *other)
{
    PyObject *generic_diff = fd_cold("generic_diff");
    if (generic_diff == NULL) {
        return NULL;
    }
    PyObject *r = PyObject_CallFunctionObjArgs(generic_diff, op, other,
                                               (PyObject *)st->frozendict_type, NULL);
    Py_DECREF(generic_diff);
    return r;
}

static PyObject *
fd_py_diff(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames != NULL ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs != 1) {
        return fm_wrong_call("diff", op, args, nargs, kwnames);
    }
    int deep = 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(name, "deep") != 0) {
            return fm_wrong_call("diff", op, args, nargs, kwnames);
        }
        deep = PyObject_IsTrue(args[nargs + i]);
        if (deep < 0) {
            return NULL;
        }
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *other = args[0];
    PyObject *result = fm_is_frozendict(st, other) ? fd_diff_tries(st, op, other)
                                                   : fd_diff_generic(st, op, other);
    if (result != NULL && deep) {
        /* Nested diffs: a cold path, in Python, shared by both cores. */
        PyObject *deepen = fm_import_attr("frozenmap._diff", "deepen_diff");
        Py_SETREF(result, deepen == NULL ? NULL : PyObject_CallOneArg(deepen, result));
        Py_XDECREF(deepen);
    }
    return result;
}

/* One entry of merge_with: key (hash h) set to value, or to fn(old, value)
 * when t holds it.  t is merge_with's private builder (no user code can
 * reach it); key and value are held by the caller.  0 or -1. */
static int
fd_merge_entry_with(fm_state *st, transient *t, PyObject *fn, Py_uhash_t h, PyObject *key,
                    PyObject *value)
{
    PyObject *old = NULL;
    if (t->flat != NULL) {
        Py_ssize_t index;
        fm_lookup r = flat_t_find(t, h, key, &index);
        if (r == FM_ERROR) {
            return -1;
        }
        if (r == FM_FOUND) {
            old = Py_NewRef(fm_flat_values(t->flat)[index]);
        }
    }
    else {
        champ_entry *e;
        int r = champ_find(t->root, h, key, &e);
        if (r < 0) {
            return -1;
        }
        if (r > 0) {
            old = Py_NewRef(e->value);
        }
    }
    PyObject *merged =
        old != NULL ? PyObject_CallFunctionObjArgs(fn, old, value, NULL) : Py_NewRef(value);
    Py_XDECREF(old);
    if (merged == NULL) {
        return -1;
    }
    fm_edit r = transient_assoc_hashed(st, t, h, key, merged);
    Py_DECREF(merged);
    return r == FM_EDIT_FAILED ? -1 : 0;
}

/* fd.merge_with(fn, *others): each other merged into a private builder of
 * fd in turn, a frozendict of this core read from its storage (its entries
 * in its order, with their stored hashes: mapping_entries_in_order), any
 * other mapping through items(), each key hashed once.  fd itself (exact)
 * when nothing changed.  Mirrors merge_with in frozendict.py. */
static PyObject *
fd_py_merge_with(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, PY_SSIZE_T_MAX)) {
        return fm_wrong_call("merge_with", op, args, nargs, kwnames);
    }
    fm_state *st = fm_state_of_type(Py_TYPE(op));
    PyObject *fn = args[0], *result = NULL, *items = NULL;
    champ_difflist entries = {0};
    fd_object *fd = fm_as_fd(op);
    transient t;
    Py_INCREF(op);
    if (transient_init_flat_from(st, &t, op) < 0) {
        Py_DECREF(op);
        return NULL;
    }
    for (Py_ssize_t i = 1; i < nargs; i++) {
        PyObject *other = args[i];
        if (fm_is_frozendict(st, other)) {
            entries.len = 0;
            if (mapping_entries_in_order(fm_as_fd(other), &entries) < 0) {
                goto done;
            }
            for (Py_ssize_t j = 0; j < entries.len; j++) {
                champ_entry *e = &entries.items[j];
                if (fd_merge_entry_with(st, &t, fn, e->hash, e->key, e->value) < 0) {
                    goto done;
                }
            }
            continue;
        }
        /* any other mapping: its items(), read as a list of pairs by
         * frozenmap._cold.merge_with_items, shared with the pure core */
        PyObject *reader = fd_cold("merge_with_items");
        items = reader != NULL ? PyObject_CallOneArg(reader, other) : NULL;
        Py_XDECREF(reader);
        if (items == NULL) {
            goto done;
        }
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(items); j++) {
            /* (the list is ours alone: its pairs, exact 2-tuples, stay) */
            PyObject *pair = PyList_GET_ITEM(items, j);
            PyObject *key = PyTuple_GET_ITEM(pair, 0), *value = PyTuple_GET_ITEM(pair, 1);
            Py_uhash_t h;
            if (hashing_key_hash_fast(key, &h) < 0
                || fd_merge_entry_with(st, &t, fn, h, key, value) < 0) {
                goto done;
            }
        }
        Py_CLEAR(items);
    }
    /* fd itself when nothing changed (or changes that cancel out); a table
     * version's tries are its twin's, which the builder started from */
    int same = 0;
    if (t.len == fd->len) {
        if (t.flat != NULL) {
            same = flat_t_same_items(fd, &t);
        }
        else if (fm_is_flat(fd)) {
            same = flat_same_items(fd, t.root, t.len);
        }
        else {
            champ_node *root = fd_key_trie(st, op);
            if (root == NULL) {
                goto done;
            }
            same = champ_identical(root, t.root);
            champ_xdecref(root);
        }
    }
    result = same ? transient_version_exact(st, op)
                  : transient_publish(st, &t, st->frozendict_type);
done:
    Py_XDECREF(items);
    champ_difflist_free(&entries);
    transient_clear(&t);
    Py_DECREF(op);
    return result;
}

/* --- checking and debugging ---------------------------------------------- */

typedef struct {
    order_node *order;
    uint64_t next_seq;
    const char *error;
} fd_check_state;

static int
fd_check_entry(champ_entry *e, void *arg)
{
    fd_check_state *cs = arg;
    PyObject *k, *v;
    if (!order_get(cs->order, e->seq, &k, &v)) {
        cs->error = "a key-trie entry has no item in the order trie";
        return 1;
    }
    if (k != e->key || v != e->value) {
        cs->error = "the tries disagree at a seq";
        return 1;
    }
    if (e->seq >= cs->next_seq) {
        cs->error = "next_seq not above every seq";
        return 1;
    }
    return 0;
}

static PyObject *
fd_py_check(PyObject *op, PyObject *unused)
{
    fd_object *s = fm_as_fd(op);
    if (fm_is_flat(s)) {
        return flat_check(s);
    }
    if (fm_is_table(s)) {
        PyObject *r = table_check(s);
        fd_object *twin = table_twin_if_built(s);
        if (r != NULL && twin != NULL) {
            Py_SETREF(r, fd_py_check((PyObject *)twin, NULL));
        }
        return r;
    }
    if (s->order == NULL) {
        PyErr_Format(PyExc_AssertionError, "a version of %zd items without tries", s->len);
        return NULL;
    }
    Py_ssize_t count = champ_check(s->root, 0, 0, 1);
    if (count < 0) {
        return NULL;
    }
    if (count != s->len) {
        PyErr_Format(PyExc_AssertionError, "key trie holds %zd entries, len is %zd", count,
                     s->len);
        return NULL;
    }
    Py_ssize_t items = order_check(s->order, NULL);
    if (items < 0) {
        return NULL;
    }
    if (items != s->len) {
        PyErr_Format(PyExc_AssertionError, "order trie holds %zd items, len is %zd", items,
                     s->len);
        return NULL;
    }
    fd_check_state cs = {s->order, s->next_seq, NULL};
    champ_foreach(s->root, fd_check_entry, &cs);
    if (cs.error != NULL) {
        PyErr_SetString(PyExc_AssertionError, cs.error);
        return NULL;
    }
    if (hashing_check_cached(FM_LOAD_HASH(s->hash), s->len) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
fd_py_node_ids(PyObject *op, PyObject *unused)
{
    PyObject *out = PyList_New(0);
    if (out == NULL) {
        return NULL;
    }
    fd_object *fd = fm_as_fd(op);
    if (fm_is_flat(fd)) {
        /* its key block, then its values (the pure core: its two tuples) */
        PyObject *ids[2] = {NULL, NULL};
        if (fd->len) {
            ids[0] = PyLong_FromVoidPtr(fd->keys);
            ids[1] = ids[0] ? PyLong_FromVoidPtr(fd->values) : NULL;
        }
        for (int i = 0; fd->len && i < 2; i++) {
            if (ids[i] == NULL || PyList_Append(out, ids[i]) < 0) {
                Py_CLEAR(out);
                break;
            }
        }
        Py_XDECREF(ids[0]);
        Py_XDECREF(ids[1]);
        return out;
    }
    if (fm_is_table(fd)) {
        /* its table, then its twin's nodes once built */
        PyObject *id = PyLong_FromVoidPtr(fd->table);
        if (id == NULL || PyList_Append(out, id) < 0) {
            Py_XDECREF(id);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(id);
        fd_object *twin = table_twin_if_built(fd);
        if (twin != NULL
            && (champ_node_ids(twin->root, out) < 0 || order_node_ids(twin->order, out) < 0)) {
            Py_DECREF(out);
            return NULL;
        }
        return out;
    }
    if (champ_node_ids(fm_as_fd(op)->root, out) < 0
        || order_node_ids(fm_as_fd(op)->order, out) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *
fd_py_dump(PyObject *op, PyObject *unused)
{
    fd_object *s = fm_as_fd(op);
    if (fm_is_flat(s)) {
        return flat_dump(s);
    }
    if (fm_is_table(s)) {
        return table_dump(s);
    }
    PyObject *out = PyList_New(0), *line = NULL, *sep = NULL, *result = NULL;
    if (out == NULL) {
        return NULL;
    }
    char buf[96];
    PyOS_snprintf(buf, sizeof(buf), "frozendict len=%zd next_seq=%llu", s->len,
                  (unsigned long long)s->next_seq);
    line = PyUnicode_FromString(buf);
    if (line == NULL || PyList_Append(out, line) < 0) {
        goto done;
    }
    Py_SETREF(line, PyUnicode_FromString("key trie:"));
    if (line == NULL || PyList_Append(out, line) < 0) {
        goto done;
    }
    if (champ_dump(s->root, 1, out) < 0) {
        goto done;
    }
    Py_SETREF(line, PyUnicode_FromString("order trie:"));
    if (line == NULL || PyList_Append(out, line) < 0) {
        goto done;
    }
    if (order_dump(s->order, 1, out) < 0) {
        goto done;
    }
    sep = PyUnicode_FromString("\n");
    if (sep != NULL) {
        result = PyUnicode_Join(sep, out);
    }
done:
    Py_XDECREF(line);
    Py_XDECREF(sep);
    Py_DECREF(out);
    return result;
}

/* --- the type ------------------------------------------------------------ */

/* --- positions ----------------------------------------------------------- */

static PyObject *
fd_py_key_at(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("key_at", op, args, nargs, kwnames);
    }
    PyObject *index = args[0];
    return position_at(fm_as_fd(op), index, "frozendict", FM_POSITION_KEY);
}

static PyObject *
fd_py_value_at(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("value_at", op, args, nargs, kwnames);
    }
    PyObject *index = args[0];
    return position_at(fm_as_fd(op), index, "frozendict", FM_POSITION_VALUE);
}

static PyObject *
fd_py_item_at(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("item_at", op, args, nargs, kwnames);
    }
    PyObject *index = args[0];
    return position_at(fm_as_fd(op), index, "frozendict", FM_POSITION_ITEM);
}

static PyObject *
fd_py_index(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 1, 1)) {
        return fm_wrong_call("index", op, args, nargs, kwnames);
    }
    PyObject *key = args[0];
    return position_of(fm_as_fd(op), key);
}

static PyObject *
fd_py_slice(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fm_positional_call(nargs, kwnames, 0, 2)) {
        return fm_wrong_call("slice", op, args, nargs, kwnames);
    }
    return position_slice(fm_state_of_type(Py_TYPE(op)), op, nargs > 0 ? args[0] : Py_None,
                          nargs > 1 ? args[1] : Py_None);
}

static PyMethodDef fd_methods[] = {
    {"get", (PyCFunction)(void (*)(void))fd_py_get, METH_FASTCALL, FD_DOC_GET},
    {"keys", view_mapping_py_keys, METH_NOARGS, FD_DOC_KEYS},
    {"values", view_mapping_py_values, METH_NOARGS, FD_DOC_VALUES},
    {"items", view_mapping_py_items, METH_NOARGS, FD_DOC_ITEMS},
    {"__reversed__", view_mapping_py_reversed, METH_NOARGS, FD_DOC_DUNDER_REVERSED},
    {"copy", fd_py_copy, METH_NOARGS, FD_DOC_COPY},
    {"fromkeys", (PyCFunction)(void (*)(void))fd_py_fromkeys, METH_FASTCALL | METH_CLASS,
     FD_DOC_FROMKEYS},
    {"__getnewargs__", fd_py_getnewargs, METH_NOARGS, FD_DOC_DUNDER_GETNEWARGS},
    {"__reduce_ex__", fd_py_reduce_ex, METH_O, FD_DOC_DUNDER_REDUCE_EX},
    {"__reduce__", fd_py_reduce, METH_NOARGS, FD_DOC_DUNDER_REDUCE},
    {"__copy__", (PyCFunction)(void (*)(void))fd_py_dunder_copy, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_DUNDER_COPY},
    {"__deepcopy__", (PyCFunction)(void (*)(void))fd_py_deepcopy,
     METH_FASTCALL | METH_KEYWORDS, FD_DOC_DUNDER_DEEPCOPY},
    {"set", (PyCFunction)(void (*)(void))fd_py_set, METH_FASTCALL | METH_KEYWORDS, FD_DOC_SET},
    {"delete", (PyCFunction)(void (*)(void))fd_py_delete, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_DELETE},
    {"discard", (PyCFunction)(void (*)(void))fd_py_discard, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_DISCARD},
    {"__replace__", (PyCFunction)(void (*)(void))fd_py_replace, METH_VARARGS | METH_KEYWORDS,
     FD_DOC_DUNDER_REPLACE},
    {"get_in", (PyCFunction)(void (*)(void))path_py_get_in, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_GET_IN},
    {"set_in", (PyCFunction)(void (*)(void))path_py_set_in, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_SET_IN},
    {"update_in", (PyCFunction)(void (*)(void))path_py_update_in, METH_VARARGS | METH_KEYWORDS,
     FD_DOC_UPDATE_IN},
    {"delete_in", (PyCFunction)(void (*)(void))path_py_delete_in,
     METH_FASTCALL | METH_KEYWORDS, FD_DOC_DELETE_IN},
    {"evolve", (PyCFunction)(void (*)(void))fd_py_evolve, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_EVOLVE},
    {"diff", (PyCFunction)(void (*)(void))fd_py_diff, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_DIFF},
    {"key_at", (PyCFunction)(void (*)(void))fd_py_key_at, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_KEY_AT},
    {"value_at", (PyCFunction)(void (*)(void))fd_py_value_at, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_VALUE_AT},
    {"item_at", (PyCFunction)(void (*)(void))fd_py_item_at, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_ITEM_AT},
    {"index", (PyCFunction)(void (*)(void))fd_py_index, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_INDEX},
    {"slice", (PyCFunction)(void (*)(void))fd_py_slice, METH_FASTCALL | METH_KEYWORDS,
     FD_DOC_SLICE},
    {"merge_with", (PyCFunction)(void (*)(void))fd_py_merge_with,
     METH_FASTCALL | METH_KEYWORDS, FD_DOC_MERGE_WITH},
    {"_check", fd_py_check, METH_NOARGS,
     "Assert every invariant of this version (tests call it after edits)."},
    {"_node_ids", fd_py_node_ids, METH_NOARGS,
     "Addresses of every key-trie and order-trie node of this version (of a flat\n"
     "version: its key block and its values)."},
    {"_dump", fd_py_dump, METH_NOARGS, "A readable dump of both tries."},
    {"__class_getitem__", Py_GenericAlias, METH_O | METH_CLASS, FD_DOC_DUNDER_CLASS_GETITEM},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef fd_getset[] = {
    {"_match_self", fd_py_match_self, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot fd_slots[] = {
    {Py_tp_new, fd_tp_new},
    {Py_tp_dealloc, fd_tp_dealloc},
    {Py_tp_traverse, fd_tp_traverse},
    {Py_tp_clear, fd_tp_clear},
    {Py_tp_repr, fd_tp_repr},
    {Py_tp_hash, fd_tp_hash},
    {Py_tp_richcompare, fd_tp_richcompare},
    {Py_tp_iter, view_mapping_tp_iter},
    {Py_tp_methods, fd_methods},
    {Py_tp_getset, fd_getset},
    {Py_mp_length, fd_tp_length},
    {Py_mp_subscript, fd_tp_subscript},
    {Py_sq_contains, fd_tp_contains},
    {Py_nb_or, fd_tp_or},
    {Py_nb_subtract, fd_tp_subtract},
    {Py_nb_and, fd_tp_and},
    {Py_tp_doc, FD_DOC_TYPE},
    {0, NULL},
};

PyType_Spec fd_spec = {
    .name = "frozenmap.frozendict",
    .basicsize = sizeof(fd_object),
    .flags =
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_MAPPING,
    .slots = fd_slots,
};

vectorcallfunc fd_tp_vectorcall_ptr = fd_tp_vectorcall;
