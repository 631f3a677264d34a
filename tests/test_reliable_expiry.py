"""Expiration and idle expiry: an `expires` (epoch ms) message is never delivered once past,
whether it waits in a backlog or behind an unacked one; a policy's ttl_ms gives a default;
with expired_to_dlq the sweeper ([core] sweep_interval_ms) moves expired messages to the DLQ
with dlq-reason:expired even with no consumer; idle_expiry_ms deletes an unconsumed queue and
its messages."""

import signal

import pytest

from helpers.reliable import config, core, fresh, name_of, now_ms, policy, wait_clock_past
from helpers.wait import assert_stays, wait_for

PERSISTENT = {"persistent": "true"}
FAST_SWEEP = core(sweep_interval_ms=100)


def subscribe_and_expect(stomp_client, broker, destination, bodies, window=0.3):
    """A fresh auto-ack subscriber gets exactly `bodies`, in order."""
    consumer = stomp_client(broker)
    consumer.subscribe(destination)
    if bodies:
        got = consumer.wait_messages(len(bodies))
        assert [m.body for m in got] == bodies
    assert_stays(lambda: consumer.count() == len(bodies), window,
                 lambda: f"expected {bodies}, got {consumer.bodies()}")
    return consumer


@pytest.mark.parametrize("persistent", [False, True], ids=["transient", "persistent"])
def test_expired_messages_in_a_backlog_are_never_delivered(broker, stomp_client, persistent):
    queue = fresh()
    headers = PERSISTENT if persistent else {}
    soon = now_ms() + 200
    producer = stomp_client(broker)
    producer.send(queue, "stale", headers={"expires": str(now_ms() - 60_000), **headers})
    producer.send(queue, "short", headers={"expires": str(soon), **headers})
    producer.send(queue, "fresh", headers=headers)
    producer.send(queue, "later", headers={"expires": str(now_ms() + 600_000), **headers})
    wait_clock_past(soon + 20)
    subscribe_and_expect(stomp_client, broker, queue, ["fresh", "later"])


