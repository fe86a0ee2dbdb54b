"""A wrong call (a wrong count of positional arguments, an unexpected or
duplicated keyword, a missing argument) says the same on both cores.

Two wordings, one per kind of method:

- What frozendict shares with PEP 814's builtin (the constructor, its six
  public methods ``copy``, ``fromkeys``, ``get``, ``items``, ``keys``,
  ``values``, and ``__reversed__``, ``__class_getitem__``, ``__getnewargs__``,
  ``__reduce__``, ``__reduce_ex__``: docs/pep814.md rows C2 and L6) words a
  wrong call as the builtin does (``get expected at most 2 arguments, got
  3``), so code moving between the builtin and frozenmap sees the same text.
- Every other method, the Evolver's, the views' and the iterators' included,
  words it as Python words a wrong call of a Python function, naming the
  method and the parameter (``frozendict.set() missing 1 required positional
  argument: 'value'``): the pure core's methods are Python functions, and the
  C core hands a wrong call to ``frozenmap._cold.wrong_call``, which calls a
  function with the C method's text signature (generated from the pure
  twin's) and qualified name, so the text is Python's by construction, on
  every Python version.

The comparison walks every method each core defines (the C core's method
descriptors: a method added to the C core is compared without being listed
here) over a spread of wrong calls.  The special methods that are C slots
(``__len__``, ``__getitem__``, ``__eq__``, ``__next__``, ...) are left out:
``len(fd)`` or ``fd[k]`` cannot be called wrongly, and a method of the C
core standing in for a slot's wrapper would make every subclass's slot
dispatch through Python (``'a' in s`` for a dict subclass, whose
``__contains__`` is such a method, takes twice as long as on a dict).
"""

import builtins
import inspect
from types import ClassMethodDescriptorType, MethodDescriptorType

import pytest
from conftest import available_cores

CORES = {core.name: core for core in available_cores()}
needs_both = pytest.mark.skipif(
    not {"c", "python"} <= set(CORES), reason="compares the C core with the pure core"
)


#: frozendict's methods worded as the builtin words them.  (Called on a
#: subclass instance, CPython names such a method after the subclass when
#: it is called through a bound method object, ``m = s.copy; m(1)``, and
#: after frozendict when called directly, ``s.copy(1)``: the pure core says
#: the latter.  A class method is named after the class it is bound to.)
BUILTINS_METHODS = {
    "copy", "fromkeys", "get", "items", "keys", "values",
    "__reversed__", "__class_getitem__", "__getnewargs__", "__reduce__", "__reduce_ex__",
}  # fmt: skip


def _targets(core):
    """{label: a function making a fresh object whose methods are called}."""
    fd, Evolver = core.frozendict, core.Evolver

    class Config(fd):
        pass

    class Draft(Evolver):
        pass

    def version():
        return fd(a=1, b=2)

    def evolver():
        return version().evolve()

    return {
        "frozendict": version,
        "Evolver": evolver,
        "frozendict class": lambda: fd,
        "Evolver class": lambda: Evolver,
        "frozendict subclass": lambda: Config(a=1),
        "frozendict subclass class": lambda: Config,
        "Evolver subclass": lambda: Draft({"a": 1}),
        "Evolver subclass class": lambda: Draft,
        "keys view": lambda: version().keys(),
        "values view": lambda: version().values(),
        "items view": lambda: version().items(),
        "Evolver's keys view": lambda: evolver().keys(),
        "iterator": lambda: iter(version()),
        "reversed items iterator": lambda: reversed(version().items()),
        "Evolver's iterator": lambda: iter(evolver()),
    }


def _c_methods(target):
    """The names of the C core's own methods on ``target`` (an instance, or a
    class for its class methods): the callables whose wrong calls the C
    core words itself (slots are wrappers, not method descriptors)."""
    cls = target if isinstance(target, type) else type(target)
    names = set()
    for name in dir(cls):
        if name.startswith("_") and not name.startswith("__"):
            continue  # (private: _check, _dump, _node_ids, _from_iterable)
        found = inspect.getattr_static(cls, name)
        if isinstance(target, type) and type(found) is not ClassMethodDescriptorType:
            continue  # on a class, only its class methods (an unbound method checks self)
        if type(found) in (MethodDescriptorType, ClassMethodDescriptorType):
            if found.__objclass__ is not object:  # (object's own are not the core's)
                names.add(name)
    return names


def _parameters(method):
    """The names of the parameters a call could pass by keyword (or not)."""
    try:
        return [p for p in inspect.signature(method).parameters if p not in ("self", "cls")]
    except (TypeError, ValueError):
        return []


def _calls(parameters):
    """A spread of calls, ``(args, kwargs)``: every count of positional
    arguments up to two more than the method takes, an unknown keyword, and
    each parameter by keyword, alone and after positional arguments."""
    calls = [((1,) * n, {}) for n in range(len(parameters) + 3)]
    calls += [((), {"zz": 1}), ((1,), {"zz": 1}), ((1, 2), {"zz": 1})]
    for name in parameters:
        calls += [((), {name: 1}), ((1,), {name: 1}), ((1, 2), {name: 1})]
    return calls


