"""A hypothesis state machine: frozendict against a plain ``dict`` model.

The machine keeps every version it makes, each beside the dict it should
equal, and derives new versions from randomly chosen EARLIER ones (set,
delete, discard, ``|`` with dicts and with other kept versions, ``-`` and
``&`` with lists, sets and generators, evolver batches with a freeze in the
middle, ``diff``).  Keys come from a small pool with full hash collisions
(``HashKey``), partial ones (same low digits), keys equal across types
(``1``, ``1.0``, ``True``; ``0``, ``False``), ``-1``/``-2`` (equal hashes in
CPython), integers a multiple of the hash modulus apart, strings and ints; a bulk
rule adds runs of up to 80 ints so the tries get a few levels deep.

Checked after every step for every kept version (persistence: old versions
never change): items in order with the very key objects dict keeps, ``len``,
``==`` both ways.  Checked when a version is made and again for all versions
at the end: ``_check()``, ``reversed``, and ``hash`` equal to
``hash(frozenset(model.items()))``.  Some versions are hashed as soon as they
are made, so their descendants take the O(1) accumulator path.

The example count comes from the loaded hypothesis profile (conftest.py);
``stateful_step_count`` bounds each run.
"""

import sys

import hypothesis.strategies as st
from helpers import typed_items
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from keys import HashKey

MODULUS = sys.hash_info.modulus

KEY_POOL = (
    [HashKey(1, "c%d" % i) for i in range(4)]  # one full collision group
    + [HashKey(1 + 32, "p1"), HashKey(1 + 32 * 33, "p2"), HashKey(1 + (1 << 60), "p3")]
    + [1, 1.0, True, 0, False, 0.0, -1, -2, 5, 5 + MODULUS, 5 + 2 * MODULUS]
    + ["a", "b", "c", "d", "e", ""]
    + list(range(10, 40))
)

BULK_KEYS = range(100, 400)  # deeper tries: more order-trie levels, more key-trie splits

keys = st.one_of(st.sampled_from(KEY_POOL), st.sampled_from(BULK_KEYS))
values = st.one_of(st.integers(-3, 3), st.sampled_from(["v", "w", (1, 2), None]))
pairs = st.lists(st.tuples(keys, values), max_size=12)
indexes = st.integers(min_value=0, max_value=10**6)
key_lists = st.lists(keys, max_size=10)
iterable_kinds = st.sampled_from(["list", "set", "generator", "dict", "frozendict"])

EVOLVER_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), keys, values),
        st.tuples(st.just("del"), keys),
        st.tuples(st.just("discard"), keys),
        st.tuples(st.just("pop"), keys),
        st.tuples(st.just("setdefault"), keys, values),
        st.tuples(st.just("popitem")),
        st.tuples(st.just("update"), pairs),
        st.tuples(st.just("clear")),
        st.tuples(st.just("freeze")),
    ),
    max_size=25,
)


def expected_diff(old, new):
    added = [(k, new[k]) for k in new if k not in old]
    removed = [(k, v) for k, v in old.items() if k not in new]
    changed = [
        (k, (v, new[k])) for k, v in old.items() if k in new and v is not new[k] and v != new[k]
    ]
    return added, removed, changed


