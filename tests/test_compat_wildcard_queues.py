"""Wildcards on queues (issue 11, follows ActiveMQ): SUBSCRIBE /queue/orders.* or /queue/orders.>
consumes from every matching queue, those that exist and those created later. The default
broker runs --shards 2, so the queues here live on both shards."""

import uuid

import pytest

from helpers.raw_stomp import RawStomp, assert_broker_works, expect_error_and_close
from helpers.reliable import now_ms, wait_clock_past
from helpers.wait import assert_stays, wait_for


def prefix():
    return f"w{uuid.uuid4().hex[:8]}"


def test_star_consumes_existing_and_future_matching_queues_only(broker, stomp_client):
    p = prefix()
    producer = stomp_client(broker)
    for name in ("a", "b", "c", "d"):
        producer.send(f"/queue/{p}.{name}", f"old-{name}")
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.*")  # with a receipt
    for name in ("e", "f", "g", "h"):
        producer.send(f"/queue/{p}.{name}", f"new-{name}")
    # Not matching: two levels below, the bare prefix, another prefix.
    producer.send(f"/queue/{p}.a.deep", "deep")
    producer.send(f"/queue/{p}", "bare")
    producer.send(f"/queue/x{p}.a", "other")
    messages = consumer.wait_messages(8)
    assert sorted(m.body for m in messages) == sorted(
        [f"old-{n}" for n in "abcd"] + [f"new-{n}" for n in "efgh"])
    # Each MESSAGE names the queue it came from.
    assert {m.headers["destination"] for m in messages} == {f"/queue/{p}.{n}" for n in "abcdefgh"}
    assert_stays(lambda: consumer.count() == 8)


def test_greater_than_matches_one_or_more_levels(broker, stomp_client):
    p = prefix()
    producer = stomp_client(broker)
    producer.send(f"/queue/{p}.a", "one")
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.>")
    producer.send(f"/queue/{p}.b.c", "two")
    producer.send(f"/queue/{p}.b.c.d", "three")
    producer.send(f"/queue/{p}", "bare")
    consumer.wait_messages(3)
    assert_stays(lambda: consumer.count() == 3)
    assert sorted(consumer.bodies()) == ["one", "three", "two"]


def test_after_the_receipt_every_existing_queue_is_attached(broker, stomp_client):
    # The queues exist (emptied by a consumer that left) before the wildcard SUBSCRIBE.
    p = prefix()
    names = [f"/queue/{p}.q{i}" for i in range(12)]
    drain = stomp_client(broker)
    for name in names:
        drain.subscribe(name, id=name)
        drain.send(name, "warm-up")
    drain.wait_messages(len(names))
    drain.disconnect()
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.*")
    plain = stomp_client(broker)
    # Sent without receipts right after the SUBSCRIBE's receipt: none may be missed.
    for name in names:
        plain.send(name, name, wait=False)
    consumer.wait_messages(len(names))
    assert sorted(consumer.bodies()) == sorted(names)


def test_two_wildcard_subscribers_compete(broker, stomp_client):
    p = prefix()
    one = stomp_client(broker)
    two = stomp_client(broker)
    one.subscribe(f"/queue/{p}.>")
    two.subscribe(f"/queue/{p}.*")
    producer = stomp_client(broker)
    bodies = [f"m{i}" for i in range(40)]
    for i, body in enumerate(bodies):
        producer.send(f"/queue/{p}.q{i % 4}", body, wait=False)
    wait_for(lambda: one.count() + two.count() >= len(bodies), timeout=10)
    assert_stays(lambda: one.count() + two.count() == len(bodies))
    assert sorted(one.bodies() + two.bodies()) == sorted(bodies), "each message exactly once"
    assert one.count() > 0 and two.count() > 0, "both consumers took part"


def test_client_individual_ack_nack_and_disconnect_requeue(broker, stomp_client):
    p = prefix()
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.*", ack="client-individual")
    producer = stomp_client(broker)
    producer.send(f"/queue/{p}.a", "acked")
    producer.send(f"/queue/{p}.b", "nacked")
    producer.send(f"/queue/{p}.c", "held")
    messages = {m.body: m for m in consumer.wait_messages(3)}
    consumer.ack(messages["acked"])
    consumer.nack(messages["nacked"])
    redelivered = consumer.wait_messages(4)[3]
    assert redelivered.body == "nacked"
    assert redelivered.headers["redelivered"] == "true"
    consumer.ack(redelivered)
    assert_stays(lambda: consumer.count() == 4)
    # "held" is unacknowledged when the connection ends: it goes back to its queue.
    consumer.disconnect()
    after = stomp_client(broker)
    after.subscribe(f"/queue/{p}.c")
    got = after.wait_messages(1)
    assert [m.body for m in got] == ["held"]
    assert got[0].headers["redelivered"] == "true"
    other = stomp_client(broker)
    other.subscribe(f"/queue/{p}.a")
    other.subscribe(f"/queue/{p}.b")
    assert_stays(lambda: other.count() == 0, message="acked messages stay acked")


