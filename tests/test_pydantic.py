"""pydantic v2 models, frozen dataclasses and attrs classes holding frozendicts."""

import collections.abc
import dataclasses
import json
import types

import pytest

pydantic = pytest.importorskip("pydantic")
attr = pytest.importorskip("attr")


def model_for(fd):
    class Settings(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(frozen=True)

        limits: fd[str, int]
        nested: fd[str, fd[str, int]] = fd()
        anything: fd = fd()

    return Settings


def test_the_package_does_not_import_pydantic():
    from fault_helpers import run_python

    proc = run_python("import sys, frozenmap; print('pydantic' in sys.modules)")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_validates_from_any_mapping_into_a_frozendict(fd):
    Settings = model_for(fd)
    for source in ({"a": 1}, fd(a=1), types.MappingProxyType({"a": 1})):
        model = Settings(limits=source)
        assert type(model.limits) is fd and model.limits == {"a": 1}
    model = Settings(limits={"b": "2", "a": 1}, nested={"x": {"y": "3"}})
    assert list(model.limits.items()) == [("b", 2), ("a", 1)]
    assert type(model.nested["x"]) is fd and model.nested == {"x": {"y": 3}}


def test_keys_and_values_are_validated(fd):
    Settings = model_for(fd)
    with pytest.raises(pydantic.ValidationError) as info:
        Settings(limits={"a": "not a number"})
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        (("limits", "a"), "int_parsing")
    ]
    with pytest.raises(pydantic.ValidationError) as info:
        Settings(limits={1: 1})
    assert info.value.errors()[0]["loc"] == ("limits", 1, "[key]")
    with pytest.raises(pydantic.ValidationError):
        Settings(limits=5)


def test_strict_mode_takes_a_frozendict_or_a_dict_but_not_other_mappings(fd):
    Settings = model_for(fd)
    assert Settings.model_validate({"limits": fd(a=1)}, strict=True).limits == {"a": 1}
    assert Settings.model_validate({"limits": {"a": 1}}, strict=True).limits == {"a": 1}
    with pytest.raises(pydantic.ValidationError):
        Settings.model_validate({"limits": types.MappingProxyType({"a": 1})}, strict=True)
    with pytest.raises(pydantic.ValidationError):
        Settings.model_validate({"limits": fd(a="1")}, strict=True)


def test_dumps_to_a_dict_and_a_json_object(fd):
    Settings = model_for(fd)
    model = Settings(limits={"a": 1}, nested={"x": {"y": 2}}, anything={"k": (1, 2)})
    dumped = model.model_dump()
    assert dumped == {"limits": {"a": 1}, "nested": {"x": {"y": 2}}, "anything": {"k": (1, 2)}}
    assert type(dumped["limits"]) is dict and type(dumped["nested"]["x"]) is dict
    text = model.model_dump_json()
    assert json.loads(text) == {
        "limits": {"a": 1},
        "nested": {"x": {"y": 2}},
        "anything": {"k": [1, 2]},
    }
    back = Settings.model_validate_json(text)
    assert back.limits == model.limits and type(back.nested["x"]) is fd


def test_json_schema_is_an_object(fd):
    schema = model_for(fd).model_json_schema()
    props = schema["properties"]
    assert props["limits"]["type"] == "object"
    assert props["limits"]["additionalProperties"] == {"type": "integer"}
    assert props["nested"]["additionalProperties"] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert props["anything"]["type"] == "object"
    assert schema["required"] == ["limits"]


def test_frozen_model_is_hashable_and_equal_by_value(fd):
    Settings = model_for(fd)
    one, two = Settings(limits={"a": 1, "b": 2}), Settings(limits={"b": 2, "a": 1})
    assert one == two and hash(one) == hash(two)
    assert {one: "ok"}[two] == "ok"


def test_type_adapter_and_subclass(fd):
    class Limits(fd):
        pass

    adapter = pydantic.TypeAdapter(Limits[str, int])
    value = adapter.validate_python({"a": "1"})
    assert type(value) is Limits and value == {"a": 1}
    assert adapter.dump_json(value) == b'{"a":1}'


# --- dataclasses and attrs (the docs' examples) ------------------------------------


def test_frozen_dataclass_holding_frozendicts_is_hashable(fd):
    @dataclasses.dataclass(frozen=True)
    class Route:
        path: str
        headers: fd = dataclasses.field(default_factory=fd)

    one = Route("/", fd(accept="json"))
    assert hash(one) == hash(Route("/", fd(accept="json")))
    assert one == Route("/", fd(accept="json")) and one != Route("/", fd())
    changed = dataclasses.replace(one, headers=one.headers.set("accept", "xml"))
    assert one.headers["accept"] == "json" and changed.headers["accept"] == "xml"


def test_attrs_class_holding_frozendicts_is_hashable(fd):
    @attr.frozen
    class Route:
        path: str
        headers: fd = attr.field(factory=fd, converter=fd)

    one = Route("/", {"accept": "json"})
    assert type(one.headers) is fd
    assert hash(one) == hash(Route("/", fd(accept="json")))
    assert attr.evolve(one, headers={"x": "1"}).headers == fd(x="1")
    with pytest.raises(attr.exceptions.FrozenInstanceError):
        one.path = "/other"


def test_pydantic_dataclass(fd):
    @pydantic.dataclasses.dataclass(frozen=True)
    class Point:
        tags: fd[str, int]

    point = Point(tags={"a": "1"})
    assert (
        type(point.tags) is fd
        and point.tags == {"a": 1}
        and hash(point) == hash(Point(tags={"a": 1}))
    )


def test_lax_mode_takes_any_mapping(fd):
    class Proxy(collections.abc.Mapping):
        def __init__(self, data):
            self.data = data

        def __getitem__(self, key):
            return self.data[key]

        def __iter__(self):
            return iter(self.data)

        def __len__(self):
            return len(self.data)

    Settings = model_for(fd)
    for source in (types.MappingProxyType({"a": "1"}), Proxy({"a": "1"})):
        limits = Settings.model_validate({"limits": source}).limits
        assert type(limits) is fd and limits == {"a": 1}
    with pytest.raises(pydantic.ValidationError):
        Settings.model_validate({"limits": Proxy({"a": 1})}, strict=True)


def test_strict_config_takes_a_dict(fd):
    class Strict(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(strict=True)
        limits: fd[str, int]

    assert Strict(limits={"a": 1}).limits == fd(a=1)
    assert Strict(limits=fd(a=1)).limits == fd(a=1)
    with pytest.raises(pydantic.ValidationError):
        Strict(limits=types.MappingProxyType({"a": 1}))
