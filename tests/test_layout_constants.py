"""The C core's trie layout is the pure core's (the cores mirror each other on purpose).

The C core derives its depths and masks from the bit widths in
``cfrozenmap.h`` and exports them as ``_cfrozenmap._layout``; the pure core
derives its own from the same widths (``keytrie``, ``ordertrie``).  Here
every derived constant of the pure core is held to its C twin, or to what
the C core's widths imply where the C core names no twin, and to the
formula that derives it.  The pure core's hot paths write a few of them as
literals (a global read per use costs time): the last tests hold every such
literal to the constant it stands for, so a width changed in one core, or
in one constant and not its literals, fails here.
"""

import ast
from pathlib import Path

import pytest
from conftest import available_cores

from frozenmap._pycore import keytrie, ordertrie

CORES = {core.name: core for core in available_cores()}
PYCORE = Path(__file__).resolve().parent.parent / "frozenmap" / "_pycore"


def _c_layout():
    if "c" not in CORES:
        pytest.skip("the C core does not import here")
    from frozenmap._ccore import _cfrozenmap

    return _cfrozenmap._layout


def _order_shifts(leaf_bits, inner_bits):
    shifts = [0]
    shift = leaf_bits
    while shift < 64:
        shifts.append(shift)
        shift += inner_bits
    return shifts


def test_the_c_cores_layout_constants_are_the_pure_cores():
    layout = _c_layout()
    bits, leaf_bits, inner_bits = (
        layout["champ_bits"],
        layout["order_leaf_bits"],
        layout["order_inner_bits"],
    )
    pure = {
        "champ_bits": keytrie.BITS,
        "champ_mask": keytrie.DIGIT_MASK,
        "champ_max_shift": keytrie.MAX_SHIFT,
        "champ fan-out (1 << CHAMP_BITS)": keytrie.FANOUT,
        "champ index: entries after the children": keytrie.ENTRY,
        "order_leaf_bits": ordertrie.LEAF_BITS,
        "order_inner_bits": ordertrie.INNER_BITS,
        "order_max_shift": ordertrie.MAX_SHIFT,
        "order leaf size (1 << ORDER_LEAF_BITS)": ordertrie.LEAF_SIZE,
        "order inner size (1 << ORDER_INNER_BITS)": ordertrie.INNER_SIZE,
        "order full leaf bitmap": ordertrie.LEAF_FULL,
        "order full inner bitmap": ordertrie.INNER_FULL,
    }
    c = {
        "champ_bits": bits,
        "champ_mask": layout["champ_mask"],
        "champ_max_shift": layout["champ_max_shift"],
        "champ fan-out (1 << CHAMP_BITS)": 1 << bits,
        "champ index: entries after the children": 1 << bits,
        "order_leaf_bits": leaf_bits,
        "order_inner_bits": inner_bits,
        "order_max_shift": layout["order_max_shift"],
        "order leaf size (1 << ORDER_LEAF_BITS)": 1 << leaf_bits,
        "order inner size (1 << ORDER_INNER_BITS)": 1 << inner_bits,
        "order full leaf bitmap": (1 << (1 << leaf_bits)) - 1,
        "order full inner bitmap": (1 << (1 << inner_bits)) - 1,
    }
    assert pure == c


def test_the_depths_are_the_number_of_shifts_below_64():
    layout = _c_layout()
    champ_shifts = list(range(0, 64, keytrie.BITS))
    assert layout["champ_max_depth"] == len(champ_shifts)
    assert layout["champ_max_shift"] == champ_shifts[-1] == keytrie.MAX_SHIFT
    order_shifts = _order_shifts(ordertrie.LEAF_BITS, ordertrie.INNER_BITS)
    assert layout["order_max_depth"] == len(order_shifts) == 17
    assert layout["order_max_shift"] == order_shifts[-1] == ordertrie.MAX_SHIFT == 63


def test_the_c_cores_free_lists_cover_every_order_node_size():
    # A node's size in pointer units: two per item of a leaf, one per child of
    # an inner node and one for its size; one free list per size, 0 unused.
    layout = _c_layout()
    if "order_free_sizes" not in layout:
        pytest.skip("this C core does not export its free-list count")
    largest = max(2 * ordertrie.LEAF_SIZE, ordertrie.INNER_SIZE + 1)
    assert layout["order_free_sizes"] == largest + 1


