"""``Versioned`` subscribers: which changes a subscriber is given, and
delivery after an interruption.

- A subscriber is called for the changes made after it subscribed, never
  for one already queued when it subscribed (a callback that changes the
  value and then subscribes someone else: that second subscriber sees the
  change only if it came after it).
- A ``KeyboardInterrupt`` (any ``BaseException`` that is not an
  ``Exception``) from a subscriber propagates out of the ``set`` that was
  delivering, and the next change is delivered again: the interrupted
  delivery must not leave the ``Versioned`` believing a delivery still runs.
"""

import pytest

from frozenmap.versioned import Versioned


def test_subscriber_added_during_delivery_misses_the_change_queued_before(core):
    fd = core.frozendict
    cfg = Versioned(fd(n=0))
    late = []

    def first(old, new, diff):
        if new["n"] == 1:
            cfg.set(fd(n=2))  # queued behind change 1: the delivery is running
            cfg.subscribe(lambda o, n, d: late.append(n["n"]))  # after change 2

    cfg.subscribe(first)
    cfg.set(fd(n=1))
    assert late == []  # change 2 was made before it subscribed
    cfg.set(fd(n=3))
    assert late == [3]
    assert cfg.version == 3


def test_interrupted_delivery_does_not_stop_later_deliveries(core):
    fd = core.frozendict
    cfg = Versioned(fd(n=0))
    seen = []

    def callback(old, new, diff):
        seen.append(new["n"])
        if new["n"] == 1:
            raise KeyboardInterrupt

    cfg.subscribe(callback)
    with pytest.raises(KeyboardInterrupt):
        cfg.set(fd(n=1))
    assert cfg.get() == fd(n=1) and cfg.version == 1  # the change stays made
    cfg.set(fd(n=2))
    assert seen == [1, 2]
