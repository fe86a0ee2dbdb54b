"""Hostile input, one file per mechanism by which it reaches the cores.

(Hostile types, user code and faults: what the C core's essay calls the places
where user code runs, section 8 of ``frozenmap/_ccore/frozendict.c``.)

``test_allocation_failure.py``  every allocation inside an operation fails in
                                turn (``_testcapi.set_nomemory``)
``test_bad_arguments.py``      wrong types and shapes from the caller (unhashable
                                keys, malformed pairs), objects used out of turn
``test_gc_and_finalizers.py``   the collector's ``tp_clear`` and weakref callbacks,
                                and ``__del__`` finalizers, reading, deriving from
                                and editing what is being released or edited
``test_lying_types.py``        metaclasses and subclasses whose attributes and
                                methods return the wrong thing, raise or re-enter;
                                keys whose hash changes after they were stored
``test_raising_at_every_user_call.py``  a key's or value's ``__hash__``,
                                ``__eq__``, ``__bool__`` or ``__repr__`` raises at each
                                call an operation makes into it, in turn
``test_raising_hash_and_eq.py`` targeted cases of the same: the exception reaches
                                the caller, versions and evolvers are as before
``test_reentry_from_user_code.py``  targeted cases of the same: keys
                                whose ``__eq__`` derives from the map or edits the
                                Evolver under edit, walks whose user code edits it,
                                user code around versions that share nodes
``test_reentry_sweep.py``       user code (a key's ``__eq__``/``__hash__``, a
                                value's ``__del__``) runs every other operation
                                on the same object, for every registry operation

The keys and values that misbehave on purpose are in ``tests/keys.py``; the
fixtures (``core``) in ``tests/conftest.py``.  This folder is a package so
that other test modules can import a sweep's tables
(``from hostile import test_reentry_sweep``).
"""