def _outcome(method, args, kwargs):
    """What the call does: its TypeError's message, another exception's type,
    or "returns"."""
    try:
        method(*args, **kwargs)
    except TypeError as exc:
        return "TypeError: %s" % exc
    except Exception as exc:  # (what a call that binds does is not compared here)
        return type(exc).__name__
    return "returns"


def _methods_of_both(label):
    """``[(name, parameters)]`` for the methods the C core defines on the
    target ``label``."""
    c_target = _targets(CORES["c"])[label]()
    py_target = _targets(CORES["python"])[label]()
    return [(name, _parameters(getattr(py_target, name))) for name in sorted(_c_methods(c_target))]


def _compare(label):
    """``[(call, C's outcome, the pure core's)]`` where they differ."""
    made = {name: _targets(CORES[name])[label] for name in ("c", "python")}
    differences = []
    for name, parameters in _methods_of_both(label):
        if label == "frozendict subclass" and name in BUILTINS_METHODS:
            continue  # (see BUILTINS_METHODS)
        for args, kwargs in _calls(parameters):
            seen = {}
            for core_name, make in made.items():
                method = getattr(make(), name, None)
                seen[core_name] = "absent" if method is None else _outcome(method, args, kwargs)
            if seen["c"] != seen["python"]:
                call = "%s.%s(*%r, **%r)" % (label, name, args, kwargs)
                differences.append((call, seen["c"], seen["python"]))
    return differences


LABELS = list(_targets(CORES[next(iter(CORES))]))


@needs_both
@pytest.mark.parametrize("label", LABELS)
def test_every_wrong_call_says_the_same_on_both_cores(label):
    assert _compare(label) == []


CONSTRUCTOR_CALLS = [
    ((), {}),
    ((1,), {}),
    (({}, {}), {}),
    (({}, {}, {}), {"zz": 1}),
    ((), {"zz": 1}),
    (({},), {"source": 1}),
    ((), {"source": {}, "zz": 1}),
]


@needs_both
@pytest.mark.parametrize("args, kwargs", CONSTRUCTOR_CALLS)
def test_the_constructors_say_the_same_on_both_cores(args, kwargs):
    """``frozendict(...)``, ``Evolver(...)`` and an Evolver's ``__init__``."""
    for make in (
        lambda core: core.frozendict,
        lambda core: core.Evolver,
        lambda core: core.Evolver().__init__,
    ):
        c, py = (_outcome(make(CORES[name]), args, kwargs) for name in ("c", "python"))
        assert c == py


@needs_both
def test_the_comparison_covers_the_methods_it_must():
    """The walk finds what the C core defines (so a method added there is
    compared), the class methods, and not the slots."""
    names = {label: {n for n, _ in _methods_of_both(label)} for label in LABELS}
    assert {"set", "delete", "get", "copy", "keys", "diff", "get_in", "update_in"} <= names[
        "frozendict"
    ]
    assert {"__replace__", "__reduce_ex__", "__deepcopy__", "__reversed__"} <= names["frozendict"]
    assert {"pop", "setdefault", "update", "popitem", "freeze", "keys"} <= names["Evolver"]
    assert names["frozendict class"] == {"fromkeys", "__class_getitem__"}
    assert names["frozendict subclass class"] == {"fromkeys", "__class_getitem__"}
    assert names["frozendict subclass"] == names["frozendict"]
    assert names["Evolver class"] == {"__class_getitem__"}
    assert names["keys view"] == {"isdisjoint", "__reversed__", "__reduce__"}
    assert names["values view"] == {"__reversed__", "__reduce__"}
    assert names["iterator"] == {"__length_hint__", "__reduce__"}
    assert not {"__len__", "__getitem__", "__eq__", "__contains__"} & names["frozendict"]


@needs_both
def test_a_wrong_call_the_c_core_words_alone_is_a_difference(monkeypatch):
    """The comparison can fail: the C core's message from anywhere else than
    Python's wording is seen."""
    from frozenmap import _cold

    def worded_by_hand(name, bound, args, kwargs):
        raise TypeError("%s expected other arguments" % name)

    monkeypatch.setattr(_cold, "wrong_call", worded_by_hand)
    differences = _compare("frozendict")
    expected = "TypeError: frozendict.set() missing 1 required positional argument: 'value'"
    assert ("frozendict.set(*(1,), **{})", "TypeError: set expected other arguments", expected) in (
        differences
    )


# --- the wording, pinned: a change is deliberate --------------------------------


