"""Pickles made before the package's modules were split by job still load.

``Diff`` moved from ``frozenmap._common`` into ``frozenmap._diff``, which is
where a pickle of one names it now; ``frozenmap._common`` keeps the name for
the pickles made before.  An exact frozendict and an Evolver still pickle as
calls of ``frozenmap._common.restore`` and ``restore_evolver``, byte for byte
as before, so an earlier release loads them too.

``EARLIER`` holds pickles made by frozenmap 0.1.0 before the split (the C
core loaded, both cores imported), with protocols 0, 2 and 5:
``frozendict(b=1, a=frozendict(x=(1, 2)))`` of each core, its ``evolve()``,
and a deep ``Diff``.
"""

import pickle

import pytest

import frozenmap
from frozenmap._core import core_frozendict

# fmt: off
EARLIER = {
    (0, 'frozendict', 'c'): b'cfrozenmap._common\nrestore\np0\n((dp1\nVb\np2\nI1\nsVa\np3\ng0\n((dp4\nVx\np5\n(I1\nI2\ntp6\nsVc\np7\ntp8\nRp9\nsg7\ntp10\nRp11\n.',
    (0, 'Evolver', 'c'): b'cfrozenmap._common\nrestore_evolver\np0\n((dp1\nVb\np2\nI1\nsVa\np3\ncfrozenmap._common\nrestore\np4\n((dp5\nVx\np6\n(I1\nI2\ntp7\nsVc\np8\ntp9\nRp10\nsg8\ntp11\nRp12\n.',
    (0, 'frozendict', 'python'): b'cfrozenmap._common\nrestore\np0\n((dp1\nVb\np2\nI1\nsVa\np3\ng0\n((dp4\nVx\np5\n(I1\nI2\ntp6\nsVpython\np7\ntp8\nRp9\nsg7\ntp10\nRp11\n.',
    (0, 'Evolver', 'python'): b'cfrozenmap._common\nrestore_evolver\np0\n((dp1\nVb\np2\nI1\nsVa\np3\ncfrozenmap._common\nrestore\np4\n((dp5\nVx\np6\n(I1\nI2\ntp7\nsVpython\np8\ntp9\nRp10\nsg8\ntp11\nRp12\n.',
    (0, 'Diff', 'c'): b'ccopy_reg\n_reconstructor\np0\n(cfrozenmap._common\nDiff\np1\nc__builtin__\ntuple\np2\n(cfrozenmap._common\nrestore\np3\n((dp4\nVc\np5\nI3\nsVc\np6\ntp7\nRp8\ng3\n((dp9\nVa\np10\nI1\nsg6\ntp11\nRp12\ng3\n((dp13\nVb\np14\ng0\n(g1\ng2\n(g3\n((dp15\ng6\ntp16\nRp17\ng3\n((dp18\ng6\ntp19\nRp20\ng3\n((dp21\nVx\np22\n(I1\nI2\ntp23\nsg6\ntp24\nRp25\ntp26\ntp27\nRp28\nsg6\ntp29\nRp30\ntp31\ntp32\nRp33\n.',
    (2, 'frozendict', 'c'): b'\x80\x02cfrozenmap._common\nrestore\nq\x00}q\x01(X\x01\x00\x00\x00bq\x02K\x01X\x01\x00\x00\x00aq\x03h\x00}q\x04X\x01\x00\x00\x00xq\x05K\x01K\x02\x86q\x06sX\x01\x00\x00\x00cq\x07\x86q\x08Rq\tuh\x07\x86q\nRq\x0b.',
    (2, 'Evolver', 'c'): b'\x80\x02cfrozenmap._common\nrestore_evolver\nq\x00}q\x01(X\x01\x00\x00\x00bq\x02K\x01X\x01\x00\x00\x00aq\x03cfrozenmap._common\nrestore\nq\x04}q\x05X\x01\x00\x00\x00xq\x06K\x01K\x02\x86q\x07sX\x01\x00\x00\x00cq\x08\x86q\tRq\nuh\x08\x86q\x0bRq\x0c.',
    (2, 'frozendict', 'python'): b'\x80\x02cfrozenmap._common\nrestore\nq\x00}q\x01(X\x01\x00\x00\x00bq\x02K\x01X\x01\x00\x00\x00aq\x03h\x00}q\x04X\x01\x00\x00\x00xq\x05K\x01K\x02\x86q\x06sX\x06\x00\x00\x00pythonq\x07\x86q\x08Rq\tuh\x07\x86q\nRq\x0b.',
    (2, 'Evolver', 'python'): b'\x80\x02cfrozenmap._common\nrestore_evolver\nq\x00}q\x01(X\x01\x00\x00\x00bq\x02K\x01X\x01\x00\x00\x00aq\x03cfrozenmap._common\nrestore\nq\x04}q\x05X\x01\x00\x00\x00xq\x06K\x01K\x02\x86q\x07sX\x06\x00\x00\x00pythonq\x08\x86q\tRq\nuh\x08\x86q\x0bRq\x0c.',
    (2, 'Diff', 'c'): b'\x80\x02cfrozenmap._common\nDiff\nq\x00cfrozenmap._common\nrestore\nq\x01}q\x02X\x01\x00\x00\x00cq\x03K\x03sX\x01\x00\x00\x00cq\x04\x86q\x05Rq\x06h\x01}q\x07X\x01\x00\x00\x00aq\x08K\x01sh\x04\x86q\tRq\nh\x01}q\x0bX\x01\x00\x00\x00bq\x0ch\x00h\x01}q\rh\x04\x86q\x0eRq\x0fh\x01}q\x10h\x04\x86q\x11Rq\x12h\x01}q\x13X\x01\x00\x00\x00xq\x14K\x01K\x02\x86q\x15sh\x04\x86q\x16Rq\x17\x87q\x18\x81q\x19sh\x04\x86q\x1aRq\x1b\x87q\x1c\x81q\x1d.',
    (5, 'frozendict', 'c'): b'\x80\x05\x95L\x00\x00\x00\x00\x00\x00\x00\x8c\x11frozenmap._common\x94\x8c\x07restore\x94\x93\x94}\x94(\x8c\x01b\x94K\x01\x8c\x01a\x94h\x02}\x94\x8c\x01x\x94K\x01K\x02\x86\x94s\x8c\x01c\x94\x86\x94R\x94uh\t\x86\x94R\x94.',
    (5, 'Evolver', 'c'): b'\x80\x05\x95`\x00\x00\x00\x00\x00\x00\x00\x8c\x11frozenmap._common\x94\x8c\x0frestore_evolver\x94\x93\x94}\x94(\x8c\x01b\x94K\x01\x8c\x01a\x94h\x00\x8c\x07restore\x94\x93\x94}\x94\x8c\x01x\x94K\x01K\x02\x86\x94s\x8c\x01c\x94\x86\x94R\x94uh\x0b\x86\x94R\x94.',
    (5, 'frozendict', 'python'): b'\x80\x05\x95Q\x00\x00\x00\x00\x00\x00\x00\x8c\x11frozenmap._common\x94\x8c\x07restore\x94\x93\x94}\x94(\x8c\x01b\x94K\x01\x8c\x01a\x94h\x02}\x94\x8c\x01x\x94K\x01K\x02\x86\x94s\x8c\x06python\x94\x86\x94R\x94uh\t\x86\x94R\x94.',
    (5, 'Evolver', 'python'): b'\x80\x05\x95e\x00\x00\x00\x00\x00\x00\x00\x8c\x11frozenmap._common\x94\x8c\x0frestore_evolver\x94\x93\x94}\x94(\x8c\x01b\x94K\x01\x8c\x01a\x94h\x00\x8c\x07restore\x94\x93\x94}\x94\x8c\x01x\x94K\x01K\x02\x86\x94s\x8c\x06python\x94\x86\x94R\x94uh\x0b\x86\x94R\x94.',
    (5, 'Diff', 'c'): b'\x80\x05\x95\x90\x00\x00\x00\x00\x00\x00\x00\x8c\x11frozenmap._common\x94\x8c\x04Diff\x94\x93\x94h\x00\x8c\x07restore\x94\x93\x94}\x94\x8c\x01c\x94K\x03s\x8c\x01c\x94\x86\x94R\x94h\x04}\x94\x8c\x01a\x94K\x01sh\x07\x86\x94R\x94h\x04}\x94\x8c\x01b\x94h\x02h\x04}\x94h\x07\x86\x94R\x94h\x04}\x94h\x07\x86\x94R\x94h\x04}\x94\x8c\x01x\x94K\x01K\x02\x86\x94sh\x07\x86\x94R\x94\x87\x94\x81\x94sh\x07\x86\x94R\x94\x87\x94\x81\x94.',
}
# fmt: on


