"""Priority 0-9 (default 4): a backlog is delivered highest first, FIFO within a priority, on
queues and topic subscriptions, and again after a restart for recovered persistent messages."""

import random
import signal

import pytest

from helpers.reliable import fresh
from helpers.wait import assert_stays

PERSISTENT = {"persistent": "true"}


def mixed(count=30, seed=3):
    """(body, priority or None) in send order; None means no priority header (4)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        p = rng.choice([None, 0, 1, 4, 5, 7, 9])
        out.append((f"m{i:02d}-p{4 if p is None else p}", p))
    return out


def expected_order(messages):
    """Highest priority first, FIFO (send order) within a priority; no header counts as 4."""
    ranked = [(-(4 if p is None else p), i, body) for i, (body, p) in enumerate(messages)]
    return [body for _, _, body in sorted(ranked)]


def send_mixed(client, destination, messages, extra=None):
    for body, p in messages:
        headers = dict(extra or {})
        if p is not None:
            headers["priority"] = str(p)
        client.send(destination, body, headers=headers)


def drain(stomp_client, broker, destination, count):
    consumer = stomp_client(broker)
    consumer.subscribe(destination)
    got = [m.body for m in consumer.wait_messages(count)]
    assert_stays(lambda: consumer.count() == count, 0.2, lambda: consumer.bodies())
    return got


def test_backlog_is_delivered_by_priority_then_fifo(broker, stomp_client):
    queue = fresh()
    messages = mixed()
    send_mixed(stomp_client(broker), queue, messages)
    assert drain(stomp_client, broker, queue, len(messages)) == expected_order(messages)


def test_default_priority_is_four(broker, stomp_client):
    queue = fresh()
    producer = stomp_client(broker)
    producer.send(queue, "three", headers={"priority": "3"})
    producer.send(queue, "default")
    producer.send(queue, "four", headers={"priority": "4"})
    producer.send(queue, "five", headers={"priority": "5"})
    assert drain(stomp_client, broker, queue, 4) == ["five", "default", "four", "three"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_priority_order_survives_restart(broker, stomp_client, sig):
    queue = fresh()
    messages = mixed(40, seed=7)
    producer = stomp_client(broker)
    send_mixed(producer, queue, messages, extra=PERSISTENT)
    broker.restart(sig=sig)
    assert drain(stomp_client, broker, queue, len(messages)) == expected_order(messages)


def test_recovered_and_new_messages_are_ordered_together(broker, stomp_client):
    queue = fresh()
    before = [("old-p2", 2), ("old-p8", 8), ("old-p4", None)]
    send_mixed(stomp_client(broker), queue, before, extra=PERSISTENT)
    broker.restart(sig=signal.SIGKILL)
    after = [("new-p8", 8), ("new-p2", 2), ("new-p9", 9)]
    send_mixed(stomp_client(broker), queue, after, extra=PERSISTENT)
    assert drain(stomp_client, broker, queue, 6) == \
        ["new-p9", "old-p8", "new-p8", "old-p4", "old-p2", "new-p2"]


def test_topic_subscription_backlog_is_ordered_by_priority(broker, stomp_client):
    topic = fresh("topic")
    subscriber = stomp_client(broker)
    subscriber.subscribe(topic, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    producer = stomp_client(broker)
    producer.send(topic, "first", headers={"priority": "0"})
    [first] = subscriber.wait_messages(1)
    messages = mixed(12, seed=11)
    send_mixed(producer, topic, messages)  # all wait behind the unacked first one
    subscriber.ack(first)
    for n in range(2, len(messages) + 2):
        subscriber.ack(subscriber.wait_messages(n)[-1])
    assert subscriber.bodies()[1:] == expected_order(messages)


def test_redelivered_message_keeps_its_priority(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    producer = stomp_client(broker)
    producer.send(queue, "high", headers={"priority": "9"})
    [high] = consumer.wait_messages(1)
    producer.send(queue, "low", headers={"priority": "1"})
    consumer.nack(high)  # back in the queue ahead of the lower-priority one
    again = consumer.wait_messages(2)[1]
    assert again.body == "high", consumer.bodies()


@pytest.mark.parametrize("value", ["10", "-1", "high"])
def test_priority_out_of_range_is_refused(broker, stomp_client, value):
    queue = fresh()
    producer = stomp_client(broker)
    producer.send(queue, "bad", headers={"priority": value}, wait=False)
    producer._wait(lambda: producer.errors, 5.0, "an ERROR for a bad priority")
    assert "priority" in producer.errors[0].headers.get("message", ""), producer.errors[0].headers
