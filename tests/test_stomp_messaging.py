"""STOMP messaging with python3-stomp and raw frames: SEND/SUBSCRIBE/UNSUBSCRIBE, queues,
topics and wildcards, headers (user, ActiveMQ, escaped, repeated), binary bodies."""

import pytest

from helpers import STOMP_VERSIONS
from helpers.broker import now_ms
from helpers.raw_stomp import RawStomp
from helpers.wait import assert_stays, wait_for


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_queue_send_subscribe(broker, stomp_client, unique, version):
    queue = unique()
    client = stomp_client(broker, version=version)
    client.subscribe(queue, id="s1")
    for i in range(3):
        client.send(queue, f"body {i}")
    messages = client.wait_messages(3)
    assert [m.body for m in messages] == ["body 0", "body 1", "body 2"]
    for m in messages:
        assert m.headers.get("destination") == queue, m.headers
        assert m.headers.get("subscription") == "s1", m.headers
        assert m.headers.get("message-id"), m.headers
    assert len({m.headers["message-id"] for m in messages}) == 3
    assert_stays(lambda: client.count() == 3, 0.2, "no extra deliveries")


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_topic_send_subscribe(broker, stomp_client, unique, version):
    topic = unique("topic")
    client = stomp_client(broker, version=version)
    client.subscribe(topic, id="t1")
    client.send(topic, "hello topic")
    [message] = client.wait_messages(1)
    assert message.body == "hello topic"
    assert message.headers.get("destination") == topic
    assert message.headers.get("subscription") == "t1"


@pytest.mark.parametrize("ack", ["client", "client-individual"])
def test_message_has_ack_header_in_1_2(broker, stomp_client, unique, ack):
    queue = unique()
    client = stomp_client(broker, version="1.2")
    client.subscribe(queue, ack=ack)
    client.send(queue, "x")
    [message] = client.wait_messages(1)
    assert message.headers.get("ack"), message.headers


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_messages_wait_in_queue_for_a_subscriber(broker, stomp_client, unique, version):
    queue = unique()
    producer = stomp_client(broker, version=version)
    for i in range(5):
        producer.send(queue, f"m{i}")
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue)
    assert [m.body for m in consumer.wait_messages(5)] == [f"m{i}" for i in range(5)]


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_unsubscribe_stops_delivery(broker, stomp_client, unique, version):
    queue = unique()
    first = stomp_client(broker, version=version)
    sub = first.subscribe(queue, id="s1")
    first.send(queue, "before")
    assert first.wait_messages(1)[0].body == "before"
    first.unsubscribe(sub, destination=queue)
    first.send(queue, "after")
    second = stomp_client(broker, version=version)
    second.subscribe(queue)
    assert [m.body for m in second.wait_messages(1)] == ["after"]
    assert first.bodies() == ["before"]


def test_queue_competing_consumers_round_robin(broker, stomp_client, unique):
    queue = unique()
    a = stomp_client(broker)
    b = stomp_client(broker)
    a.subscribe(queue)
    b.subscribe(queue)
    producer = stomp_client(broker)
    sent = [f"m{i}" for i in range(10)]
    for body in sent:
        producer.send(queue, body)
    wait_for(lambda: a.count() + b.count() >= 10, 10, "10 deliveries across both consumers")
    assert_stays(lambda: a.count() + b.count() == 10, 0.3, "exactly 10 deliveries")
    got_a, got_b = a.bodies(), b.bodies()
    assert got_a and got_b, f"one consumer got everything: a={got_a} b={got_b}"
    assert sorted(got_a + got_b) == sorted(sent), (got_a, got_b)
    # Each consumer still sees its share in send order.
    assert got_a == sorted(got_a, key=sent.index) and got_b == sorted(got_b, key=sent.index)


def test_topic_fans_out_to_every_subscriber(broker, stomp_client, unique):
    topic = unique("topic")
    subscribers = [stomp_client(broker, version=v) for v in STOMP_VERSIONS]
    for s in subscribers:
        s.subscribe(topic)
    producer = stomp_client(broker)
    sent = [f"event {i}" for i in range(5)]
    for body in sent:
        producer.send(topic, body)
    for s in subscribers:
        assert [m.body for m in s.wait_messages(5)] == sent, s.version
    for s in subscribers:
        assert_stays(lambda: s.count() == 5, 0.1, "no duplicates")


