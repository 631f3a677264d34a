"""Selectors that cost the broker: a hostile LIKE pattern must not stall the other clients of its
shard, a selector past `[core] max_selector_bytes` is refused with an ERROR, and a consumer whose
selector matches nothing must not make every SEND re-evaluate the queue's backlog (issue 10,
items 7 and 8)."""

import time

import pytest

from helpers.raw_stomp import RawStomp, assert_broker_works
from helpers.reliable import config, core, fresh
from helpers.wait import wait_for

# One shard: the hostile message is evaluated on the thread that serves everybody else.
ONE_SHARD = {"shards": 1, "store": "memory"}


def hostile_like(length=3800):
    """A LIKE under the default 4 KiB selector limit that a backtracking matcher needs
    O(header x pattern) steps for: almost matches at every position of a header of 'a's."""
    return "x LIKE '%" + "a" * length + "b%a'"


def test_hostile_like_does_not_stall_other_clients_on_the_shard(broker_factory, stomp_client):
    broker = broker_factory(**ONE_SHARD)
    queue, other_queue = fresh(), fresh()
    hostile = stomp_client(broker)
    hostile.subscribe(queue, headers={"selector": hostile_like()})
    producer = stomp_client(broker)
    # Three 1 MB headers: minutes of one shard's CPU with backtracking, milliseconds now.
    for i in range(3):
        producer.send(queue, f"big{i}", headers={"x": "a" * (1 << 20)}, wait=False)
    # Meanwhile another client's send/receive round trips keep completing.
    other = stomp_client(broker)
    other.subscribe(other_queue)
    slowest = 0.0
    for i in range(20):
        started = time.monotonic()
        other.send(other_queue, f"ping{i}", timeout=15.0)
        other.wait_messages(i + 1, timeout=15.0)
        slowest = max(slowest, time.monotonic() - started)
    assert slowest < 2.0, f"a round trip took {slowest:.1f} s while the hostile message was evaluated"
    assert other.bodies() == [f"ping{i}" for i in range(20)]
    # Nothing was lost: the big messages did not match and wait for a consumer that takes them.
    anyone = stomp_client(broker)
    anyone.subscribe(queue)
    assert sorted(m.body for m in anyone.wait_messages(3, timeout=20.0)) == ["big0", "big1", "big2"]
    assert hostile.count() == 0


def subscribe_frame(port, selector):
    with RawStomp(port) as raw:
        raw.connect()
        raw.send_frame("SUBSCRIBE", [("destination", "/queue/" + fresh()), ("id", "0"),
                                     ("selector", selector), ("receipt", "r1")])
        return raw.read_frame()


def test_a_selector_over_the_limit_is_refused(broker):
    long_selector = "x IN (" + ", ".join(f"'v{i:05}'" for i in range(600)) + ")"
    assert 4096 < len(long_selector) < 8192
    frame = subscribe_frame(broker.port, long_selector)
    assert frame.command == "ERROR", f"a {len(long_selector)}-byte selector was accepted: {frame!r}"
    assert "longer than 4096 bytes" in frame.header("message", "") + frame.body.decode(), frame
    assert_broker_works(broker.port)
    # Just under the limit is fine.
    frame = subscribe_frame(broker.port, "x LIKE '" + "a" * 4000 + "%'")
    assert frame.command == "RECEIPT", frame


def test_the_selector_limit_is_configurable(broker_factory):
    broker = broker_factory(config=config(core(max_selector_bytes=8192)))
    long_selector = "x IN (" + ", ".join(f"'v{i:05}'" for i in range(600)) + ")"
    assert subscribe_frame(broker.port, long_selector).command == "RECEIPT"
    frame = subscribe_frame(broker.port, long_selector + " OR " + long_selector)
    assert frame.command == "ERROR" and "longer than 8192 bytes" in frame.header("message", "") + \
        frame.body.decode(), frame