@pytest.mark.parametrize("kind", ["queue", "topic"])
def test_message_expiring_behind_an_unacked_one_is_skipped(broker, stomp_client, kind):
    destination = fresh(kind)
    consumer = stomp_client(broker)
    consumer.subscribe(destination, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    producer = stomp_client(broker)
    producer.send(destination, "first")
    [first] = consumer.wait_messages(1)
    soon = now_ms() + 200
    producer.send(destination, "short", headers={"expires": str(soon)})
    producer.send(destination, "after")
    wait_clock_past(soon + 20)
    consumer.ack(first)
    assert consumer.wait_messages(2)[1].body == "after"
    assert_stays(lambda: consumer.count() == 2, 0.3, lambda: consumer.bodies())


def test_expired_message_is_not_recovered_after_restart(broker, stomp_client):
    queue = fresh()
    soon = now_ms() + 300
    producer = stomp_client(broker)
    producer.send_many(queue, ["kept-1", "kept-2"], headers=PERSISTENT)
    producer.send(queue, "short", headers={"expires": str(soon), **PERSISTENT})
    broker.kill()
    wait_clock_past(soon + 20)
    broker.start()
    subscribe_and_expect(stomp_client, broker, queue, ["kept-1", "kept-2"])


def test_policy_ttl_is_the_default_time_to_live(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:ttl.>", ttl_ms=200)))
    queue, unmatched = fresh(prefix="ttl"), fresh(prefix="keep")
    sent_at = now_ms()
    producer = stomp_client(broker)
    producer.send(queue, "default-ttl")
    producer.send(queue, "explicit", headers={"expires": str(now_ms() + 600_000)})
    producer.send(unmatched, "no-policy")
    wait_clock_past(sent_at + 250)
    subscribe_and_expect(stomp_client, broker, queue, ["explicit"])
    subscribe_and_expect(stomp_client, broker, unmatched, ["no-policy"])


def test_sweeper_moves_expired_to_the_dlq_without_a_consumer(broker_factory, stomp_client):
    broker = broker_factory(config=config(FAST_SWEEP, policy("queue:exp.>", expired_to_dlq=True)))
    queue = fresh(prefix="exp")
    dlq_name = f"/queue/DLQ.{name_of(queue)}"
    watcher = stomp_client(broker)
    watcher.subscribe(dlq_name, ack="client-individual")  # sees the move, does not ack
    stomp_client(broker).send(queue, "perishable",
                              headers={"expires": str(now_ms() + 200), "x-k": "v", **PERSISTENT})
    [dead] = watcher.wait_messages(1, timeout=5.0)  # nobody ever subscribed to the queue
    assert dead.body == "perishable"
    assert dead.headers.get("dlq-reason") == "expired", dead.headers
    assert dead.headers.get("original-destination") == queue, dead.headers
    assert dead.headers.get("x-k") == "v", dead.headers
    broker.restart(sig=signal.SIGKILL)
    subscribe_and_expect(stomp_client, broker, queue, [])
    subscribe_and_expect(stomp_client, broker, dlq_name, ["perishable"])


def test_policy_ttl_with_expired_to_dlq(broker_factory, stomp_client):
    broker = broker_factory(config=config(FAST_SWEEP,
                                          policy("queue:exp.>", ttl_ms=150, expired_to_dlq=True)))
    queue = fresh(prefix="exp")
    dlq = stomp_client(broker)
    dlq.subscribe(f"/queue/DLQ.{name_of(queue)}")
    stomp_client(broker).send(queue, "ttl")
    [dead] = dlq.wait_messages(1)
    assert (dead.body, dead.headers.get("dlq-reason")) == ("ttl", "expired"), dead.headers


def test_expired_messages_are_dropped_not_dead_lettered_by_default(broker_factory, stomp_client):
    broker = broker_factory(config=config(FAST_SWEEP, policy("queue:exp.>", expired_to_dlq=True)))
    to_dlq, dropped = fresh(prefix="exp"), fresh(prefix="plain")
    dlq = stomp_client(broker)
    dlq.subscribe(f"/queue/DLQ.{name_of(to_dlq)}")
    plain_dlq = stomp_client(broker)
    plain_dlq.subscribe(f"/queue/DLQ.{name_of(dropped)}")
    expires = {"expires": str(now_ms() + 150)}
    producer = stomp_client(broker)
    producer.send(dropped, "dropped", headers=expires)
    producer.send(to_dlq, "dead-lettered", headers=expires)
    dlq.wait_messages(1)  # the sweeper has run past both expiries
    assert_stays(lambda: plain_dlq.count() == 0, 0.3,
                 lambda: f"expired_to_dlq is off but got {plain_dlq.bodies()}")
    subscribe_and_expect(stomp_client, broker, dropped, [])


# --- idle expiry ----------------------------------------------------------------------------

IDLE = config(FAST_SWEEP, policy("queue:idle.>", idle_expiry_ms=300))


def test_idle_queue_is_deleted_with_its_messages(broker_factory, stomp_client):
    broker = broker_factory(config=IDLE)
    idle, unmatched = fresh(prefix="idle"), fresh(prefix="busy")
    producer = stomp_client(broker)
    sent_at = now_ms()
    producer.send_many(idle, ["orphan-1", "orphan-2"], headers=PERSISTENT)
    producer.send(unmatched, "kept", headers=PERSISTENT)
    wait_clock_past(sent_at + 300 + 500)  # idle time + several sweeps
    consumer = subscribe_and_expect(stomp_client, broker, idle, [], window=0.5)
    subscribe_and_expect(stomp_client, broker, unmatched, ["kept"])
    producer.send(idle, "new")  # the name is usable again: a new, empty queue
    assert [m.body for m in consumer.wait_messages(1)] == ["new"]
    consumer.disconnect()
    # The deletion's acks are not waited for: a receipted persistent send after them is a barrier.
    producer.send(fresh(), "barrier", headers=PERSISTENT)
    broker.restart(sig=signal.SIGKILL)
    subscribe_and_expect(stomp_client, broker, idle, [])


def test_queue_with_a_consumer_is_not_idle(broker_factory, stomp_client):
    broker = broker_factory(config=IDLE)
    queue = fresh(prefix="idle")
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual")
    producer = stomp_client(broker)
    producer.send(queue, "one")
    consumer.wait_messages(1)
    subscribed_at = now_ms()
    wait_clock_past(subscribed_at + 300 + 500)
    producer.send(queue, "two")
    assert [m.body for m in consumer.wait_messages(2)] == ["one", "two"]


# --- the store lets go too -------------------------------------------------------------------

SMALL_JOURNAL = "[journal]\nsegment_bytes = 16384\nfsync = false\n"


def fill_segments(stomp_client, broker, destination, headers):
    """~100 KiB of persistent messages: several 16 KiB segments. Returns the segments."""
    bodies = [f"{i:04d}-" + "j" * 1000 for i in range(100)]
    stomp_client(broker).send_many(destination, bodies, headers={**PERSISTENT, **headers})
    segments = broker.segments()
    assert len(segments) >= 2, f"the journal did not roll: {segments}"
    return segments


def test_swept_messages_leave_the_journal(broker_factory, stomp_client):
    broker = broker_factory(config=config(SMALL_JOURNAL, FAST_SWEEP))
    queue = fresh()
    expires = now_ms() + 500
    segments = fill_segments(stomp_client, broker, queue, {"expires": str(expires)})
    wait_for(lambda: not any(p.exists() for p in segments[:-1]), 10.0,
             lambda: f"segments of expired, swept messages to be reclaimed: {broker.segments()}")


def test_idle_deleted_queue_leaves_the_journal(broker_factory, stomp_client):
    broker = broker_factory(config=config(SMALL_JOURNAL, IDLE))
    queue = fresh(prefix="idle")
    segments = fill_segments(stomp_client, broker, queue, {})
    wait_for(lambda: not any(p.exists() for p in segments[:-1]), 10.0,
             lambda: f"segments of a deleted idle queue to be reclaimed: {broker.segments()}")
