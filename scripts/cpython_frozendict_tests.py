"""Run CPython 3.15's own frozendict tests against frozenmap's frozendict.

Usage: python scripts/cpython_frozendict_tests.py [--list] [-v] TESTDIR [MODULE ...]

TESTDIR holds CPython 3.15's ``test`` package (Debian's libpython3.15-testsuite
plus the ``test.support`` of libpython3.15-stdlib; ``bash
scripts/debian-python.sh --testsuite 3.15`` fetches both and prints TESTDIR).
The core is the one ``import frozenmap`` loads: FROZENMAP_PURE_PYTHON=1 picks
the pure-Python core.

Every module of the ``test`` package runs with the global name ``frozendict``
bound to ``frozenmap.frozendict`` before its first line, so the tests (which
name the builtin unqualified) build frozenmap's type, while the standard
library they exercise (pprint, json, copy, pickle, ...) keeps the
interpreter's own builtins.  No test is edited.  The runner selects the tests
that use ``frozendict``: a test method whose code names it, and every test of
a class that names it outside its test methods (``type2test = frozendict``, a
``setUp``) or is named after it (``FrozenDictTests``).

Every selected test that does not pass is recorded below with its reason:

* DEVIATIONS: a type that lives outside the interpreter cannot be the builtin
  (``type(name, bases, ns)`` demands a real dict, ...); each is listed in
  docs/pep814.md §14 too.
* KNOWN_BUGS: frozenmap's own bugs, being fixed.
Both run as expected failures: one that starts to pass (the deviation or the
bug is gone) fails the run, so the tables cannot go stale.
* NEEDS_PYTHON: tests and whole modules of 3.15's suite that need something of
  3.15 other than frozendict (its syntax, a stdlib feature, a ``test.support``
  helper); skipped on older Pythons.

On Pythons older than 3.15 ``test.support`` is the running interpreter's own
(3.15's imports modules older Pythons lack); a helper only 3.15's has is
answered by a stand-in that skips the test using it, naming the helper.

Exit status: 0 when every selected test passed, failed as recorded or was
skipped with a reason; 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import importlib.abc
import importlib.machinery
import inspect
import io
import os
import sys
import sysconfig
import tokenize
import unittest
from typing import Callable, NamedTuple

import frozenmap

PY = sys.version_info[:2]
CORE = frozenmap.IMPLEMENTATION

# The modules of 3.15's test package whose tests use frozendict, in run order.
# Left out on purpose: test_capi.*, test_marshal, test_crossinterp,
# test_opcache and test_gdb test the builtin's C API, marshal format,
# cross-interpreter sharing, bytecode specialisation and debugger printing
# (interpreter internals no outside type can have); test_inspect and test_hmac
# name frozendict only in a string and in an empty default argument.
MODULES = (
    "test.test_dict",
    "test.test_copy",
    "test.test_pickle",
    "test.test_patma",
    "test.test_set",
    "test.test_userdict",
    "test.test_ordered_dict",
    "test.test_defaultdict",
    "test.test_genericalias",
    "test.test_types",
    "test.test_pprint",
    "test.test_json.test_decode",
    "test.test_json.test_dump",
    "test.test_builtin",
    "test.test_str",
    "test.test_plistlib",
    "test.test_xml_etree",
    "test.test_dataclasses",
    "test.test_decimal",
    "test.test_traceback",
)


class Entry(NamedTuple):
    """Why a test (or module) does not pass, and where that holds."""

    reason: str
    applies: Callable[[], bool] = lambda: True


def before(major: int, minor: int) -> Callable[[], bool]:
    return lambda: PY < (major, minor)


def on_core(core: str) -> Callable[[], bool]:
    return lambda: CORE == core


# Modules an older Python cannot import.
MODULE_NEEDS: dict[str, Entry] = {
    "test.test_patma": Entry(
        "a `case +0:` pattern (signed zero literal), syntax of 3.15", before(3, 15)
    ),
    "test.test_pprint": Entry("t-string literals (PEP 750), syntax of 3.14", before(3, 14)),
    "test.test_genericalias": Entry(
        "imports string.templatelib (3.14); uses `type X[**P] = ...` (PEP 695, 3.12)", before(3, 14)
    ),
    "test.test_builtin": Entry(
        "uses the builtin `sentinel` when imported (3.15); `class A[T]` (PEP 695, 3.12)",
        before(3, 15),
    ),
    "test.test_dataclasses": Entry(
        "imports annotationlib (3.14); uses `class B[T2]` (PEP 695, 3.12)", before(3, 14)
    ),
    "test.test_traceback": Entry(
        "uses `_colorize.default_theme` when imported (3.14; on 3.10 `except*` syntax too)",
        before(3, 14),
    ),
}

# Test ids: "module.Class.method", or "module.*.method" for every class of the
# module.  Every deviation is listed in docs/pep814.md §14 with the same reason.
DEVIATIONS: dict[str, Entry] = {
    "test.test_dict.FrozenDictTests.test_pickle": Entry(
        "P2: frozenmap pickles with protocols 0 and 1 too; the builtin raises TypeError"
    ),
    "test.test_dict.FrozenDictTests.test_fromkeys": Entry(
        "dict.fromkeys on a dict subclass whose constructor returns a frozendict: CPython "
        "special-cases the builtin frozendict; any other result is filled by item assignment, "
        "which a frozendict refuses"
    ),
    "test.test_set.TestOnlySetsFrozenDict.test_difference": Entry(
        "L5: frozenmap's frozendict has `-` (remove keys), so `fd - set` is not a TypeError"
    ),
    "test.test_set.TestOnlySetsFrozenDict.test_intersection": Entry(
        "L5: frozenmap's frozendict has `&` (keep keys), so `fd & set` is not a TypeError"
    ),
    "test.test_ordered_dict.*.test_merge_operator": Entry(
        "a direct `OrderedDict.__ror__(fd)` call: OrderedDict's `__ror__` accepts only a dict "
        "(or the builtin frozendict) and returns NotImplemented; `fd | od` itself works"
    ),
    "test.test_json.test_dump.*.test_dumps_dict": Entry(
        "§13: json serialises dict (and the builtin frozendict) only; pass "
        "`default=frozenmap.json_default`"
    ),
    "test.test_builtin.BuiltinTest.test_eval_frozendict": Entry(
        "§13: eval() globals must be the builtin dict or frozendict"
    ),
    "test.test_builtin.BuiltinTest.test_exec_frozendict": Entry(
        "§13: exec() globals must be the builtin dict or frozendict"
    ),
    "test.test_builtin.TestType.test_type_frozendict": Entry(
        "`type(name, bases, ns)` demands the builtin dict or frozendict as the namespace"
    ),
    "test.test_str.StrTest.test_maketrans_translate": Entry(
        "`str.maketrans(mapping)` demands the builtin dict (or frozendict on 3.15)"
    ),
    "test.test_plistlib.TestPlistlib.test_frozendict": Entry(
        "plistlib writes dict (and the builtin frozendict) only: `unsupported type`"
    ),
    "test.test_xml_etree.KeywordArgsTest.test_issue14818": Entry(
        "`ElementTree.Element(tag, attrib)` demands the builtin dict (or frozendict on 3.15)"
    ),
    "test.test_dataclasses.TestCase.test_helper_asdict_builtin_containers": Entry(
        "dataclasses.asdict recurses into dict (and the builtin frozendict) only; other "
        "mappings are deep-copied whole, so the dataclasses inside stay dataclasses"
    ),
    "test.test_dataclasses.TestCase.test_helper_astuple_builtin_containers": Entry(
        "dataclasses.astuple recurses into dict (and the builtin frozendict) only; other "
        "mappings are deep-copied whole, so the dataclasses inside stay dataclasses"
    ),
    "test.test_decimal.CContextFlags.test_flag_comparisons": Entry(
        "C decimal's `context.flags == mapping` accepts only the builtin dict (or frozendict "
        "on 3.15); the pure-Python decimal's flags are a dict and compare equal"
    ),
    "test.test_traceback.*.test_cross_language_mutable_on_immutable": Entry(
        "traceback's 'Did you mean to use a dict object?' hint names the builtin types only"
    ),
}

# frozenmap's own bugs that these tests find, while a fix is pending.
KNOWN_BUGS: dict[str, Entry] = {
    # Empty: the last ones (UserDict and defaultdict with |, the pure core's
    # hash recursion text, pprint of views on 3.15) are fixed.
}

# Tests that need a 3.15 feature other than frozendict.
NEEDS_PYTHON: dict[str, Entry] = {
    "test.test_dict.FrozenDictMappingTests.test_read": Entry(
        "uses TestCase.assertHasAttr (3.14)", before(3, 14)
    ),
    "test.test_json.test_decode.*.test_array_hook": Entry(
        "json's `array_hook` argument (3.15)", before(3, 15)
    ),
    "test.test_pprint.QueryTestCase.test_basic_line_wrap": Entry(
        "expects pprint to wrap long dict views, which it does from 3.15 (its assertion on "
        "a dict's keys, before the frozendict one, fails on 3.14 too)",
        before(3, 15),
    ),
    "test.test_pprint.QueryTestCase.test_expand_frozendict": Entry(
        "pprint.pformat's `expand` argument (3.15)", before(3, 15)
    ),
    "test.test_types.MappingProxyTests.test_richcompare_frozendict": Entry(
        "expects the ordering error to name 'mappingproxy', which MappingProxyType does "
        "from 3.15 (before, the wrapped mapping's error shows)",
        before(3, 15),
    ),
}


_MATCHED_KEYS: set[str] = set()  # table keys that named a selected test


def _lookup(table: dict[str, Entry], test_id: str) -> Entry | None:
    module, _, method = test_id.rpartition(".")
    module = module.rpartition(".")[0]
    for key in (test_id, f"{module}.*.{method}"):
        entry = table.get(key)
        if entry is not None:
            _MATCHED_KEYS.add(key)
            if entry.applies():
                return entry
    return None


def _stale_keys(imported: set[str]) -> list[str]:
    """Table keys of imported modules that named no selected test."""
    stale = []
    for table in (DEVIATIONS, KNOWN_BUGS, NEEDS_PYTHON):
        for key in table:
            module = key.rsplit(".", 2)[0]
            if module in imported and key not in _MATCHED_KEYS:
                stale.append(key)
    return stale


class _BindingLoader(importlib.machinery.SourceFileLoader):
    """Executes a module of 3.15's test package with ``frozendict`` bound."""

    def exec_module(self, module):
        module.frozendict = frozenmap.frozendict
        super().exec_module(module)


