"""``copy.deepcopy`` of a frozendict: one Python function for both cores
(``frozenmap._cold.deepcopy``), with the memo handling the builtin's has.

The behaviour itself (a new map even when every value is atomic, recursion
through a value that holds the map, shared references kept shared, a
subclass through ``__reduce_ex__``) is tested in ``test_pep814_objects.py``;
here: the order of the copies, what ``__deepcopy__`` does with a memo it is
given directly, and that both cores run the one shared path.
"""

import copy

import frozenmap._cold as cold


class Logged:
    """A key or value that records when it is deep-copied."""

    def __init__(self, name, log):
        self.name = name
        self.log = log

    def __hash__(self):
        return hash(self.name)

    def __eq__(self, other):
        return isinstance(other, Logged) and other.name == self.name

    def __deepcopy__(self, memo):
        self.log.append(self.name)
        return Logged(self.name, self.log)


def test_each_key_is_copied_before_its_value_in_order(fd):
    log = []
    m = fd((Logged("k%d" % i, log), Logged("v%d" % i, log)) for i in range(3))
    copied = copy.deepcopy(m)
    assert log == ["k0", "v0", "k1", "v1", "k2", "v2"]
    assert [k.name for k in copied] == ["k0", "k1", "k2"]


def test_the_copy_is_recorded_in_the_memo(fd):
    m = fd(a=[1])
    memo = {}
    copied = m.__deepcopy__(memo)
    assert memo[id(m)] is copied
    assert memo[id(m["a"])] is copied["a"]


def test_a_copy_already_in_the_memo_is_the_result(fd):
    """What a value's copy made of the map itself (recursion) wins, as with the
    builtin: the copy found in the memo after the values is returned."""
    m = fd(a=[1])
    found = object()
    memo = {id(m): found}
    assert m.__deepcopy__(memo) is found


def test_an_empty_map_copies_to_a_new_empty_map(fd):
    m = fd()
    copied = copy.deepcopy(m)
    assert copied == m and type(copied) is fd


def test_both_cores_run_the_shared_cold_path(core, monkeypatch):
    calls = []
    real = cold.deepcopy

    def spy(fd, memo, fdtype):
        calls.append((type(fd), fdtype))
        return real(fd, memo, fdtype)

    monkeypatch.setattr(cold, "deepcopy", spy)
    sub = type("Sub", (core.frozendict,), {})
    assert copy.deepcopy(core.frozendict(a=1)) == {"a": 1}
    assert type(copy.deepcopy(sub(a=1))) is sub
    assert calls == [(core.frozendict, core.frozendict), (sub, core.frozendict)]
