"""Hostile input, one file per mechanism by which it reaches the cores.

Where user code can run inside an operation, and how each place is guarded:
section 8 of the essay at the top of ``frozenmap/_ccore/frozendict.c``.

User code that raises
    ``test_raising_at_every_user_call.py``  a key's or value's ``__hash__``,
        ``__eq__``, ``__bool__`` or ``__repr__`` fails at each call an
        operation makes into it, in turn; nothing leaks
    ``test_raising_hash_and_eq.py``  targeted cases: the exception reaches the
        caller, versions and evolvers are as before, nothing is kept alive
User code that re-enters
    ``test_reentry_sweep.py``  a key's ``__eq__``/``__hash__`` or a value's
        ``__del__`` runs each other operation on the same object, for every
        operation of the registry (``tests/operations.py``)
    ``test_reentry_from_user_code.py``  targeted cases: keys whose ``__eq__``
        derives from the map or edits the Evolver under edit, walks whose user
        code edits it, user code around versions that share nodes
The collector and finalizers
    ``test_gc_and_finalizers.py``  ``tp_clear`` and weakref callbacks reading
        what is being cleared; ``__del__`` reading, deriving from and editing
        the map or evolver that releases the value
Allocation failure
    ``test_allocation_failure.py``  every allocation inside an operation fails
        in turn (``_testcapi.set_nomemory``)
Threads
    ``test_versions_shared_between_threads.py``  (the thread harness and the
        free-threaded runs are ``tests/test_threads.py``)
Lying types and bad arguments
    ``test_lying_types.py``  metaclasses and subclasses whose attributes and
        methods return the wrong thing, raise or re-enter; keys whose hash
        changes after they were stored
    ``test_bad_arguments.py``  wrong types and shapes from the caller
        (unhashable keys, malformed pairs), objects used out of turn
Hard but legal input
    ``test_colliding_and_equal_keys.py``  thousands of keys sharing one hash,
        hashes out of range, NaN, keys equal across types
    ``test_self_containing_values.py``  values that contain the map; deep nesting
Drafts (``frozenmap.produce``)
    ``test_drafts_hostile.py``  every mechanism above against drafts: recipes
        that raise, drafts kept after their ``produce``, ``produce`` inside a
        recipe, other threads, lying keys, finalizers touching drafts

The keys and values that misbehave on purpose are in ``tests/keys.py``; the
``core`` fixture is in ``tests/conftest.py``.  This folder is a package so that
other test modules can import a sweep's tables (``from hostile import
test_reentry_sweep``).
"""