def test_the_pure_cores_constants_follow_its_widths():
    assert keytrie.FANOUT == 1 << keytrie.BITS
    assert keytrie.DIGIT_MASK == keytrie.FANOUT - 1
    assert keytrie.MAX_SHIFT == max(range(0, 64, keytrie.BITS))
    assert keytrie.ENTRY == keytrie.FANOUT
    assert len(keytrie._NO_INDEX) == 2 * keytrie.FANOUT
    assert len(keytrie._SOLO) == keytrie.FANOUT
    assert len(keytrie._PAIRS) == keytrie.FANOUT**2
    assert ordertrie.LEAF_SIZE == 1 << ordertrie.LEAF_BITS
    assert ordertrie.INNER_SIZE == 1 << ordertrie.INNER_BITS
    assert ordertrie.LEAF_FULL == (1 << ordertrie.LEAF_SIZE) - 1
    assert ordertrie.INNER_FULL == (1 << ordertrie.INNER_SIZE) - 1


def test_the_flat_threshold_is_the_pure_cores():
    layout = _c_layout()
    if "flat_max" not in layout:
        pytest.skip("this C core has no flat form")
    try:
        from frozenmap._pycore import flat
    except ImportError:
        pytest.skip("the pure core has no flat form yet (flat.py lands on its own branch)")
    assert layout["flat_max"] == flat.FLAT_MAX


# --- the literals of the hot paths ------------------------------------------------


def _tree(name):
    path = PYCORE / (name + ".py")
    if not path.is_file():  # pragma: no cover
        pytest.skip("needs the source tree")
    return ast.parse(path.read_text(), str(path))


def _int(node):
    """The value of an int literal (not a bool), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _key_trie_literals(tree):
    """(what, value, line) of each int literal in a key-trie module that
    stands for a layout number: a mask (``h & 31``), a shift by digits
    (``h >> 10``, ``lo << 5``, ``hh >>= 5``, ``shift += 5``, ``shift = 20``),
    an offset into the index (``32 + d``), and any other 31 or 32."""
    placed = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            right, left = _int(node.right), _int(node.left)
            if isinstance(node.op, ast.BitAnd) and right is not None:
                found.append(("mask", right, node.lineno))
                placed.add(id(node.right))
            elif isinstance(node.op, (ast.RShift, ast.LShift)) and right is not None:
                found.append(("shift", right, node.lineno))
                placed.add(id(node.right))
            elif isinstance(node.op, ast.Add) and 32 in (left, right):
                found.append(("index offset", 32, node.lineno))
                placed.add(id(node.left if left == 32 else node.right))
        elif isinstance(node, ast.AugAssign) and _int(node.value) is not None:
            target = ast.unparse(node.target)
            if isinstance(node.op, ast.RShift) or target == "shift":
                found.append(("shift", node.value.value, node.lineno))
                placed.add(id(node.value))
        elif isinstance(node, ast.Assign) and _int(node.value) is not None:
            if [ast.unparse(t) for t in node.targets] == ["shift"]:
                found.append(("shift", node.value.value, node.lineno))
                placed.add(id(node.value))
    for node in ast.walk(tree):
        if _int(node) in (31, 32) and id(node) not in placed:
            found.append(("other", node.value, node.lineno))
    return found


@pytest.mark.parametrize("name", ["keytrie", "keytrie_pypy", "champ"])
def test_the_key_tries_literals_are_its_constants(name):
    wrong = []
    for what, value, line in _key_trie_literals(_tree(name)):
        if what == "mask":
            ok = value in (keytrie.DIGIT_MASK, 1)  # a digit, or one bit (``bits >> d & 1``)
        elif what == "shift":
            ok = value % keytrie.BITS == 0 and 0 <= value <= keytrie.MAX_SHIFT
        elif what == "index offset":
            ok = value == keytrie.ENTRY
        else:
            ok = False  # a layout number written out where the constant would do
        if not ok:
            wrong.append("%s.py:%d: %s %d" % (name, line, what, value))
    assert not wrong, "literals that are not the layout's constants: %s" % wrong


def test_the_key_trie_check_finds_its_literals():
    # The scan above sees what it is meant to see (else it would pass on anything).
    found = _key_trie_literals(_tree("keytrie"))
    kinds = {what for what, _, _ in found}
    assert {"mask", "shift", "index offset"} <= kinds
    assert len([f for f in found if f[0] == "mask"]) >= 10
    probe = ast.parse("x = h & 15\ny = [None] * 32\nshift = 7\n")
    assert sorted((w, v) for w, v, _ in _key_trie_literals(probe)) == [
        ("mask", 15),
        ("other", 32),
        ("shift", 7),
    ]


def test_the_order_trie_writes_no_width_out():
    # The fields are written as 0-4 (FIRST = 4) and the widths as 3 and 4; every
    # number derived from them (8, 16, 7, 15, 0xFF, 0xFFFF, 63, ...) goes by its
    # name.  The one larger literal is the top bit of a seq, in MAX_SHIFT's
    # formula (as in the C core's ORDER_MAX_SHIFT).
    larger = [
        node.value
        for node in ast.walk(_tree("ordertrie"))
        if _int(node) is not None and _int(node) > ordertrie.FIRST
    ]
    assert larger == [63]