def make_machine(core):
    frozendict = core.frozendict

    class FrozendictVersions(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            self.versions = []  # [(frozendict, model dict)]
            self.add(frozendict(), {})

        # --- bookkeeping ---------------------------------------------------------

        def add(self, fd, model):
            assert type(fd) is frozendict
            fd._check()
            assert typed_items(fd) == typed_items(model)
            self.versions.append((fd, model))

        def pick(self, index):
            return self.versions[index % len(self.versions)]

        def as_iterable(self, kind, ks):
            if kind == "list":
                return list(ks)
            if kind == "set":
                return set(ks)
            if kind == "generator":
                return (k for k in ks)
            if kind == "dict":
                return dict.fromkeys(ks)
            return frozendict.fromkeys(ks)

        # --- rules: every one derives from a random kept version ---------------------

        @rule(i=indexes, items=pairs)
        def build(self, i, items):
            self.add(frozendict(items), dict(items))

        @rule(i=indexes, start=st.sampled_from(BULK_KEYS), n=st.integers(1, 80), v=values)
        def bulk_union(self, i, start, n, v):
            fd, model = self.pick(i)
            other = {k: v for k in range(start, start + n)}
            new = dict(model)
            new.update(other)
            self.add(fd | other, new)

        @rule(i=indexes, k=keys, v=values, hash_first=st.booleans())
        def set(self, i, k, v, hash_first):
            fd, model = self.pick(i)
            if hash_first:
                hash(fd)
            new = dict(model)
            new[k] = v
            out = fd.set(k, v)
            if k in model and model[k] is v:
                assert out is fd
            self.add(out, new)

        @rule(i=indexes, k=keys)
        def delete(self, i, k):
            fd, model = self.pick(i)
            if k in model:
                new = dict(model)
                del new[k]
                self.add(fd.delete(k), new)
            else:
                try:
                    fd.delete(k)
                except KeyError:
                    pass
                else:
                    raise AssertionError("delete of a missing key did not raise")

        @rule(i=indexes, k=keys)
        def discard(self, i, k):
            fd, model = self.pick(i)
            out = fd.discard(k)
            if k not in model:
                assert out is fd
            new = dict(model)
            new.pop(k, None)
            self.add(out, new)

        @rule(i=indexes, items=pairs, as_frozendict=st.booleans())
        def union_with_new_items(self, i, items, as_frozendict):
            fd, model = self.pick(i)
            other = dict(items)
            new = dict(model)
            new.update(other)
            self.add(fd | (frozendict(other) if as_frozendict else other), new)

        @rule(i=indexes, j=indexes)
        def union_of_two_versions(self, i, j):
            (a, ma), (b, mb) = self.pick(i), self.pick(j)
            new = dict(ma)
            new.update(mb)
            self.add(a | b, new)

        @rule(i=indexes, ks=key_lists, kind=iterable_kinds)
        def subtract(self, i, ks, kind):
            fd, model = self.pick(i)
            gone = set(ks)
            new = {k: v for k, v in model.items() if k not in gone}
            self.add(fd - self.as_iterable(kind, ks), new)

        @rule(i=indexes, ks=key_lists, kind=iterable_kinds)
        def intersect(self, i, ks, kind):
            fd, model = self.pick(i)
            kept = set(ks)
            new = {k: v for k, v in model.items() if k in kept}
            self.add(fd & self.as_iterable(kind, ks), new)

        @rule(i=indexes, ops=EVOLVER_OPS)
        def evolver_batch(self, i, ops):
            fd, model = self.pick(i)
            e = fd.evolve()
            new = dict(model)
            for op in ops:
                name = op[0]
                if name == "set":
                    e[op[1]] = op[2]
                    new[op[1]] = op[2]
                elif name == "del":
                    if op[1] in new:
                        del e[op[1]]
                        del new[op[1]]
                    else:
                        try:
                            del e[op[1]]
                        except KeyError:
                            pass
                        else:
                            raise AssertionError("del of a missing key did not raise")
                elif name == "discard":
                    assert e.discard(op[1]) is e
                    new.pop(op[1], None)
                elif name == "pop":
                    assert e.pop(op[1], "absent") == new.pop(op[1], "absent")
                elif name == "setdefault":
                    assert e.setdefault(op[1], op[2]) == new.setdefault(op[1], op[2])
                elif name == "popitem":
                    if new:
                        assert e.popitem() == new.popitem()
                elif name == "update":
                    e.update(op[1])
                    new.update(op[1])
                elif name == "clear":
                    e.clear()
                    new.clear()
                else:  # freeze in the middle: keep it, then go on editing
                    self.add(e.freeze(), dict(new))
                assert typed_items(e) == typed_items(new)
            self.add(e.freeze(), new)

        @rule(i=indexes, j=indexes, against_dict=st.booleans())
        def diff(self, i, j, against_dict):
            (a, ma), (b, mb) = self.pick(i), self.pick(j)
            result = a.diff(dict(b.items()) if against_dict else b)
            added, removed, changed = expected_diff(ma, mb)
            assert list(result.added.items()) == added
            assert list(result.removed.items()) == removed
            assert list(result.changed.items()) == changed
            for field in result:
                field._check()

        @rule(i=indexes, j=indexes)
        def compare(self, i, j):
            (a, ma), (b, mb) = self.pick(i), self.pick(j)
            assert (a == b) == (ma == mb)
            assert (b == a) == (ma == mb)
            assert (a != b) == (ma != mb)
            if ma == mb:
                assert hash(a) == hash(b)

        @rule(i=indexes)
        def hash_one(self, i):
            fd, model = self.pick(i)
            assert hash(fd) == hash(frozenset(model.items()))

        # --- invariants --------------------------------------------------------------

        @invariant()
        def every_version_is_unchanged(self):
            for fd, model in self.versions:
                assert len(fd) == len(model)
                assert typed_items(fd) == typed_items(model)
                assert fd == model and model == fd

        def teardown(self):
            for fd, model in self.versions:
                fd._check()
                assert list(reversed(fd)) == list(reversed(model))
                assert list(fd.values()) == list(model.values())
                assert hash(fd) == hash(frozenset(model.items()))
                assert fd == frozendict(model)

    return FrozendictVersions


def test_versions_against_a_dict_model(core):
    run_state_machine_as_test(make_machine(core), settings=settings(stateful_step_count=40))