def _document(fd_type):
    return fd_type(b=1, a=fd_type(x=(1, 2)))


@pytest.mark.parametrize(
    "key",
    sorted(k for k in EARLIER if k[1] != "Diff"),
    ids=lambda k: "%s-%s-p%d" % (k[1], k[2], k[0]),
)
def test_an_earlier_frozendict_or_evolver_pickle_loads_with_the_core_it_names(core, key):
    protocol, kind, made_by = key
    restored = pickle.loads(EARLIER[key])
    named = core_frozendict(made_by)  # the core the pickle names, when it loads here
    if kind == "Evolver":
        assert type(restored) is type(named().evolve())
        restored = restored.freeze()
    assert type(restored) is named
    assert type(restored["a"]) is named
    assert restored == _document(core.frozendict)  # either core's compares equal
    assert list(restored) == ["b", "a"]


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_a_frozendict_and_an_evolver_pickle_as_they_did(core, protocol):
    document = _document(core.frozendict)
    assert pickle.dumps(document, protocol) == EARLIER[(protocol, "frozendict", core.name)]
    assert pickle.dumps(document.evolve(), protocol) == EARLIER[(protocol, "Evolver", core.name)]


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_an_earlier_diff_pickle_loads_as_a_diff(core, protocol):
    restored = pickle.loads(EARLIER[(protocol, "Diff", "c")])
    assert type(restored) is frozenmap.Diff
    old = core.frozendict(a=1, b=core.frozendict(x=1))
    new = core.frozendict(b=core.frozendict(x=2), c=3)
    assert restored == old.diff(new, deep=True)
    assert restored.apply(old) == new


@pytest.mark.parametrize("protocol", [0, 2, 5])
def test_a_diff_pickles_under_its_module_and_loads(core, protocol):
    diff = core.frozendict(a=1).diff(core.frozendict(a=2, b=3))
    data = pickle.dumps(diff, protocol)
    assert b"frozenmap._diff" in data
    assert pickle.loads(data) == diff
    assert frozenmap.Diff.__module__ == "frozenmap._diff"
    assert frozenmap.Diff.__qualname__ == "Diff"
