"""Keys (and values) that misbehave on purpose, for the tests and the leak check.

Each class is defined here once; the tests (``tests/hostile/`` above all) and
``scripts/leakcheck.py`` (which puts this folder on ``sys.path``) import them.

* Chosen hashes, to force collisions and particular trie shapes: ``HashKey``.
* Failures on demand: ``Crasher`` (its ``__hash__``/``__eq__``/``__repr__``
  raise when told to), ``EqBomb`` (``__eq__`` always raises), ``RaiseAfter``
  (``__eq__`` raises from the n-th call on), ``HashBomb`` and ``TypeErrorHash``
  (``__hash__`` raises), ``ChangingHashKey`` (its hash changes, or starts
  raising, after it was stored), ``UnhashableKey``.
* Counting: ``CountingKey`` and ``CountingValue`` count their ``__hash__`` and
  ``__eq__`` calls.
* Faults on the *n-th* call into user code: ``FaultPlan`` counts the calls of
  ``__hash__``, ``__eq__``, ``__bool__`` (of what ``__eq__`` returns) and
  ``__repr__`` on every ``FaultKey`` and ``FaultValue`` that shares it, and
  raises the chosen exception on call number ``fail_at``, so a test can sweep
  n over every call an operation makes and hit each failure point once.
* User code that re-enters or runs late: ``HookKey`` (its ``__eq__`` runs an
  action first: derives from the map, edits the Evolver under edit) and
  ``Finalizer`` (a value whose ``__del__`` runs an action and logs its result).
* Transcripts of user calls: ``RecordingKey``, ``RecordingValue``,
  ``RecordingIndex`` and ``RecordingFunction`` write every call into them
  (``__hash__``, ``__eq__``/``__ne__``, ``__index__``, ``__call__``, and their
  finalizers) into one shared ``CallLog``, ``CALLS``, naming each object by
  its label, so that two runs can be compared line by line
  (``tests/transcript_engine.py``).

Keys and values built for one test only (the re-entrancy sweep's ``RKey``,
which fires the sweep's plan) stay beside that test.
"""


# --- chosen hashes and failures on demand ---------------------------------------


class CrashError(Exception):
    """Raised by a Crasher on demand."""


class HashKey:
    """A key with a fixed hash; equal only to HashKeys with the same name."""

    __slots__ = ("hash", "name")

    def __init__(self, hash, name):
        self.hash = hash
        self.name = name

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        if not isinstance(other, HashKey):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        return "HashKey(%r, %r)" % (self.hash, self.name)


class Crasher:
    """A key whose ``__hash__``/``__eq__``/``__repr__`` raise when told to.

    Set ``crash_hash``, ``crash_eq`` or ``crash_repr`` to True to raise
    ``CrashError`` (or the exception given in ``error``) from that method.
    """

    def __init__(self, name, hash_value=None, error=CrashError):
        self.name = name
        self.hash_value = hash(name) if hash_value is None else hash_value
        self.error = error
        self.crash_hash = False
        self.crash_eq = False
        self.crash_repr = False

    def __hash__(self):
        if self.crash_hash:
            raise self.error("hash of %s" % self.name)
        return self.hash_value

    def __eq__(self, other):
        if self.crash_eq:
            raise self.error("eq of %s" % self.name)
        if not isinstance(other, Crasher):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        if self.crash_repr:
            raise self.error("repr of %s" % self.name)
        return "Crasher(%r)" % (self.name,)


class UnhashableKey:
    """A user class whose instances are unhashable (``__hash__ = None``)."""

    __hash__ = None


class EqBomb:
    """A key whose ``__eq__`` always raises; equal keys are only itself."""

    __slots__ = ("hash_value", "label")

    def __init__(self, hash_value, label="bomb"):
        self.hash_value = hash_value
        self.label = label

    def __hash__(self):
        return self.hash_value

    def __eq__(self, other):
        raise CrashError("eq of %s" % (self.label,))

    __ne__ = __eq__

    def __repr__(self):
        return "EqBomb(%r)" % (self.hash_value,)


