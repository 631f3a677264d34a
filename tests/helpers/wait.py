"""Bounded polling instead of sleeps (nats-server's checkFor).

`wait_for` returns as soon as a condition holds and fails with a message that says what was
awaited; `assert_stays` is for the rare negative check ("no third message arrives"): it polls
for a short, fixed window and fails the moment the condition stops holding.
"""

import time

DEFAULT_INTERVAL = 0.01


def wait_for(cond, timeout=5.0, message=None, interval=DEFAULT_INTERVAL):
    """Polls `cond()` until it returns a truthy value, which is returned.

    Fails with AssertionError after `timeout` seconds. `message` may be a string or a callable
    returning one (evaluated only on failure, so it can describe the state at that moment).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() >= deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout:.1f}s waiting for: "
                                 f"{text or getattr(cond, '__name__', 'condition')}")
        time.sleep(interval)


def assert_stays(cond, duration=0.3, message=None, interval=DEFAULT_INTERVAL):
    """Asserts `cond()` holds for `duration` seconds (a negative check: nothing more arrives)."""
    deadline = time.monotonic() + duration
    while True:
        if not cond():
            text = message() if callable(message) else message
            raise AssertionError(f"condition stopped holding: "
                                 f"{text or getattr(cond, '__name__', 'condition')}")
        if time.monotonic() >= deadline:
            return
        time.sleep(interval)


def wait_stalled(value, quiet=0.5, timeout=30.0, what="progress to stop"):
    """Waits until `value()` has not changed for `quiet` seconds (a producer held back by the
    broker: its count of confirmed messages stops moving); returns that value."""
    last = [value(), time.monotonic()]

    def stalled():
        now, current = time.monotonic(), value()
        if current != last[0]:
            last[:] = [current, now]
            return False
        return now - last[1] >= quiet

    wait_for(stalled, timeout, what)
    return last[0]