def broker_cpu_seconds(broker):
    with open(f"/proc/{broker.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks / 100.0


@pytest.mark.timeout(120)
def test_a_consumer_matching_nothing_does_not_make_sends_rescan_the_backlog(broker_factory, stomp_client):
    broker = broker_factory(**ONE_SHARD)
    backlog, sends = 30000, 1000
    queue = fresh()
    producer = stomp_client(broker)
    headers = {"region": "us", "amount": "50", "sku": "CAR-1234-XL"}
    producer.send_many(queue, [f"old{i}" for i in range(backlog)], headers=headers, timeout=60.0)
    picky = stomp_client(broker)
    picky.subscribe(queue, headers={"selector": "amount > 100 AND region = 'eu'"})
    # What the sends cost the broker by themselves: the same, one at a time, to another queue.
    other = fresh()
    before = broker_cpu_seconds(broker)
    for i in range(sends):
        producer.send(other, f"x{i}", headers=headers)
    baseline = broker_cpu_seconds(broker) - before
    # Each SEND to the queue used to evaluate the selector on the whole backlog again.
    before = broker_cpu_seconds(broker)
    for i in range(sends):
        producer.send(queue, f"new{i}", headers=headers)
    with_selector = broker_cpu_seconds(broker) - before
    print(f"{sends} sends: {with_selector:.2f} s of broker CPU past a {backlog}-message backlog "
          f"nobody matches, {baseline:.2f} s to a queue without consumers")
    assert with_selector < 2 * baseline + 0.5, \
        f"{sends} sends cost {with_selector:.2f} s of broker CPU with a non-matching selector, " \
        f"{baseline:.2f} s without"
    # All of them are still there for a consumer that takes them, in order.
    taker = stomp_client(broker)
    taker.subscribe(queue, headers={"selector": "region = 'us'"})
    got = taker.wait_messages(backlog + sends, timeout=60.0)
    want = [f"old{i}" for i in range(backlog)] + [f"new{i}" for i in range(sends)]
    assert [m.body for m in got] == want
    assert picky.count() == 0


def test_priorities_and_redeliveries_reach_a_matching_selector(broker_factory, stomp_client):
    broker = broker_factory(**ONE_SHARD)
    queue = fresh()
    producer = stomp_client(broker)
    # A consumer without a selector holds the first messages, unacked; one of them is 'a'.
    holder = stomp_client(broker)
    holder.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "3"})
    for i in range(3):
        producer.send(queue, f"held{i}", headers={"kind": "a" if i == 1 else "b"})
    holder.wait_messages(3)
    # The selective consumer arrives and refuses a run of messages of two priorities (they
    # arrived after the held ones, which it has not seen)...
    picky = stomp_client(broker)
    picky.subscribe(queue, ack="client-individual", headers={"selector": "kind = 'a'"})
    for i in range(10):
        producer.send(queue, f"b{i}", headers={"kind": "b", "priority": str(i % 2 * 5)})
    # ...and takes the one it wants, of high priority.
    producer.send(queue, "urgent", headers={"kind": "a", "priority": "9"})
    assert [m.body for m in picky.wait_messages(1)] == ["urgent"]
    # The holder leaves: its messages return, and the one the selector matches reaches it.
    holder.disconnect()
    got = picky.wait_messages(2)
    assert [m.body for m in got] == ["urgent", "held1"]
    assert got[1].headers.get("redelivered") == "true", got[1].headers
    # Everything else is still there, highest priority first.
    anyone = stomp_client(broker)
    anyone.subscribe(queue)
    rest = [m.body for m in anyone.wait_messages(12, timeout=10.0)]
    assert rest == ["b1", "b3", "b5", "b7", "b9", "held0", "held2", "b0", "b2", "b4", "b6", "b8"]
    assert picky.count() == 2


@pytest.mark.timeout(120)
def test_nacks_do_not_make_a_selector_rescan_the_backlog(broker_factory, stomp_client):
    broker = broker_factory(**ONE_SHARD)
    backlog, nacks = 30000, 500
    queue = fresh()
    producer = stomp_client(broker)
    headers = {"region": "us", "amount": "50"}
    # One message for a consumer that keeps nacking it, then a backlog nobody will take.
    producer.send(queue, "bounce", headers={"region": "eu", "amount": "50"})
    holder = stomp_client(broker)
    holder.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    holder.wait_messages(1)
    producer.send_many(queue, [f"old{i}" for i in range(backlog)], headers=headers, timeout=60.0)
    picky = stomp_client(broker)
    picky.subscribe(queue, headers={"selector": "amount > 100 AND region = 'eu'"})
    # Each nack returns "bounce" to the queue and it goes back to the holder (first in line); the
    # picky consumer used to re-evaluate the whole backlog each time.
    before = broker_cpu_seconds(broker)
    started = time.monotonic()
    for i in range(nacks):
        holder.nack(holder.messages[-1])
        holder.wait_messages(i + 2, timeout=15.0)
    spent = broker_cpu_seconds(broker) - before
    elapsed = time.monotonic() - started
    print(f"{nacks} nacks: {spent:.2f} s of broker CPU in {elapsed:.1f} s past a {backlog}-message backlog")
    assert spent < 0.5, f"{nacks} nacks cost {spent:.2f} s of broker CPU with a selective consumer waiting"
    assert all(m.body == "bounce" for m in holder.messages)
    assert picky.count() == 0
