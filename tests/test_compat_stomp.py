"""Drop-in compatibility with ActiveMQ's and RabbitMQ's STOMP (issue 11): what real clients'
test suites tripped on. Each test says which broker's behaviour Carrier follows; docs/stomp.md
("Compatibility") lists the same."""

import uuid

import pytest

from helpers.raw_stomp import RawStomp, assert_broker_works, expect_error_and_close
from helpers.reliable import config, fresh, name_of, policy, unsubscribe
from helpers.wait import assert_stays, wait_for


def subscribe_raw(raw, destination, sub_id="0", **headers):
    """SUBSCRIBE with a receipt; waits for it."""
    receipt = f"sub-{uuid.uuid4().hex[:6]}"
    raw.send_frame("SUBSCRIBE", [("destination", destination), ("id", sub_id), ("receipt", receipt),
                                 *headers.items()])
    frame = raw.read_frame()
    assert (frame.command, frame.header("receipt-id")) == ("RECEIPT", receipt), frame
    return frame


# --- STOMP, small things -----------------------------------------------------------------------

def test_stomp10_client_individual_is_named_as_missing_from_1_0(broker):
    with RawStomp(broker.port) as raw:
        raw.connect("1.0")
        raw.send_frame("SUBSCRIBE", [("destination", "/queue/x"), ("ack", "client-individual")])
        error = expect_error_and_close(raw)
    assert error.header("message") == "invalid ack mode", error
    assert b"does not exist in STOMP 1.0" in error.body, error
    assert_broker_works(broker.port)


@pytest.mark.parametrize("command", ["ACK", "NACK"])
def test_ack_without_id_names_the_missing_header(broker, command):
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        subscribe_raw(raw, "/queue/ackless", ack="client-individual")
        raw.send_frame("SEND", [("destination", "/queue/ackless")], "m")
        assert raw.read_frame().command == "MESSAGE"
        raw.send_frame(command, [("receipt", "r1")])
        error = expect_error_and_close(raw)
    assert error.header("message") == f"{command} frame has no id header", error
    assert error.header("receipt-id") == "r1", error


@pytest.mark.parametrize("framing", ["content-length", "nul"])
def test_frame_too_large_error_carries_the_receipt_id(broker_factory, framing):
    broker = broker_factory(config="[stomp]\nmax_frame_bytes = 1024\n")
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        headers = [("destination", "/queue/big"), ("receipt", "big-1")]
        if framing == "content-length":
            headers.append(("content-length", "5000"))
            raw.send_frame("SEND", headers, b"x" * 100)  # the rest never needs to come
        else:
            raw.send_frame("SEND", headers, b"x" * 5000)
        error = expect_error_and_close(raw)
    assert error.header("message") == "frame too large", error
    assert error.header("receipt-id") == "big-1", error
    assert_broker_works(broker.port)


def test_message_destination_is_the_canonical_spelling_as_activemq_and_rabbitmq_write_it(broker):
    # ActiveMQ answers a SEND to "plain" with destination:/queue/plain, RabbitMQ one to
    # /amq/queue/x with destination:/queue/x: both write the destination back canonically.
    name = f"plain{uuid.uuid4().hex[:6]}"
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        subscribe_raw(raw, name)
        raw.send_frame("SEND", [("destination", name)], "a")
        raw.send_frame("SEND", [("destination", f"/amq/queue/{name}")], "b")
        got = [raw.read_frame(), raw.read_frame()]
    assert [(m.body, m.header("destination")) for m in got] == \
        [(b"a", f"/queue/{name}"), (b"b", f"/queue/{name}")], got


# --- STOMP, RabbitMQ dialect -------------------------------------------------------------------

@pytest.mark.parametrize("destination", ["/something/x", "/queue", "/topic", "/queue/", "/plain",
                                         "/temp-queue"])
@pytest.mark.parametrize("command", ["SEND", "SUBSCRIBE"])
def test_unknown_prefixes_and_empty_names_are_errors(broker, command, destination):
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame(command, [("destination", destination), ("id", "0"), ("receipt", "r")], "m")
        error = expect_error_and_close(raw)
    assert error.header("receipt-id") == "r", error
    assert destination.encode() in error.body, error
    assert_broker_works(broker.port)


def test_plain_names_stay_activemq_queue_names(broker, stomp_client):
    name = f"plain.{uuid.uuid4().hex[:6]}"
    consumer = stomp_client(broker)
    consumer.subscribe(name)
    stomp_client(broker).send(f"/queue/{name}", "via /queue/")
    stomp_client(broker).send(name, "plain")
    assert sorted(m.body for m in consumer.wait_messages(2)) == ["plain", "via /queue/"]