class _MissingHelper:
    """Stands in for a ``test.support`` helper that only 3.15's has.

    As a decorator (directly or from a factory call) it skips what it
    decorates, naming the helper; any other use skips the running test.
    """

    def __init__(self, qualname: str) -> None:
        self.reason = f"needs {qualname}, which Python {PY[0]}.{PY[1]}'s test.support lacks"

    def __call__(self, *args, **kwargs):
        if (
            len(args) == 1
            and not kwargs
            and (inspect.isfunction(args[0]) or inspect.isclass(args[0]))
        ):
            return unittest.skip(self.reason)(args[0])
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise unittest.SkipTest(self.reason)

    def __enter__(self):
        raise unittest.SkipTest(self.reason)

    def __exit__(self, *exc_info):
        return False


class _OwnSupportLoader(importlib.machinery.SourceFileLoader):
    """Loads the running Python's own ``test.support`` modules.

    Its data and discovery folders point into 3.15's test tree (where they
    point when 3.15 runs its own support), and a name only 3.15's support has
    is answered by a ``_MissingHelper``.
    """

    testdir = ""

    def exec_module(self, module):
        super().exec_module(module)
        if module.__name__ == "test.support":
            module.TEST_HOME_DIR = os.path.join(self.testdir, "test")
            module.TEST_DATA_DIR = os.path.join(self.testdir, "test", "data")
            module.STDLIB_DIR = self.testdir
        if "__getattr__" in vars(module):
            return
        qualname = module.__name__

        def missing(name):
            if name.startswith("__"):
                raise AttributeError(name)
            try:  # a submodule not imported yet: from test.support import os_helper
                return importlib.import_module(f"{qualname}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{qualname}.{name}":
                    raise
            return _MissingHelper(f"{qualname}.{name}")

        module.__getattr__ = missing


class _TestPackageFinder(importlib.abc.MetaPathFinder):
    """Finds ``test`` and ``test.*`` in TESTDIR, ``test.support`` in the
    running Python's own stdlib when ``own_support`` names it."""

    def __init__(self, testdir: str, own_support: str | None) -> None:
        self.testdir = testdir
        self.own_support = own_support

    def find_spec(self, name, path=None, target=None):
        if name != "test" and not name.startswith("test."):
            return None
        loader_type: type = _BindingLoader
        if name == "test":
            path = [self.testdir]
        elif self.own_support and (name == "test.support" or name.startswith("test.support.")):
            loader_type = _OwnSupportLoader
            if name == "test.support":
                path = [os.path.dirname(self.own_support)]
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = loader_type(spec.loader.name, spec.loader.path)
            spec.loader.testdir = self.testdir
        return spec


def _own_test_support() -> str | None:
    """The running interpreter's own test/support folder, or None."""
    folder = os.path.join(sysconfig.get_paths()["stdlib"], "test", "support")
    return folder if os.path.isfile(os.path.join(folder, "__init__.py")) else None


def _iter_tests(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _iter_tests(item)
        else:
            yield item


def _names_frozendict(obj) -> bool:
    """Does obj's code use the name ``frozendict`` (not in a string or comment)?"""
    try:
        source = inspect.getsource(obj)
    except (OSError, TypeError):
        return False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    return any(tok.type == tokenize.NAME and tok.string == "frozendict" for tok in tokens)


def _class_uses_frozendict(cls) -> bool:
    for klass in cls.__mro__:
        if klass.__module__.startswith("unittest") or klass is object:
            continue
        if "FrozenDict" in klass.__name__:
            return True
        for attr, value in vars(klass).items():
            if attr.startswith("test"):
                continue
            if value is frozenmap.frozendict:
                return True
            if inspect.isfunction(value) and _names_frozendict(value):
                return True
    return False


def _is_frozendict_test(test) -> bool:
    method = getattr(type(test), getattr(test, "_testMethodName", ""), None)
    if method is None:
        return False
    return _names_frozendict(method) or _class_uses_frozendict(type(test))


def _mark(test, how: str, entry: Entry) -> None:
    """Make the test an expected failure ("xfail") or a skip, with entry's reason."""
    bound = getattr(test, test._testMethodName)
    if how == "skip":
        replacement = unittest.skip(entry.reason)(bound)
    else:

        def replacement():
            return bound()

        replacement.__unittest_expecting_failure__ = True
    setattr(test, test._testMethodName, replacement)


def _prepare(test) -> str:
    """Apply the tables to one selected test; say which table applied."""
    test_id = test.id()
    entry = _lookup(NEEDS_PYTHON, test_id)
    if entry is not None:
        _mark(test, "skip", entry)
        return "needs-python"
    for kind, table in (("deviation", DEVIATIONS), ("bug", KNOWN_BUGS)):
        entry = _lookup(table, test_id)
        if entry is not None:
            _mark(test, "xfail", entry)
            return kind
    # pickletester gates its frozendict tests on the Python the pickles are
    # exchanged with (py_version, the running one here) having frozendict;
    # here the test module's binding supplies it on every Python.
    if getattr(test, "py_version", None) == sys.version_info and PY < (3, 15):
        test.py_version = (3, 15)
    return "plain"


class _Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed: list = []

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed.append(test)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the selected tests, run nothing")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("testdir")
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args(argv)
    testdir = os.path.abspath(args.testdir)
    if not os.path.isfile(os.path.join(testdir, "test", "test_dict.py")):
        parser.error(f"{testdir} holds no CPython test package (test/test_dict.py)")
    own_support = _own_test_support() if PY < (3, 15) else None
    if PY < (3, 15) and own_support is None:
        print(f"Python {PY[0]}.{PY[1]} has no test.support of its own: nothing run")
        return 1
    sys.meta_path.insert(0, _TestPackageFinder(testdir, own_support))
    version = f"{PY[0]}.{PY[1]}"
    print(f"== CPython 3.15's frozendict tests on Python {version}, frozenmap core {CORE}")

    loader = unittest.TestLoader()
    selected = unittest.TestSuite()
    kinds: dict[str, str] = {}
    problems = 0
    module_skips = []
    imported: set[str] = set()
    for name in args.modules or MODULES:
        entry = MODULE_NEEDS.get(name)
        if entry is not None and entry.applies():
            module_skips.append(f"{name}: {entry.reason}")
            continue
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # an unrecorded import failure is a failure
            print(f"FAIL: {name} cannot be imported: {type(exc).__name__}: {exc}")
            problems += 1
            continue
        imported.add(name)
        tests = [
            t for t in _iter_tests(loader.loadTestsFromModule(module)) if _is_frozendict_test(t)
        ]
        for test in tests:
            kinds[test.id()] = _prepare(test)
            if args.list:
                print(f"    {test.id()}  [{kinds[test.id()]}]")
        selected.addTests(tests)
    for key in _stale_keys(imported):
        print(f"FAIL: the entry {key} in {__file__} names no selected test")
        problems += 1
    if args.list:
        return 0

    stream = sys.stderr if args.verbose else io.StringIO()
    runner = unittest.TextTestRunner(stream=stream, verbosity=2, resultclass=_Result)
    result = runner.run(selected)

    failed: dict[str, str] = {}  # test id -> the last line of its first failure
    for test, trace in result.failures + result.errors:
        test_id = getattr(test, "test_case", test).id()  # a failed subtest names its test
        if test_id not in failed:
            failed[test_id] = trace.strip().splitlines()[-1]
            print(f"FAIL: {test.id()}: {failed[test_id]}")
            if args.verbose:
                print(trace)
    for test in result.unexpectedSuccesses:
        failed[test.id()] = "passes"
        print(f"FAIL: {test.id()} passes: drop its {kinds[test.id()]} entry in {__file__}")
    counts = collections.Counter(passed=len(result.passed))
    for test, _ in result.expectedFailures:
        counts["deviations" if kinds[test.id()] == "deviation" else "known bugs"] += 1
    for test, reason in result.skipped:
        counts["skipped"] += 1
        print(f"   skipped: {test.id()}: {reason}")
    for line in module_skips:
        print(f"   module not run on {version}: {line}")
    counts["failed"] = len(failed) + problems
    order = ("passed", "deviations", "known bugs", "skipped", "failed")
    summary = ", ".join(f"{counts[what]} {what}" for what in order)
    print(f"== Python {version}, core {CORE}: {selected.countTestCases()} tests: {summary}")
    return 0 if counts["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