class HashBomb:
    """A key whose ``__hash__`` raises ``CrashError`` (not a TypeError)."""

    def __hash__(self):
        raise CrashError("hash of HashBomb")

    def __repr__(self):
        return "HashBomb()"


class TypeErrorHash:
    """A key whose ``__hash__`` raises an exact ``TypeError`` (reworded by the cores)."""

    def __hash__(self):
        raise TypeError("TypeErrorHash refuses to hash")

    def __repr__(self):
        return "TypeErrorHash()"


class RaiseAfter:
    """A key whose ``__eq__`` raises ``error`` (an exception class) from the n-th comparison on."""

    def __init__(self, hash_value, n, error):
        self.hash_value = hash_value
        self.n = n
        self.error = error

    def __hash__(self):
        return self.hash_value

    def __eq__(self, other):
        self.n -= 1
        if self.n <= 0:
            raise self.error("from __eq__")
        return False


class ChangingHashKey:
    """A key whose hash can change or start raising after it was stored."""

    def __init__(self, h):
        self.h = h
        self.calls = 0

    def __hash__(self):
        self.calls += 1
        if isinstance(self.h, BaseException):
            raise self.h
        return self.h

    def __repr__(self):
        return "ChangingHashKey(%r)" % (self.h,)


# --- counting ---------------------------------------------------------------------


class CountingKey:
    """A key that counts calls of its ``__hash__`` and ``__eq__`` (class-wide)."""

    hash_calls = 0
    eq_calls = 0

    __slots__ = ("name", "hash_value")

    def __init__(self, name, hash_value=None):
        self.name = name
        self.hash_value = hash(name) if hash_value is None else hash_value

    def __hash__(self):
        CountingKey.hash_calls += 1
        return self.hash_value

    def __eq__(self, other):
        CountingKey.eq_calls += 1
        if not isinstance(other, CountingKey):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        return "CountingKey(%r)" % (self.name,)

    @classmethod
    def reset(cls):
        cls.hash_calls = 0
        cls.eq_calls = 0


class CountingValue:
    """A value that counts calls of its ``__hash__`` and ``__eq__`` (class-wide)."""

    hash_calls = 0
    eq_calls = 0

    __slots__ = ("payload",)

    def __init__(self, payload):
        self.payload = payload

    def __hash__(self):
        CountingValue.hash_calls += 1
        return hash(self.payload)

    def __eq__(self, other):
        CountingValue.eq_calls += 1
        if not isinstance(other, CountingValue):
            return NotImplemented
        return self.payload == other.payload

    def __repr__(self):
        return "CountingValue(%r)" % (self.payload,)

    @classmethod
    def reset(cls):
        cls.hash_calls = 0
        cls.eq_calls = 0


# --- faults on the n-th call ------------------------------------------------------


class FaultPlan:
    """A shared call counter that raises ``error`` on call number ``fail_at``."""

    def __init__(self):
        self.calls = 0
        self.fail_at = 0  # 0: never fail, just count
        self.error = CrashError
        self.fired = None

    def count(self):
        """Count calls from now on without failing."""
        self.calls = 0
        self.fail_at = 0
        self.fired = None

    def arm(self, n, error=CrashError):
        """Fail on the n-th call from now on (n >= 1)."""
        self.calls = 0
        self.fail_at = n
        self.error = error
        self.fired = None

    def disarm(self):
        self.fail_at = 0

    def __reduce__(self):
        # A pickled FaultKey takes an idle plan along, never an armed one.
        return (FaultPlan, ())

    def tick(self, what):
        self.calls += 1
        if self.calls == self.fail_at:
            self.fired = what
            self.fail_at = 0
            raise self.error("injected fault at call %d (%s)" % (self.calls, what))