def test_nack_requeue_false_dead_letters_instead_of_redelivering(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual")
    dlq = stomp_client(broker)
    dlq.subscribe(f"/queue/DLQ.{name_of(queue)}")
    stomp_client(broker).send(queue, "poison", headers={"persistent": "true"})
    [m] = consumer.wait_messages(1)
    receipt = "nack-1"
    consumer.conn.nack(m.headers["ack"], receipt=receipt, requeue="false")
    consumer.wait_receipt(receipt)
    [dead] = dlq.wait_messages(1)
    assert dead.body == "poison" and dead.headers.get("dlq-reason") == "rejected", dead.headers
    assert_stays(lambda: consumer.count() == 1, 0.3, "the rejected message comes back")


def test_nack_requeue_false_drops_without_a_dead_letter_queue(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:drop.>", dead_letter_queue="")))
    queue = fresh("queue", "drop")
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual")
    stomp_client(broker).send(queue, "gone")
    [m] = consumer.wait_messages(1)
    consumer.frame("BEGIN", {"transaction": "tx"})
    consumer.conn.nack(m.headers["ack"], transaction="tx", requeue="false")
    consumer.frame("COMMIT", {"transaction": "tx"})
    stomp_client(broker).send(queue, "next")
    assert [m.body for m in consumer.wait_messages(2)] == ["gone", "next"]
    assert_stays(lambda: consumer.count() == 2, 0.3, "the rejected message comes back")


def test_first_delivery_says_redelivered_false(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual")
    stomp_client(broker).send(queue, "m")
    [first] = consumer.wait_messages(1)
    assert first.headers.get("redelivered") == "false", first.headers
    consumer.nack(first)
    again = consumer.wait_messages(2)[1]
    assert again.headers.get("redelivered") == "true", again.headers


def test_exchange_amq_fanout_copies_to_every_subscriber(broker, stomp_client):
    a, b = stomp_client(broker), stomp_client(broker)
    a.subscribe("/exchange/amq.fanout")
    b.subscribe("/exchange/amq.fanout/any-key")
    everything = stomp_client(broker)
    everything.subscribe("/topic/>")  # RabbitMQ's amq.topic never sees amq.fanout's messages
    stomp_client(broker).send("/exchange/amq.fanout/k", "to all")
    for client in (a, b):
        [m] = client.wait_messages(1)
        assert (m.body, m.headers.get("destination")) == ("to all", "/exchange/amq.fanout"), m.headers
    stomp_client(broker).send("/topic/marker", "marker")
    assert [m.body for m in everything.wait_messages(1)] == ["marker"]
    assert_stays(lambda: everything.count() == 1, 0.3, "amq.fanout leaked into /topic/>")


def test_exchange_amq_topic_translates_binding_keys(broker, stomp_client):
    word = f"s{uuid.uuid4().hex[:6]}"
    hashed, starred = stomp_client(broker), stomp_client(broker)
    hashed.subscribe(f"/exchange/amq.topic/{word}.#")
    starred.subscribe(f"/exchange/amq.topic/{word}.*")
    producer = stomp_client(broker)
    producer.send(f"/exchange/amq.topic/{word}.a", "one level")
    producer.send(f"/topic/{word}.a.b", "two levels")
    assert sorted(m.body for m in hashed.wait_messages(2)) == ["one level", "two levels"]
    [m] = starred.wait_messages(1)
    assert (m.body, m.headers.get("destination")) == ("one level", f"/topic/{word}.a"), m.headers
    assert_stays(lambda: starred.count() == 1, 0.3, "* matched two levels")


def test_exchange_amq_direct_routes_by_exact_key(broker, stomp_client):
    k1, k2 = stomp_client(broker), stomp_client(broker)
    k1.subscribe("/exchange/amq.direct/k1")
    k2.subscribe("/exchange/amq.direct/k2")
    stomp_client(broker).send("/exchange/amq.direct/k1", "for k1")
    [m] = k1.wait_messages(1)
    assert (m.body, m.headers.get("destination")) == ("for k1", "/exchange/amq.direct/k1"), m.headers
    assert_stays(lambda: k2.count() == 0, 0.3, "k2 got k1's message")


@pytest.mark.parametrize("command", ["SEND", "SUBSCRIBE"])
def test_unknown_exchange_is_an_error(broker, command):
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame(command, [("destination", "/exchange/no.such/x"), ("id", "0")], "m")
        error = expect_error_and_close(raw)
    assert b"unknown exchange 'no.such'" in error.body, error
    assert_broker_works(broker.port)


def test_temp_queue_reply_to_subscribes_the_sender_as_rabbitmq_does(broker, stomp_client):
    service = fresh()
    responder = stomp_client(broker)
    responder.subscribe(service)
    requester = stomp_client(broker)
    requester.send(service, "ping", headers={"reply-to": "/temp-queue/replies"})
    [request] = responder.wait_messages(1)
    reply_to = request.headers["reply-to"]
    assert reply_to.startswith("/temp-queue/") and reply_to != "/temp-queue/replies", request.headers
    responder.send(reply_to, "pong")
    [reply] = requester.wait_messages(1)
    assert (reply.body, reply.headers.get("subscription")) == ("pong", "/temp-queue/replies"), reply.headers


def test_temp_queue_subscribe_first_still_gets_each_reply_once(broker, stomp_client):
    service = fresh()
    responder = stomp_client(broker)
    responder.subscribe(service)
    requester = stomp_client(broker)
    requester.subscribe("/temp-queue/replies", id="mine")  # ActiveMQ's way
    for i in range(3):
        requester.send(service, f"ping {i}", headers={"reply-to": "/temp-queue/replies"})
    requests = responder.wait_messages(3)
    for r in requests:
        responder.send(r.headers["reply-to"], r.body.replace("ping", "pong"))
    replies = requester.wait_messages(3)
    assert sorted((m.body, m.headers.get("subscription")) for m in replies) == \
        [(f"pong {i}", "mine") for i in range(3)]
    assert_stays(lambda: requester.count() == 3, 0.3, "a reply arrived twice")


# --- STOMP, ActiveMQ dialect -------------------------------------------------------------------

def heartbeat_pair(frame):
    return tuple(int(v) for v in frame.header("heart-beat").split(","))


def test_heartbeats_follow_the_client(broker):
    with RawStomp(broker.port) as raw:
        connected = raw.connect("1.2", heartbeat="500,500")
        assert heartbeat_pair(connected) == (500, 500), connected
    with RawStomp(broker.port) as raw:
        raw.connect("1.2", heartbeat="0,500")
        raw.wait_heartbeats(3, timeout=3.0)  # before: one every 10 s


def test_heartbeats_have_a_floor_and_a_silent_client_is_dropped(broker):
    with RawStomp(broker.port) as raw:
        connected = raw.connect("1.2", heartbeat="10,0")
        assert heartbeat_pair(connected)[1] == 100, connected
        raw.wait_closed(timeout=3.0)  # nothing sent: closed after 2 x 100 ms


def test_heartbeats_off_when_the_client_asks_for_none(broker):
    with RawStomp(broker.port) as raw:
        raw.connect("1.2", heartbeat="0,0")
        assert raw.idle(0.3) == [] and raw.heartbeats == [] and not raw.closed


@pytest.mark.parametrize("dialect", ["activemq", "rabbitmq"])
def test_inactive_durable_subscription_is_removed_by_name(broker, stomp_client, dialect):
    topic = fresh("topic")
    client_id = f"c-{uuid.uuid4().hex[:6]}"
    if dialect == "activemq":
        sub_headers = {"activemq.subscriptionName": "orders"}
        remove_headers = {"activemq.subscriptionName": "orders"}
    else:
        sub_headers = {"durable": "true", "auto-delete": "false"}
        remove_headers = {"persistent": "true"}
    first = stomp_client(broker, connect_headers={"client-id": client_id})
    first.subscribe(topic, id="d1", headers=sub_headers)
    first.unsubscribe("d1")  # deactivates: the subscription keeps collecting
    stomp_client(broker).send(topic, "while inactive", headers={"persistent": "true"})
    unsubscribe(first, "d1", remove_headers)  # removes it; before: ERROR unknown subscription
    assert not first.errors, first.errors
    first.subscribe(topic, id="d1", headers=sub_headers)  # a new, empty one
    stomp_client(broker).send(topic, "after")
    assert [m.body for m in first.wait_messages(1)] == ["after"]
    assert_stays(lambda: first.count() == 1, 0.3, "the removed subscription's message came back")


def test_unknown_durable_subscription_removal_is_an_error(broker):
    with RawStomp(broker.port) as raw:
        raw.connect("1.2", headers=[("client-id", "nobody")])
        raw.send_frame("UNSUBSCRIBE", [("id", "x"), ("activemq.subscriptionName", "none")])
        error = expect_error_and_close(raw)
    assert error.header("message") == "unknown subscription", error


@pytest.mark.parametrize("ack", ["client", "client-individual"])
def test_ack_after_abort_acks_the_same_delivery(broker, stomp_client, ack):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack=ack)
    stomp_client(broker).send(queue, "once")
    [m] = consumer.wait_messages(1)
    consumer.frame("BEGIN", {"transaction": "t1"})
    consumer.ack(m, transaction="t1")
    consumer.frame("ABORT", {"transaction": "t1"})
    consumer.frame("BEGIN", {"transaction": "t2"})
    consumer.ack(m, transaction="t2")  # before: ERROR ACK for an unknown message
    consumer.frame("COMMIT", {"transaction": "t2"})
    assert not consumer.errors, consumer.errors
    assert consumer.count() == 1, "the message was delivered again after ABORT"
    other = stomp_client(broker)
    other.subscribe(queue)
    consumer.disconnect()
    stomp_client(broker).send(queue, "marker")
    assert [m.body for m in other.wait_messages(1)] == ["marker"]
