"""Helpers for the reliable-delivery tests (issue 3): TOML for `[[policy]]` and `[core]`,
destination names a policy pattern matches, UNSUBSCRIBE with extra headers, clock waits and the
broker's resident memory.
"""

import re
import threading
import time
import uuid

import stomp

from helpers.wait import wait_for


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def policy(match, **keys):
    """One `[[policy]]` table: policy("queue:orders.>", max_deliveries=3)."""
    lines = ["[[policy]]", f"match = {toml_value(match)}"]
    lines += [f"{key} = {toml_value(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"


def core(**keys):
    """A `[core]` table: core(sweep_interval_ms=100)."""
    return "[core]\n" + "".join(f"{key} = {toml_value(value)}\n" for key, value in keys.items())


def config(*tables):
    """Joins tables into one TOML document (the broker fixture's `config=`)."""
    return "\n".join(tables)


def fresh(kind="queue", prefix="t"):
    """A destination no other test uses, under `prefix` so a policy can match it:
    fresh("queue", "orders") -> /queue/orders.ab12cd34ef"""
    return f"/{kind}/{prefix}.{uuid.uuid4().hex[:10]}"


def name_of(destination):
    """/queue/orders.x -> orders.x"""
    return destination.split("/", 2)[2]


def unsubscribe(client, id, headers, wait=True):
    """UNSUBSCRIBE `id` carrying extra headers (durable:true, activemq.subscriptionName)."""
    headers = dict(headers)
    receipt = client._receipt(wait)
    if receipt:
        headers["receipt"] = receipt
    client.conn.unsubscribe(id, headers=headers)
    if receipt:
        client.wait_receipt(receipt)


def now_ms():
    return int(time.time() * 1000)


def wait_clock_past(epoch_ms, timeout=10.0):
    """Waits until the wall clock has passed `epoch_ms` (the condition is the clock itself:
    for an expiry or a deadline the broker measures against the same clock)."""
    wait_for(lambda: now_ms() > epoch_ms, timeout, f"the clock to pass {epoch_ms}", interval=0.005)


def wait_error(client, timeout=5.0):
    """The first ERROR frame a StompClient received."""
    client._wait(lambda: client.errors, timeout, "an ERROR frame")
    with client.cond:
        return client.errors[0]


def rss_bytes(pid):
    """VmRSS of a live process, in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


POSITION = re.compile(r"position\s+(\d+)", re.IGNORECASE)


def error_position(*texts):
    """The N of "position N" in any of `texts`, or None."""
    for text in texts:
        if isinstance(text, bytes):
            text = text.decode(errors="replace")
        match = POSITION.search(text or "")
        if match:
            return int(match.group(1))
    return None


class ArrivalTimes(stomp.ConnectionListener):
    """A second listener for a StompClient's connection: the monotonic time of each MESSAGE.
    client.conn.set_listener("arrivals", ArrivalTimes())"""

    def __init__(self):
        self.lock = threading.Lock()
        self.arrivals = []  # (monotonic time, frame)

    def on_message(self, frame):
        with self.lock:
            self.arrivals.append((time.monotonic(), frame))

    def redelivered(self):
        with self.lock:
            return [t for t, f in self.arrivals if f.headers.get("redelivered") == "true"]

    def times(self):
        with self.lock:
            return [t for t, _ in self.arrivals]