class FaultBool:
    """What ``FaultKey.__eq__`` returns: its truth test is one more call into user code."""

    __slots__ = ("value", "plan")

    def __init__(self, value, plan):
        self.value = value
        self.plan = plan

    def __bool__(self):
        self.plan.tick("bool")
        return self.value


class FaultKey:
    """A key with a chosen hash, equal to FaultKeys of the same name.

    Every ``__hash__``, ``__eq__`` (and the truth test of its result) and
    ``__repr__`` call ticks the plan.
    """

    __slots__ = ("name", "hash_value", "plan", "__weakref__")

    def __init__(self, name, hash_value, plan):
        self.name = name
        self.hash_value = hash_value
        self.plan = plan

    def __hash__(self):
        self.plan.tick("hash")
        return self.hash_value

    def __eq__(self, other):
        self.plan.tick("eq")
        if not isinstance(other, FaultKey):
            return NotImplemented
        return FaultBool(self.name == other.name, self.plan)

    def __ne__(self, other):
        self.plan.tick("ne")
        if not isinstance(other, FaultKey):
            return NotImplemented
        return FaultBool(self.name != other.name, self.plan)

    def __repr__(self):
        self.plan.tick("repr")
        return "K%s" % (self.name,)


class FaultValue:
    """A value whose ``__hash__``, ``__eq__`` and ``__repr__`` tick the plan."""

    __slots__ = ("payload", "plan", "__weakref__")

    def __init__(self, payload, plan):
        self.payload = payload
        self.plan = plan

    def __hash__(self):
        self.plan.tick("vhash")
        return hash(self.payload)

    def __eq__(self, other):
        self.plan.tick("veq")
        if not isinstance(other, FaultValue):
            return NotImplemented
        return FaultBool(self.payload == other.payload, self.plan)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else FaultBool(not result.value, self.plan)

    def __repr__(self):
        self.plan.tick("vrepr")
        return "V%s" % (self.payload,)


# --- user code that re-enters ----------------------------------------------------


class HookKey:
    """A key with a chosen hash whose ``__eq__`` runs ``action()`` (once, or every time),
    then compares by name with HookKeys and HashKeys; ``results`` keeps what each run returned."""

    def __init__(self, name, hash_value, action=None, once=True):
        self.name = name
        self.hash_value = hash_value
        self.action = action
        self.once = once
        self.results = []

    def __hash__(self):
        return self.hash_value

    def __eq__(self, other):
        action = self.action
        if action is not None:
            if self.once:
                self.action = None
            self.results.append(action())
        if not isinstance(other, (HookKey, HashKey)):
            return NotImplemented
        return self.name == other.name

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.name)


# --- user code that runs when a value is released -------------------------------


class Finalizer:
    """A value whose ``__del__`` runs ``action()`` and records what it returned
    in the class-wide ``log`` (reset it before a test: ``Finalizer.log = []``)."""

    log = []

    def __init__(self, name, action):
        self.name = name
        self.action = action

    def __del__(self):
        try:
            Finalizer.log.append((self.name, self.action()))
        except BaseException as exc:  # recorded, not lost in "Exception ignored"
            Finalizer.log.append((self.name, exc))

    def __repr__(self):
        return "Finalizer(%r)" % (self.name,)


# --- transcripts of user calls ----------------------------------------------------


class CallLog:
    """One log of user calls, shared by every recording key, value, index and function.

    Each entry is a tuple of strings: ``("hash", label)``, ``("eq", self's
    label, other's label)`` (the object whose ``__eq__`` ran comes first),
    ``("ne", ...)``, ``("index", label)``, ``("call", label, *argument
    labels)``, ``("del", label)``, and the markers the caller adds with
    ``mark``.  Nothing is written unless ``recording`` is True, so building the
    operands of an operation leaves no trace.
    """

    __slots__ = ("entries", "recording")

    def __init__(self):
        self.entries = []
        self.recording = False

    def start(self):
        """Forget what was written and record from now on."""
        self.entries = []
        self.recording = True

    def stop(self):
        """Stop recording; return the entries written since ``start``."""
        self.recording = False
        return self.entries

    def add(self, *entry):
        if self.recording:
            self.entries.append(entry)

    mark = add


