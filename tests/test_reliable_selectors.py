"""JMS message selectors (SUBSCRIBE header `selector`): on a queue non-matching messages stay
for other consumers, on a topic each subscriber gets only what matches; numeric comparisons on
header values, JMS header fields, the SQL-92 operators and three-valued logic; a selector that
does not parse gets an ERROR naming the position."""

import pytest

from helpers.raw_stomp import RawStomp, assert_broker_works
from helpers.reliable import error_position, fresh
from helpers.wait import assert_stays


def test_complementary_selectors_split_a_queue(broker, stomp_client):
    queue = fresh()
    red, other = stomp_client(broker), stomp_client(broker)
    red.subscribe(queue, headers={"selector": "color = 'red'"})
    other.subscribe(queue, headers={"selector": "color <> 'red'"})
    producer = stomp_client(broker)
    sent = [(f"m{i}", "red" if i % 2 else "blue") for i in range(10)]
    for body, color in sent:
        producer.send(queue, body, headers={"color": color})
    want_red = [b for b, c in sent if c == "red"]
    want_other = [b for b, c in sent if c != "red"]
    assert [m.body for m in red.wait_messages(5)] == want_red
    assert [m.body for m in other.wait_messages(5)] == want_other
    assert_stays(lambda: red.count() == 5 and other.count() == 5, 0.3,
                 lambda: f"red {red.bodies()}, other {other.bodies()}")


def test_non_matching_messages_stay_on_the_queue(broker, stomp_client):
    queue = fresh()
    picky = stomp_client(broker)
    picky.subscribe(queue, headers={"selector": "kind = 'a'"})
    producer = stomp_client(broker)
    for body in ["b1", "a1", "b2", "a2"]:
        producer.send(queue, body, headers={"kind": body[0]})
    assert [m.body for m in picky.wait_messages(2)] == ["a1", "a2"]
    assert_stays(lambda: picky.count() == 2, 0.3, lambda: picky.bodies())
    anyone = stomp_client(broker)
    anyone.subscribe(queue)
    assert [m.body for m in anyone.wait_messages(2)] == ["b1", "b2"]


def test_non_matching_backlog_does_not_block_a_matching_message(broker, stomp_client):
    queue = fresh()
    producer = stomp_client(broker)
    producer.send_many(queue, [f"skip{i}" for i in range(50)], headers={"kind": "skip"})
    producer.send(queue, "wanted", headers={"kind": "want"})
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual",
                       headers={"selector": "kind = 'want'", "activemq.prefetchSize": "1"})
    assert [m.body for m in consumer.wait_messages(1)] == ["wanted"]


def test_topic_subscribers_get_only_what_matches(broker, stomp_client):
    topic = fresh("topic")
    eu, us, everyone = stomp_client(broker), stomp_client(broker), stomp_client(broker)
    eu.subscribe(topic, headers={"selector": "region = 'eu'"})
    us.subscribe(topic, headers={"selector": "region = 'us'"})
    everyone.subscribe(topic)
    producer = stomp_client(broker)
    for region in ["eu", "us", "asia", "eu"]:
        producer.send(topic, region, headers={"region": region})
    assert [m.body for m in everyone.wait_messages(4)] == ["eu", "us", "asia", "eu"]
    assert [m.body for m in eu.wait_messages(2)] == ["eu", "eu"]
    assert [m.body for m in us.wait_messages(1)] == ["us"]
    assert_stays(lambda: eu.count() == 2 and us.count() == 1, 0.3,
                 lambda: f"eu {eu.bodies()}, us {us.bodies()}")


def test_numeric_comparison_on_header_values(broker, stomp_client):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, headers={"selector": "amount > 100"})
    producer = stomp_client(broker)
    for amount in ["150", "50", "100", "100.5", "2500", "abc"]:
        producer.send(queue, amount, headers={"amount": amount})
    producer.send(queue, "no-amount")
    assert [m.body for m in consumer.wait_messages(3)] == ["150", "100.5", "2500"]
    assert_stays(lambda: consumer.count() == 3, 0.3, lambda: consumer.bodies())