def test_topic_wildcard_star_matches_one_level(broker, stomp_client, unique):
    base = unique("topic")
    client = stomp_client(broker)
    client.subscribe(f"{base}.*")
    producer = stomp_client(broker)
    producer.send(f"{base}.b.c", "too deep")
    producer.send(base, "too shallow")
    producer.send(f"{base}.b", "match b")
    producer.send(f"{base}.x", "match x")
    messages = client.wait_messages(2)
    assert sorted(m.body for m in messages) == ["match b", "match x"]
    assert {m.headers["destination"] for m in messages} == {f"{base}.b", f"{base}.x"}
    assert_stays(lambda: client.count() == 2, 0.3, f"only 2 matches: {client.bodies()}")


def test_topic_wildcard_gt_matches_the_rest(broker, stomp_client, unique):
    base = unique("topic")
    client = stomp_client(broker)
    client.subscribe(f"{base}.>")
    producer = stomp_client(broker)
    producer.send(f"{base}.b", "one level")
    producer.send(f"{base}.b.c", "two levels")
    producer.send(f"{base}.b.c.d", "three levels")
    producer.send(f"{unique('topic')}.b", "other tree")
    messages = client.wait_messages(3)
    assert sorted(m.body for m in messages) == ["one level", "three levels", "two levels"]
    assert_stays(lambda: client.count() == 3, 0.3, f"only 3 matches: {client.bodies()}")


def test_wildcard_and_exact_subscribers_both_get_it(broker, stomp_client, unique):
    base = unique("topic")
    wild = stomp_client(broker)
    exact = stomp_client(broker)
    wild.subscribe(f"{base}.*")
    exact.subscribe(f"{base}.b")
    stomp_client(broker).send(f"{base}.b", "both")
    assert wild.wait_messages(1)[0].body == "both"
    assert exact.wait_messages(1)[0].body == "both"


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_user_headers_pass_through(broker, stomp_client, unique, version):
    queue = unique()
    client = stomp_client(broker, version=version)
    client.subscribe(queue)
    client.send(queue, "h", headers={"x-order": "42", "colour": "blue", "content-type": "text/x"})
    [m] = client.wait_messages(1)
    assert m.headers.get("x-order") == "42"
    assert m.headers.get("colour") == "blue"
    assert m.headers.get("content-type", "").startswith("text/x"), m.headers


@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_header_escaping_round_trips(broker, stomp_client, unique, version):
    queue = unique()
    client = stomp_client(broker, version=version)
    client.subscribe(queue)
    tricky = "line1\nkey:value\\back"
    client.send(queue, "esc", headers={"x-tricky": tricky})
    [m] = client.wait_messages(1)
    assert m.headers.get("x-tricky") == tricky, m.headers


def test_header_escaping_on_the_wire_1_2(broker, unique):
    queue = unique()
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", queue), ("id", "0"), ("receipt", "s")])
        assert raw.read_frame().command == "RECEIPT"
        raw.send(b"SEND\ndestination:" + queue.encode() +
                 b"\nx-esc:a\\nb\\cc\\\\d\\re\n\nbody\x00")
        message = raw.read_frame()
        assert message.command == "MESSAGE", message
        assert message.header("x-esc") == "a\nb:c\\d\re", message
        # ...and the broker escapes it again on the way out.
        assert b"\nx-esc:a\\nb\\cc\\\\d\\re\n" in message.raw, message.raw


def test_binary_body_with_nul_bytes(broker, stomp_client, unique):
    queue = unique()
    client = stomp_client(broker, auto_decode=False)
    client.subscribe(queue)
    body = bytes(range(256)) * 4 + b"\x00\x00end"
    client.send(queue, body, headers={"content-type": "application/octet-stream"})
    [m] = client.wait_messages(1)
    assert m.body == body
    assert int(m.headers.get("content-length", -1)) == len(body), m.headers