CALLS = CallLog()
"""The log every recording object writes to."""


def label_of(obj):
    """The name a transcript gives ``obj``: a recording object's label, the
    repr of a plain int, str, float, bool or None, else its type's name (and
    length): never anything that depends on the object's address."""
    label = getattr(type(obj), "_transcript_label", None)
    if label is not None:
        return label(obj)
    if type(obj) in (int, str, float, bool, type(None)):
        return repr(obj)
    try:
        return "<%s of %d>" % (type(obj).__name__, len(obj))
    except Exception:
        return "<%s>" % type(obj).__name__


class RecordingKey:
    """A key with a chosen hash that records its calls in ``CALLS``.

    Keys are equal when their ``identity`` is (a NotImplemented for anything
    else); ``label`` names this object in transcripts, so an equal key made
    apart (a *twin*) carries the same identity under another label.
    """

    __slots__ = ("identity", "hash_value", "label")

    def __init__(self, identity, hash_value, label=None):
        self.identity = identity
        self.hash_value = hash_value
        self.label = identity if label is None else label

    def _transcript_label(self):
        return self.label

    def __hash__(self):
        CALLS.add("hash", self.label)
        return self.hash_value

    def __eq__(self, other):
        CALLS.add("eq", self.label, label_of(other))
        if not isinstance(other, RecordingKey):
            return NotImplemented
        return self.identity == other.identity

    def __ne__(self, other):
        CALLS.add("ne", self.label, label_of(other))
        if not isinstance(other, RecordingKey):
            return NotImplemented
        return self.identity != other.identity

    def __del__(self, _calls=CALLS):  # (CALLS may be gone at interpreter exit)
        _calls.add("del", self.label)

    def __repr__(self):
        return self.label

    def __reduce__(self):
        # (copies and unpickled keys record under the same label, into CALLS)
        return (RecordingKey, (self.identity, self.hash_value, self.label))


class RecordingValue:
    """A value that records its calls in ``CALLS``; equal when ``content`` is."""

    __slots__ = ("content", "label")

    def __init__(self, content, label):
        self.content = content
        self.label = label

    def _transcript_label(self):
        return self.label

    def __hash__(self):
        CALLS.add("hash", self.label)
        return hash(self.content)

    def __eq__(self, other):
        CALLS.add("eq", self.label, label_of(other))
        if not isinstance(other, RecordingValue):
            return NotImplemented
        return self.content == other.content

    def __ne__(self, other):
        CALLS.add("ne", self.label, label_of(other))
        if not isinstance(other, RecordingValue):
            return NotImplemented
        return self.content != other.content

    def __del__(self, _calls=CALLS):  # (CALLS may be gone at interpreter exit)
        _calls.add("del", self.label)

    def __repr__(self):
        return self.label

    def __reduce__(self):
        return (RecordingValue, (self.content, self.label))


class RecordingIndex:
    """A position whose ``__index__`` records its call in ``CALLS``."""

    __slots__ = ("position", "label")

    def __init__(self, position, label):
        self.position = position
        self.label = label

    def _transcript_label(self):
        return self.label

    def __index__(self):
        CALLS.add("index", self.label)
        return self.position

    def __repr__(self):
        return self.label


class RecordingFunction:
    """A callable that records each call (with its arguments' labels) in
    ``CALLS``, then returns ``function(*args)``."""

    __slots__ = ("function", "label")

    def __init__(self, function, label):
        self.function = function
        self.label = label

    def _transcript_label(self):
        return self.label

    def __call__(self, *args):
        CALLS.add("call", self.label, *[label_of(arg) for arg in args])
        return self.function(*args)

    def __repr__(self):
        return self.label
