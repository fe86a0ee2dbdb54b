"""Serializers: json_default for json/orjson/msgspec, thaw, and decoding into frozendicts.

The recipes here are the ones docs/integrations.md shows.  Every test runs on
both cores.
"""

import builtins
import json
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frozenmap import json_default, thaw

orjson = pytest.importorskip("orjson")
msgspec = pytest.importorskip("msgspec")

# JSON-like data: the plain form a serializer sees after thawing.
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5)
json_data = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def freeze(fd, obj):
    """The frozen form of JSON-like data: dict -> frozendict, list -> tuple."""
    if isinstance(obj, dict):
        return fd({key: freeze(fd, value) for key, value in obj.items()})
    if isinstance(obj, list):
        return tuple(freeze(fd, item) for item in obj)
    return obj


def frozen_pairs(fd):
    """``json.loads`` hook: every JSON object becomes a frozendict."""
    return fd


# --- json ------------------------------------------------------------------------


def test_json_default_writes_frozendicts_anywhere_as_objects(fd):
    data = {"state": fd(users=(fd(name="ann", tags=("a", "b")),), count=2), "list": [fd()]}
    assert json.dumps(data, default=json_default) == (
        '{"state": {"users": [{"name": "ann", "tags": ["a", "b"]}], "count": 2}, "list": [{}]}'
    )
    assert json.dumps(fd(a=1), default=json_default, indent=1) == '{\n "a": 1\n}'


def test_json_default_keys_are_written_as_for_a_dict(fd):
    keys = {1: "int", 2.5: "float", False: "bool", None: "none", "s": "str"}
    assert json.dumps(fd(keys), default=json_default) == json.dumps(keys)
    assert json.dumps(fd(b=1, a=2), default=json_default, sort_keys=True) == '{"a": 2, "b": 1}'
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None"):
        json.dumps(fd({(1, 2): "tuple"}), default=json_default)
    assert json.dumps(fd({(1, 2): 0, "a": 1}), default=json_default, skipkeys=True) == '{"a": 1}'


def test_json_default_rejects_other_objects_as_json_does(fd):
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        json.dumps({"x": object()}, default=json_default)
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        json.dumps(fd(s={1}), default=json_default)


@given(json_data)
def test_json_round_trip_with_object_pairs_hook(core, data):
    fd = core.frozendict
    frozen = freeze(fd, data)
    text = json.dumps(frozen, default=json_default)
    assert text == json.dumps(data)
    back = json.loads(text, object_pairs_hook=frozen_pairs(fd))
    # Lists come back as lists; every object as an exact frozendict.
    assert back == json.loads(text)
    assert json.dumps(back, default=json_default) == text


def test_json_loads_object_pairs_hook_keeps_order_and_last_duplicate(fd):
    back = json.loads('{"b": 1, "a": {"x": [1, {"y": 2}]}, "b": 3}', object_pairs_hook=fd)
    assert type(back) is fd and list(back) == ["b", "a"] and back["b"] == 3
    assert type(back["a"]["x"][1]) is fd


# --- orjson and msgspec ------------------------------------------------------------


@given(json_data)
def test_orjson_default_round_trip(core, data):
    fd = core.frozendict
    frozen = freeze(fd, data)
    assert orjson.dumps(frozen, default=json_default) == orjson.dumps(data)


def test_orjson_nested_and_options(fd):
    data = fd(b=fd(c=(1, 2)), a=None)
    assert orjson.dumps(data, default=json_default) == b'{"b":{"c":[1,2]},"a":null}'
    assert orjson.dumps(data, default=json_default, option=orjson.OPT_SORT_KEYS) == (
        b'{"a":null,"b":{"c":[1,2]}}'
    )


@given(json_data)
def test_msgspec_enc_hook_round_trip(core, data):
    fd = core.frozendict
    frozen = freeze(fd, data)
    assert msgspec.json.encode(frozen, enc_hook=json_default) == msgspec.json.encode(data)


