"""The C core's trie layout is the pure core's (the cores mirror each other on purpose).

The C core derives its depths and masks from the bit widths in
``cfrozenmap.h`` and exports them as ``_cfrozenmap._layout``; here they are
held to the pure core's ``keytrie``/``ordertrie`` constants and to the depth
that the shifts imply.  A layout change made in one core only fails here.
"""

import pytest
from conftest import available_cores

from frozenmap._pycore import keytrie, ordertrie

CORES = {core.name: core for core in available_cores()}


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
    assert {
        "champ_bits": layout["champ_bits"],
        "champ_mask": layout["champ_mask"],
        "champ_max_shift": layout["champ_max_shift"],
        "order_leaf_bits": layout["order_leaf_bits"],
        "order_inner_bits": layout["order_inner_bits"],
        "order_max_shift": layout["order_max_shift"],
    } == {
        "champ_bits": keytrie.BITS,
        "champ_mask": keytrie.DIGIT_MASK,
        "champ_max_shift": keytrie.MAX_SHIFT,
        "order_leaf_bits": ordertrie.LEAF_BITS,
        "order_inner_bits": ordertrie.INNER_BITS,
        "order_max_shift": ordertrie.MAX_SHIFT,
    }


def test_the_depths_are_the_number_of_shifts_below_64():
    layout = _c_layout()
    champ_shifts = list(range(0, 64, keytrie.BITS))
    assert layout["champ_max_depth"] == len(champ_shifts)
    assert layout["champ_max_shift"] == champ_shifts[-1]
    order_shifts = _order_shifts(ordertrie.LEAF_BITS, ordertrie.INNER_BITS)
    assert layout["order_max_depth"] == len(order_shifts) == 17
    assert layout["order_max_shift"] == order_shifts[-1] == 63


def test_the_pure_cores_masks_and_sizes_follow_its_widths():
    assert keytrie.DIGIT_MASK == (1 << keytrie.BITS) - 1
    assert ordertrie.LEAF_SIZE == 1 << ordertrie.LEAF_BITS
    assert ordertrie.INNER_SIZE == 1 << ordertrie.INNER_BITS


def test_the_flat_threshold_is_the_pure_cores():
    layout = _c_layout()
    if "flat_max" not in layout:
        pytest.skip("this C core has no flat form")
    try:
        from frozenmap._pycore import flat
    except ImportError:
        pytest.skip("the pure core has no flat form yet (flat.py lands on its own branch)")
    assert layout["flat_max"] == flat.FLAT_MAX