def test_client_ack_is_cumulative_across_the_queues(broker, stomp_client):
    p = prefix()
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.*", ack="client")
    producer = stomp_client(broker)
    for i, name in enumerate(["a", "b", "a", "c"]):
        producer.send(f"/queue/{p}.{name}", f"m{i}")
    messages = consumer.wait_messages(4)
    consumer.ack(messages[-1])  # acks all four, whichever queue they came from
    consumer.disconnect()
    again = stomp_client(broker)
    again.subscribe(f"/queue/{p}.*")
    assert_stays(lambda: again.count() == 0)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_ack_by_message_id_reaches_the_right_queue(broker, version):
    p = prefix()
    with RawStomp(broker.port) as raw:
        raw.connect(version)
        raw.send_frame("SUBSCRIBE", [("destination", f"/queue/{p}.*"), ("id", "w"), ("ack", "client"),
                                     ("receipt", "s")])
        assert raw.read_frame().header("receipt-id") == "s"
        for name in ("a", "b"):
            raw.send_frame("SEND", [("destination", f"/queue/{p}.{name}")], name)
        first = raw.read_frame()
        second = raw.read_frame()
        assert {first.body, second.body} == {b"a", b"b"}
        for m in (first, second):
            raw.send_frame("ACK", [("message-id", m.header("message-id")), ("subscription", "w"),
                                   ("receipt", "ack-" + m.body.decode())])
            receipt = raw.read_frame()
            assert (receipt.command, receipt.header("receipt-id")) == ("RECEIPT", "ack-" + m.body.decode()), receipt
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", f"/queue/{p}.*"), ("id", "0"), ("receipt", "s")])
        assert raw.read_frame().header("receipt-id") == "s"
        raw.send_frame("SEND", [("destination", f"/queue/{p}.c")], "probe")
        assert raw.read_frame().body == b"probe", "the acked messages must not come back"


def test_unsubscribe_stops_deliveries_and_returns_unacked(broker, stomp_client):
    p = prefix()
    consumer = stomp_client(broker)
    sub = consumer.subscribe(f"/queue/{p}.*", ack="client-individual")
    producer = stomp_client(broker)
    producer.send(f"/queue/{p}.a", "unacked")
    consumer.wait_messages(1)
    consumer.unsubscribe(sub)
    producer.send(f"/queue/{p}.a", "after-a")
    producer.send(f"/queue/{p}.z", "after-z")
    plain = stomp_client(broker)
    plain.subscribe(f"/queue/{p}.a")
    plain.subscribe(f"/queue/{p}.z")
    plain.wait_messages(3)
    assert sorted(plain.bodies()) == ["after-a", "after-z", "unacked"]
    assert_stays(lambda: consumer.count() == 1)


def test_selector_applies_to_every_queue(broker, stomp_client):
    p = prefix()
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.*", headers={"selector": "colour = 'red'"})
    producer = stomp_client(broker)
    for name in ("a", "b", "c"):
        producer.send(f"/queue/{p}.{name}", f"red-{name}", headers={"colour": "red"})
        producer.send(f"/queue/{p}.{name}", f"blue-{name}", headers={"colour": "blue"})
    consumer.wait_messages(3)
    assert_stays(lambda: consumer.count() == 3)
    assert sorted(consumer.bodies()) == ["red-a", "red-b", "red-c"]


@pytest.mark.parametrize("frame,destination", [
    ("SEND", "/queue/orders.*"),        # wildcards only when subscribing
    ("SUBSCRIBE", "/queue/orders.>.x"),  # ">" only as the last level
    ("SUBSCRIBE", "/temp-queue/t.*"),
])
def test_wildcards_where_they_are_not_allowed_are_refused(broker, frame, destination):
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame(frame, [("destination", destination), ("id", "0"), ("receipt", "r")], "x")
        error = expect_error_and_close(raw)
    assert error.header("receipt-id") == "r", error
    assert_broker_works(broker.port)


def test_transaction_ack_and_abort_across_the_queues(broker, stomp_client):
    p = prefix()
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.*", ack="client-individual")
    producer = stomp_client(broker)
    producer.send(f"/queue/{p}.a", "a")
    producer.send(f"/queue/{p}.b", "b")
    messages = {m.body: m for m in consumer.wait_messages(2)}
    # Aborted: both stay delivered and unacknowledged, ACKable again with the same ack ids.
    consumer.frame("BEGIN", {"transaction": "t1"})
    consumer.ack(messages["a"], transaction="t1")
    consumer.ack(messages["b"], transaction="t1")
    consumer.frame("ABORT", {"transaction": "t1"})
    consumer.frame("BEGIN", {"transaction": "t2"})
    consumer.ack(messages["a"], transaction="t2")
    consumer.ack(messages["b"], transaction="t2")
    consumer.frame("COMMIT", {"transaction": "t2"})
    consumer.disconnect()
    again = stomp_client(broker)
    again.subscribe(f"/queue/{p}.*")
    assert_stays(lambda: again.count() == 0, message="committed acks stay acked")


def test_idle_queue_freed_under_a_wildcard_subscriber_is_watched_again(broker_factory, stomp_client):
    # An empty queue whose only consumer is a wildcard subscription may be freed when idle; a
    # later send creates it again, and the subscription consumes it again.
    broker = broker_factory(config="[core]\nsweep_interval_ms = 50\n\n[[policy]]\nmatch = \"queue:gc.>\"\n"
                                   "idle_expiry_ms = 100\n")
    p = "gc." + prefix()
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{p}.*", ack="client-individual")
    producer = stomp_client(broker)
    producer.send(f"/queue/{p}.a", "first")
    first = consumer.wait_messages(1)[0]
    consumer.ack(first)
    # Several idle periods and sweeps go by (the broker measures them on the same clock).
    wait_clock_past(now_ms() + 600)
    producer.send(f"/queue/{p}.a", "second")
    got = consumer.wait_messages(2)
    assert [m.body for m in got] == ["first", "second"]
    consumer.ack(got[1])