# selector, headers of a message it matches, headers of one it does not
CASES = [
    ("JMSPriority > 6", {"priority": "9"}, {"priority": "3"}),
    ("JMSPriority = 4", {}, {"priority": "5"}),
    ("JMSType = 'order'", {"type": "order"}, {"type": "invoice"}),
    ("JMSCorrelationID = 'c-1'", {"correlation-id": "c-1"}, {"correlation-id": "c-2"}),
    ("JMSDeliveryMode = 'PERSISTENT'", {"persistent": "true"}, {}),
    ("JMSDeliveryMode = 'NON_PERSISTENT'", {}, {"persistent": "true"}),
    ("JMSTimestamp >= 5000", {"timestamp": "5000"}, {"timestamp": "4999"}),
    ("amount BETWEEN 10 AND 20", {"amount": "15"}, {"amount": "25"}),
    ("amount NOT BETWEEN 10 AND 20", {"amount": "25"}, {"amount": "10"}),
    ("color IN ('red', 'green')", {"color": "green"}, {"color": "blue"}),
    ("color NOT IN ('red', 'green')", {"color": "blue"}, {"color": "red"}),
    ("name LIKE 'ab%'", {"name": "abc"}, {"name": "xab"}),
    ("name LIKE 'a_c'", {"name": "abc"}, {"name": "abbc"}),
    ("code LIKE 'a!_%' ESCAPE '!'", {"code": "a_1"}, {"code": "ab1"}),
    ("missing IS NULL", {}, {"missing": "x"}),
    ("color IS NOT NULL", {"color": "x"}, {}),
    ("NOT (color = 'red')", {"color": "blue"}, {"color": "red"}),
    # three-valued logic: a comparison with an absent header is unknown, and NOT unknown too
    ("NOT (missing = 'x')", {"missing": "y"}, {}),
    ("amount > 5 OR missing = 'x'", {"amount": "6"}, {"amount": "1"}),
    ("color = 'red' AND amount > 5", {"color": "red", "amount": "6"},
     {"color": "red", "amount": "1"}),
    ("color = 'red' OR amount > 5", {"color": "blue", "amount": "6"},
     {"color": "blue", "amount": "1"}),
    ("amount * 2 + 1 > 21", {"amount": "11"}, {"amount": "10"}),
    ("(amount - 4) / 2 = 3", {"amount": "10"}, {"amount": "12"}),
    ("-amount < -5", {"amount": "6"}, {"amount": "5"}),
    ("color = 'it''s'", {"color": "it's"}, {"color": "its"}),
]


@pytest.mark.parametrize("selector, matching, other", CASES, ids=[c[0] for c in CASES])
def test_selector_expressions(broker, stomp_client, selector, matching, other):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, headers={"selector": selector})
    producer = stomp_client(broker)
    producer.send(queue, "other", headers=other)
    producer.send(queue, "match", headers=matching)
    assert consumer.wait_messages(1)[0].body == "match", \
        f"{selector!r} with {matching}: got {consumer.bodies()}"
    assert_stays(lambda: consumer.count() == 1, 0.15,
                 lambda: f"{selector!r} also matched {other}: {consumer.bodies()}")


def subscribe_error(port, selector):
    with RawStomp(port) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", fresh()), ("id", "0"), ("selector", selector),
                                     ("receipt", "sub")])
        frame = raw.read_frame()
    assert frame.command == "ERROR", f"selector {selector!r} was accepted: {frame!r}"
    return frame


def test_bad_selector_error_names_the_position(broker):
    # the second '=' is at offset 8 (9 counting from one)
    frame = subscribe_error(broker.port, "color = = 'red'")
    position = error_position(frame.header("message"), frame.body)
    assert position in (8, 9), f"ERROR does not name position 8: {frame!r}"
    assert_broker_works(broker.port)


@pytest.mark.parametrize("selector", [
    "color = 'red",
    "amount >",
    "(a = 1",
    "a = 1 AND AND b = 2",
    "a LIKE",
    "a IN ()",
    "a BETWEEN 1",
    "a = 1 b = 2",
    "#",
])
def test_unparsable_selectors_are_refused(broker, selector):
    frame = subscribe_error(broker.port, selector)
    assert error_position(frame.header("message"), frame.body) is not None, \
        f"ERROR for {selector!r} does not say 'position N': {frame!r}"
    assert_broker_works(broker.port)