PYTHONS_WORDING = [
    ("set", (1,), {}, "frozendict.set() missing 1 required positional argument: 'value'"),
    ("set", (1, 2, 3), {}, "frozendict.set() takes 3 positional arguments but 4 were given"),
    (
        "set",
        (),
        {"key": 1, "value": 2},
        "frozendict.set() got some positional-only arguments passed as keyword arguments: "
        "'key, value'",
    ),
    ("delete", (), {}, "frozendict.delete() missing 1 required positional argument: 'key'"),
    ("evolve", (1,), {}, "frozendict.evolve() takes 1 positional argument but 2 were given"),
    ("diff", ({},), {"zz": 1}, "frozendict.diff() got an unexpected keyword argument 'zz'"),
    (
        "get_in",
        (["a"], 1),
        {"default": 2},
        "frozendict.get_in() got multiple values for argument 'default'",
    ),
    (
        "__replace__",
        (1,),
        {},
        "frozendict.__replace__() takes 1 positional argument but 2 were given",
    ),
]


@pytest.mark.parametrize("name, args, kwargs, message", PYTHONS_WORDING)
def test_frozenmaps_own_methods_word_it_as_python_does(core, name, args, kwargs, message):
    with pytest.raises(TypeError) as info:
        getattr(core.frozendict(a=1), name)(*args, **kwargs)
    assert str(info.value) == message


def test_the_evolver_words_it_as_python_does(core):
    e = core.frozendict(a=1).evolve()
    with pytest.raises(TypeError) as info:
        e.pop()
    assert str(info.value) == "Evolver.pop() missing 1 required positional argument: 'key'"
    with pytest.raises(TypeError) as info:
        e.update({}, {})
    assert str(info.value) == (
        "Evolver.update() takes from 1 to 2 positional arguments but 3 were given"
    )
    with pytest.raises(TypeError) as info:
        e.keys(1)
    assert str(info.value) == "Evolver.keys() takes 1 positional argument but 2 were given"
    with pytest.raises(TypeError) as info:
        core.Evolver.__class_getitem__()
    assert str(info.value) == (
        "Evolver.__class_getitem__() missing 1 required positional argument: 'item'"
    )


def test_views_and_iterators_word_it_as_python_does(core):
    keys = core.frozendict(a=1).keys()
    with pytest.raises(TypeError) as info:
        keys.isdisjoint()
    assert str(info.value) == (
        "frozendict_keys.isdisjoint() missing 1 required positional argument: 'other'"
    )
    with pytest.raises(TypeError) as info:
        iter(keys).__length_hint__(1)
    assert str(info.value) == (
        "frozendict_iterator.__length_hint__() takes 1 positional argument but 2 were given"
    )


BUILTINS_WORDING = [
    ("get", (), {}, "get expected at least 1 argument, got 0"),
    ("get", (1, 2, 3), {}, "get expected at most 2 arguments, got 3"),
    ("get", (1,), {"zz": 1}, "frozendict.get() takes no keyword arguments"),
    ("copy", (1,), {}, "frozendict.copy() takes no arguments (1 given)"),
    ("keys", (), {"zz": 1}, "frozendict.keys() takes no keyword arguments"),
    ("items", (1, 2), {}, "frozendict.items() takes no arguments (2 given)"),
    ("__reversed__", (1,), {}, "frozendict.__reversed__() takes no arguments (1 given)"),
    ("__reduce_ex__", (), {}, "frozendict.__reduce_ex__() takes exactly one argument (0 given)"),
    ("__getnewargs__", (), {"zz": 1}, "frozendict.__getnewargs__() takes no keyword arguments"),
    (
        "__class_getitem__",
        (1, 2),
        {},
        "frozendict.__class_getitem__() takes exactly one argument (2 given)",
    ),
]


@pytest.mark.parametrize("name, args, kwargs, message", BUILTINS_WORDING)
def test_the_builtins_methods_word_it_as_the_builtin_does(core, name, args, kwargs, message):
    """docs/pep814.md row L6."""
    with pytest.raises(TypeError) as info:
        getattr(core.frozendict(a=1), name)(*args, **kwargs)
    assert str(info.value) == message


def test_fromkeys_and_the_constructor_word_it_as_the_builtin_does(core):
    with pytest.raises(TypeError) as info:
        core.frozendict.fromkeys()
    assert str(info.value) == "fromkeys expected at least 1 argument, got 0"

    class Config(core.frozendict):
        pass

    with pytest.raises(TypeError) as info:
        Config.fromkeys("ab", zz=1)  # (a class method: named after its class)
    assert str(info.value) == (
        "test_fromkeys_and_the_constructor_word_it_as_the_builtin_does.<locals>.Config"
        ".fromkeys() takes no keyword arguments"
    )
    with pytest.raises(TypeError) as info:
        core.frozendict({}, {})
    assert str(info.value) == "frozendict expected at most 1 argument, got 2"


BUILTIN = getattr(builtins, "frozendict", None)


@pytest.mark.skipif(BUILTIN is None, reason="needs the builtin frozendict (CPython 3.15+)")
@pytest.mark.parametrize("name, args, kwargs, message", BUILTINS_WORDING)
def test_the_pinned_builtin_wording_is_the_builtins(name, args, kwargs, message):
    with pytest.raises(TypeError) as info:
        getattr(BUILTIN(a=1), name)(*args, **kwargs)
    assert str(info.value) == message
