"""The operation registry (tests/operations.py) is complete and wired to every engine.

A public attribute of frozendict or Evolver (on either core, found by
introspection) or a public method of Diff that no registry entry covers and
that ``NOT_OPERATIONS`` does not exclude with a reason fails here: a new
operation cannot skip the engines by being forgotten.  The other tests check
that the entries are well formed and that each engine runs exactly the
entries that name it.
"""

import operations as registry
import pytest

_CLASS_METADATA = {
    "__doc__", "__module__", "__slots__", "__annotations__", "__orig_bases__",
    "__firstlineno__", "__static_attributes__",  # (set by the compiler, 3.13+)
    "__annotate__", "__annotate_func__", "__annotations_cache__",  # (3.14+)
}  # fmt: skip
"""What a class body gets without defining anything."""


def _public(cls):
    """The public attributes ``cls`` defines itself: no ``_private`` names,
    but dunders and protocol hooks such as ``_repr_pretty_``."""
    return {
        name
        for name, value in vars(cls).items()
        if (not name.startswith("_") or name.endswith("_"))
        and name not in _CLASS_METADATA
        and value is not None  # (__hash__ = None: unhashable, not an operation)
    }


def _covered(owner):
    names = set()
    for entry in registry.OPERATIONS:
        for name in entry.covers:
            if "." in name:
                cls, _, attr = name.partition(".")
                if cls == owner:
                    names.add(attr)
            elif (entry.on if entry.on != "type" else "frozendict") == owner:
                names.add(name)
    return names


@pytest.mark.parametrize("owner", ["frozendict", "Evolver"])
def test_every_public_attribute_is_in_the_registry_or_excluded_with_a_reason(core, owner):
    cls = getattr(core, owner)
    missing = _public(cls) - _covered(owner) - set(registry.NOT_OPERATIONS)
    assert not missing, "add to tests/operations.py (or to NOT_OPERATIONS, with why): %s" % sorted(
        missing
    )


def _diff_exclusions():
    return {name.partition(".")[2] for name in registry.NOT_OPERATIONS if name.startswith("Diff.")}


def test_every_public_method_of_diff_is_in_the_registry_or_excluded_with_a_reason(core):
    methods = {
        name
        for name, value in vars(core.Diff).items()
        if not name.startswith("_") and callable(value)
    }
    missing = methods - _covered("Diff") - _diff_exclusions()
    assert not missing, (
        "add to tests/operations.py (or to NOT_OPERATIONS as Diff.name, with why): %s"
        % (sorted(missing))
    )
    assert _diff_exclusions() <= methods, "NOT_OPERATIONS excludes Diff methods that do not exist"
    assert {"apply", "invert"} <= _covered("Diff")


def test_required_operations_are_in_the_registry():
    for name in ("frozendict.merge_with", "frozendict.set_in", "Diff.apply"):
        assert name in registry.BY_NAME


def test_exclusions_are_reasoned_and_not_also_covered():
    covered = _covered("frozendict") | _covered("Evolver") | {"Diff." + n for n in _covered("Diff")}
    for name, reason in registry.NOT_OPERATIONS.items():
        assert len(reason) > 20, name
        assert name not in covered, "%s is both covered and excluded" % name


def test_entries_are_well_formed(core):
    for entry in registry.OPERATIONS:
        assert entry.on in ("frozendict", "Evolver", "type"), entry
        assert entry.engines <= registry.ENGINES, entry
        assert set(entry.args) <= set(registry.ROLES), "%s: a role not in ROLES" % entry
        assert entry.fires <= {"eq", "hash", "del"}, entry
        assert callable(entry.call) or entry.engines <= {registry.DIFFERENTIAL, registry.FUZZ}
        if registry.DIFFERENTIAL in entry.engines and entry.call is not None:
            assert entry.model is not None, "%s: the differential engine needs a model" % entry
        for name in entry.covers:
            owner, _, attr = name.rpartition(".")
            cls = getattr(core, owner or ("frozendict" if entry.on == "type" else entry.on))
            assert hasattr(cls, attr), "%s covers %s, which does not exist" % (entry, name)


def test_each_engine_runs_the_entries_that_name_it():
    import differential_engine as de
    from hostile import test_reentry_sweep

    wanted = registry.for_engine(registry.DIFFERENTIAL)
    assert de.OPS + de.EDITS == [e for e in wanted if e.on != "Evolver"] + [
        e for e in wanted if e.on == "Evolver"
    ]
    assert registry.for_engine(registry.FUZZ) == registry.for_engine(registry.DIFFERENTIAL)
    reentrant = registry.for_engine(registry.REENTRANCY)
    assert {e.name for e in reentrant if e.on == "Evolver"} <= set(test_reentry_sweep.OUTER)
    assert {e.name for e in reentrant if e.on != "Evolver"} == set(test_reentry_sweep.FD_OUTER)


def test_the_transcript_engine_runs_every_entry_it_can_call():
    import transcript_engine as te

    assert te.OPERATIONS == registry.for_engine(registry.TRANSCRIPT)
    # (the two without a call of their own are run through others: frozendict.evolve
    # through the Evolver's entries, the hostile operand by the differential engine)
    assert te.OPERATIONS == [entry for entry in registry.OPERATIONS if entry.call is not None]


def test_the_roles_are_described_and_encoded():
    used = {role for entry in registry.OPERATIONS for role in entry.args}
    assert used == set(registry.ROLES), "ROLES lists a role no entry takes, or misses one"
    for name, role in registry.ROLES.items():
        assert role.name == name and len(role.meaning) > 5, name
        assert role.field in registry.FIELDS, name
        assert (role.most > 0) == (role.field in ("pairs", "keys", "edits")), name


def test_an_engine_without_an_object_for_a_role_fails_naming_both():
    table = {role: None for role in registry.ROLES if role != "span"}
    with pytest.raises(LookupError, match="the reentrancy engine.*no object for the role.* span"):
        registry.role_table(registry.REENTRANCY, table)
    with pytest.raises(LookupError, match="unknown role.* nonsense"):
        registry.role_table(registry.REENTRANCY, dict(table, span=None, nonsense=None))
    assert registry.role_table(registry.REENTRANCY, table, besides=("span",)) is table


def test_the_cleared_matrix_runs_the_entries_that_name_it(core):
    import test_cleared_and_borrowed as cleared

    labels = set(cleared._frozendict_ops(core)) | set(cleared._evolver_ops(core))
    on_themselves = [e for e in registry.for_engine(registry.CLEARED) if e.on != "type"]
    assert {e.name for e in on_themselves} <= labels
    assert all(e.call is not None for e in registry.for_engine(registry.CLEARED))


def test_the_nomemory_sweep_has_a_case_per_entry():
    nomemory = pytest.importorskip("hostile.test_allocation_failure")
    for entry in registry.for_engine(registry.NOMEMORY):
        assert any(name.startswith("registry %s" % entry.name) for name in nomemory.CASES), entry
