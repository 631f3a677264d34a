"""Scheduled delivery: `delay` (ms), `deliver-at` (epoch ms) and ActiveMQ's
`AMQ_SCHEDULED_DELAY` (ms) hold a message back until its time, without holding back others; a
scheduled persistent message survives a restart and is delivered on time afterwards."""

import signal
import time

import pytest

from helpers.reliable import fresh, now_ms, wait_clock_past
from helpers.wait import assert_stays

PERSISTENT = {"persistent": "true"}
EARLY = 0.03  # seconds a timer may appear to fire early (clock granularity, rounding to ms)


def schedule_headers(style, delay_ms):
    if style == "delay":
        return {"delay": str(delay_ms)}
    if style == "AMQ_SCHEDULED_DELAY":
        return {"AMQ_SCHEDULED_DELAY": str(delay_ms)}
    return {"deliver-at": str(now_ms() + delay_ms)}


@pytest.mark.parametrize("style", ["delay", "deliver-at", "AMQ_SCHEDULED_DELAY"])
def test_scheduled_message_is_not_delivered_before_its_time(broker, stomp_client, style):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    start = time.monotonic()
    producer.send(queue, "later", headers=schedule_headers(style, 500))
    [m] = consumer.wait_messages(1, timeout=5.0)
    elapsed = time.monotonic() - start
    assert m.body == "later"
    assert 0.5 - EARLY <= elapsed < 3.0, f"{style} 500 ms: delivered after {elapsed:.3f}s"


def test_scheduled_message_does_not_hold_back_the_next(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    producer.send(queue, "scheduled", headers={"delay": "400"})
    producer.send(queue, "now")
    assert consumer.wait_messages(1)[0].body == "now"
    assert [m.body for m in consumer.wait_messages(2)] == ["now", "scheduled"]


def test_scheduled_on_a_topic(broker, stomp_client):
    topic = fresh("topic")
    subscriber = stomp_client(broker)
    subscriber.subscribe(topic)
    start = time.monotonic()
    stomp_client(broker).send(topic, "later", headers={"delay": "400"})
    subscriber.wait_messages(1)
    elapsed = time.monotonic() - start
    assert 0.4 - EARLY <= elapsed < 3.0, f"delivered after {elapsed:.3f}s"


def test_deliver_at_in_the_past_is_delivered_now(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    stomp_client(broker).send(queue, "overdue", headers={"deliver-at": str(now_ms() - 10_000)})
    assert consumer.wait_messages(1, timeout=2.0)[0].body == "overdue"


def test_scheduled_messages_come_in_time_order(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    base = now_ms() + 300
    for offset, body in [(300, "third"), (0, "first"), (150, "second")]:
        producer.send(queue, body, headers={"deliver-at": str(base + offset)})
    assert [m.body for m in consumer.wait_messages(3)] == ["first", "second", "third"]


def test_scheduled_message_in_a_backlog_waits_for_its_time(broker, stomp_client):
    queue = fresh()
    start = time.monotonic()
    stomp_client(broker).send(queue, "scheduled", headers={"delay": "500"})
    consumer = stomp_client(broker)
    consumer.subscribe(queue)  # subscribed well before the message is due
    [m] = consumer.wait_messages(1)
    elapsed = time.monotonic() - start
    assert m.body == "scheduled"
    assert 0.5 - EARLY <= elapsed < 3.0, f"delivered after {elapsed:.3f}s"
    assert_stays(lambda: consumer.count() == 1, 0.2, lambda: consumer.bodies())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_scheduled_persistent_message_survives_restart_and_is_on_time(broker, stomp_client, sig):
    queue = fresh()
    due = now_ms() + 1500
    stomp_client(broker).send(queue, "scheduled",
                              headers={"deliver-at": str(due), **PERSISTENT})
    broker.restart(sig=sig)
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    assert now_ms() < due, "restart took longer than the schedule; the test proves nothing"
    [m] = consumer.wait_messages(1, timeout=6.0)
    arrived = now_ms()
    assert m.body == "scheduled"
    assert arrived >= due - EARLY * 1000, f"delivered {due - arrived} ms early"
    assert arrived < due + 3000, f"delivered {arrived - due} ms late"


def test_schedule_that_passed_while_down_is_delivered_at_start(broker, stomp_client):
    queue = fresh()
    due = now_ms() + 200
    stomp_client(broker).send(queue, "overdue", headers={"delay": "200", **PERSISTENT})
    broker.kill()
    wait_clock_past(due + 50)
    broker.start()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    assert consumer.wait_messages(1, timeout=3.0)[0].body == "overdue"
    assert_stays(lambda: consumer.count() == 1, 0.2, lambda: consumer.bodies())


def test_message_expiring_before_its_delivery_time_is_never_delivered(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    now = now_ms()
    producer = stomp_client(broker)
    producer.send(queue, "never", headers={"deliver-at": str(now + 300),
                                           "expires": str(now + 150)})
    producer.send(queue, "marker", headers={"deliver-at": str(now + 400)})
    assert consumer.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: consumer.count() == 1, 0.2, lambda: consumer.bodies())


@pytest.mark.parametrize("header, value", [("delay", "soon"), ("delay", "-5"),
                                           ("deliver-at", "tomorrow"),
                                           ("AMQ_SCHEDULED_DELAY", "1.5")])
def test_bad_schedule_header_is_refused(broker, stomp_client, header, value):
    producer = stomp_client(broker)
    producer.send(fresh(), "bad", headers={header: value}, wait=False)
    producer._wait(lambda: producer.errors, 5.0, f"an ERROR for {header}:{value}")
    assert header in producer.errors[0].body or header in \
        producer.errors[0].headers.get("message", ""), (producer.errors[0].headers,
                                                         producer.errors[0].body)
