"""Nested state: paths against the hand-written chain, and deep diffs.

The shape is a reducer's state three levels deep: ``n`` top-level keys, each
holding 20 maps of 20 values (n = 250 gives 100,000 leaves).  Each benchmark
class is parametrized over frozenmap's two cores, so the C core's
``set_in``/``get_in`` can be read against the chain of ``set`` calls and
subscripts a user would otherwise write (the target: within 1.3x of it).
"""

import importlib

_CORES = {"c": "frozenmap._ccore", "python": "frozenmap._pycore"}
_STATE = {}


def _state(core, n):
    key = (core, n)
    if key not in _STATE:
        fd = importlib.import_module(_CORES[core]).frozendict
        _STATE[key] = fd(
            {
                "k%d" % i: fd({"j%d" % j: fd({"x%d" % x: x for x in range(20)}) for j in range(20)})
                for i in range(n)
            }
        )
    return _STATE[key]


class _Nested:
    params = (["c", "python"], [10, 250])
    param_names = ["core", "n"]

    def setup(self, core, n):
        try:
            self.s = _state(core, n)
        except ImportError:
            raise NotImplementedError("core %s is not available" % core) from None
        self.path = ("k5", "j7", "x3")
        self.changed = self.s.set_in(self.path, 99)


class TimeNestedPaths(_Nested):
    """One update or read at depth 3: the path methods and the chain."""

    def time_set_in(self, core, n):
        self.s.set_in(self.path, 99)

    def time_set_chain(self, core, n):
        s = self.s
        s.set("k5", s["k5"].set("j7", s["k5"]["j7"].set("x3", 99)))

    def time_get_in(self, core, n):
        self.s.get_in(self.path)

    def time_get_chain(self, core, n):
        self.s["k5"]["j7"]["x3"]

    def time_update_in(self, core, n):
        self.s.update_in(self.path, int.__add__, 1)


class TimeDeepDiff(_Nested):
    """What changed between two states one change apart, at depth 3."""

    def time_diff_shallow(self, core, n):
        self.s.diff(self.changed)

    def time_diff_deep(self, core, n):
        self.s.diff(self.changed, deep=True)

    def time_apply_deep_patch(self, core, n):
        self.patch.apply(self.s)

    def setup(self, core, n):
        super().setup(core, n)
        self.patch = self.s.diff(self.changed, deep=True)