def msgspec_dec_hook(fd):
    """The docs' recipe: decode ``frozendict[K, V]`` (nested too) with msgspec."""

    def dec_hook(tp, obj):
        origin = typing.get_origin(tp) or tp
        if isinstance(origin, type) and issubclass(origin, fd):
            args = typing.get_args(tp)
            return origin(msgspec.convert(obj, dict[args] if args else dict, dec_hook=dec_hook))
        raise NotImplementedError("no decoder for %r" % (tp,))

    return dec_hook


def test_msgspec_dec_hook_decodes_into_frozendicts(fd):
    hook = msgspec_dec_hook(fd)
    raw = b'{"db": {"port": 5432, "pool": 4}, "cache": {"port": 6379}}'
    config = msgspec.json.decode(raw, type=fd[str, fd[str, int]], dec_hook=hook)
    assert type(config) is fd and type(config["db"]) is fd
    assert config == {"db": {"port": 5432, "pool": 4}, "cache": {"port": 6379}}
    assert msgspec.json.encode(config, enc_hook=json_default) == raw.replace(b" ", b"")
    # Values are validated against the declared type.
    with pytest.raises(msgspec.ValidationError, match="Expected `int`, got `str`"):
        msgspec.json.decode(b'{"db": {"port": "x"}}', type=fd[str, fd[str, int]], dec_hook=hook)
    # Inside a Struct, as a field type.

    class Settings(msgspec.Struct, frozen=True):
        name: str
        limits: fd[str, int]

    settings = msgspec.json.decode(
        b'{"name": "n", "limits": {"a": 1}}', type=Settings, dec_hook=hook
    )
    assert type(settings.limits) is fd and hash(settings) == hash(Settings("n", fd(a=1)))


# --- thaw ------------------------------------------------------------------------


def test_thaw_is_the_recursive_inverse_of_freezing(fd):
    frozen = fd(a=(1, fd(b=frozenset({2}))), c=fd(), d="text")
    plain = thaw(frozen)
    assert plain == {"a": [1, {"b": {2}}], "c": {}, "d": "text"}
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]["b"]) is set
    assert list(plain) == ["a", "c", "d"]


@given(json_data)
def test_thaw_undoes_freeze(core, data):
    fd = core.frozendict
    assert thaw(freeze(fd, data)) == data
    assert json.dumps(thaw(freeze(fd, data))) == json.dumps(data)


def test_thaw_shares_nothing_mutable(fd):
    inner = [1, [2]]
    source = {"list": inner, "dict": {"k": inner}, "set": {1}, "fd": fd(x=inner)}
    plain = thaw(source)
    assert plain == source

    def containers(obj, found):
        if isinstance(obj, (dict, list, set, tuple)) or type(obj) is fd:
            found.append(obj)
            items = obj.values() if isinstance(obj, dict) or type(obj) is fd else obj
            for item in items:
                containers(item, found)
        return found

    before = {id(c) for c in containers(source, [])}
    assert not before & {id(c) for c in containers(plain, [])}
    plain["list"][1].append(3)
    plain["fd"]["x"].append(4)
    assert inner == [1, [2]]


def test_thaw_keeps_keys_and_set_elements_hashable(fd):
    key = (1, fd(a=2))
    plain = thaw(fd({key: frozenset({key})}))
    assert plain == {key: {key}}
    assert next(iter(plain)) is key


def test_thaw_keeps_shared_parts_shared_and_survives_cycles(fd):
    shared = (1, 2)
    plain = thaw(fd(a=shared, b=shared))
    assert plain["a"] is plain["b"]
    loop = []
    cyclic = fd(loop=loop)
    loop.append(cyclic)
    out = thaw(cyclic)
    assert out["loop"][0] is out


def test_thaw_leaves_other_objects_alone(fd):
    marker = object()
    assert thaw(marker) is marker
    assert thaw(5) == 5 and thaw("s") == "s" and thaw(None) is None
    assert thaw(fd(m=marker))["m"] is marker


@pytest.mark.skipif(not hasattr(builtins, "frozendict"), reason="no builtin frozendict before 3.15")
def test_builtin_frozendict_is_handled_too(fd):
    builtin = builtins.frozendict(a=builtins.frozendict(b=1))
    assert json.dumps(fd(x=builtin), default=json_default) == '{"x": {"a": {"b": 1}}}'
    assert thaw(fd(x=builtin)) == {"x": {"a": {"b": 1}}}