def test_binary_body_raw_content_length(broker, unique):
    queue = unique()
    body = b"\x00a\x00b\n\n\x00"
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", queue), ("id", "0"), ("receipt", "s")])
        assert raw.read_frame().command == "RECEIPT"
        raw.send_frame("SEND", [("destination", queue), ("content-length", str(len(body)))], body)
        message = raw.read_frame()
        assert message.command == "MESSAGE", message
        assert message.body == body
        assert message.header("content-length") == str(len(body)), message


def test_large_body(broker, stomp_client, unique):
    queue = unique()
    client = stomp_client(broker)
    client.subscribe(queue)
    body = "".join(chr(ord("a") + i % 26) for i in range(512 * 1024))
    client.send(queue, body)
    assert client.wait_messages(1)[0].body == body


def test_empty_body(broker, stomp_client, unique):
    queue = unique()
    client = stomp_client(broker)
    client.subscribe(queue)
    client.send(queue, "")
    assert client.wait_messages(1)[0].body == ""


def test_repeated_header_first_wins(broker, unique):
    queue = unique()
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", queue), ("id", "0"), ("receipt", "s")])
        assert raw.read_frame().command == "RECEIPT"
        raw.send_frame("SEND", [("destination", queue), ("x-rep", "first"), ("x-rep", "second")],
                       b"rep")
        message = raw.read_frame()
        assert message.command == "MESSAGE", message
        assert message.header("x-rep") == "first", message


def test_repeated_destination_first_wins(broker, unique):
    first, second = unique(), unique()
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", first), ("id", "0"), ("receipt", "s")])
        assert raw.read_frame().command == "RECEIPT"
        raw.send_frame("SEND", [("destination", first), ("destination", second)], b"d")
        message = raw.read_frame()
        assert (message.command, message.header("destination")) == ("MESSAGE", first), message


def test_activemq_headers_pass_through(broker, stomp_client, unique):
    queue = unique()
    client = stomp_client(broker)
    client.subscribe(queue)
    sent = {
        "persistent": "true",
        "priority": "7",
        "expires": str(now_ms() + 3_600_000),
        "correlation-id": "corr-1",
        "reply-to": "/queue/replies",
        "type": "order",
        "timestamp": str(now_ms()),
    }
    client.send(queue, "amq", headers=sent)
    [m] = client.wait_messages(1)
    for key, value in sent.items():
        assert m.headers.get(key) == value, f"{key}: sent {value!r}, got {m.headers.get(key)!r}"


def test_priority_orders_waiting_messages(broker, stomp_client, unique):
    # Prefetch 1 keeps the rest waiting in the queue, where priority decides what comes next.
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    producer = stomp_client(broker)
    producer.send(queue, "first")
    consumer.wait_messages(1)
    producer.send(queue, "low", headers={"priority": "1"})
    producer.send(queue, "high", headers={"priority": "9"})
    producer.send(queue, "mid", headers={"priority": "5"})
    for n in range(1, 4):
        consumer.ack(consumer.wait_messages(n)[n - 1])
    assert [m.body for m in consumer.wait_messages(4)] == ["first", "high", "mid", "low"]


def test_expired_message_is_not_delivered(broker, stomp_client, unique):
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    producer = stomp_client(broker)
    producer.send(queue, "first")
    [first] = consumer.wait_messages(1)
    producer.send(queue, "stale", headers={"expires": str(now_ms() - 60_000)})
    producer.send(queue, "fresh")
    consumer.ack(first)
    assert consumer.wait_messages(2)[1].body == "fresh"
    assert_stays(lambda: consumer.bodies() == ["first", "fresh"], 0.3, lambda: consumer.bodies())


def test_destinations_are_created_on_first_use(broker, stomp_client, unique):
    client = stomp_client(broker)
    topic, queue = unique("topic"), unique()
    client.subscribe(topic)  # subscribe first: the topic does not exist yet
    client.send(topic, "t")
    client.send(queue, "q")  # send first: the queue does not exist yet
    client.subscribe(queue)
    assert sorted(m.body for m in client.wait_messages(2)) == ["q", "t"]
