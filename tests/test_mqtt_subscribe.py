"""SUBSCRIBE / UNSUBSCRIBE: `+` and `#` (which also matches the parent level), `$` topics,
shared subscriptions, no-local, re-subscribing, SUBACK / UNSUBACK codes."""

import pytest

from helpers import raw_mqtt as raw
from helpers.mqtt_clients import PacketTypes, mqtt_client, props, unique_topic  # noqa: F401
from helpers.mqtt_clients import SubscribeOptions
from helpers.wait import assert_stays, wait_for


def topics_of(client, n):
    return sorted(m.topic for m in client.wait_messages(n))


@pytest.mark.parametrize("version", ["3.1.1", "5"])
def test_wildcards(broker, mqtt_client, version):
    base = unique_topic()
    plus = mqtt_client(broker, version=version)
    plus.subscribe(f"{base}/+/temp", 0)
    hash_ = mqtt_client(broker, version=version)
    hash_.subscribe(f"{base}/#", 0)
    pub = mqtt_client(broker)
    published = [base, f"{base}/a/temp", f"{base}/b/temp", f"{base}/a/b/temp", f"{base}/a", f"{base}x/a/temp"]
    for t in published:
        pub.publish(t, t.encode(), qos=1)
    assert topics_of(plus, 2) == sorted([f"{base}/a/temp", f"{base}/b/temp"])
    # `#` matches the parent level too: `base/#` gets `base` itself.
    assert topics_of(hash_, 5) == sorted([base, f"{base}/a/temp", f"{base}/b/temp", f"{base}/a/b/temp", f"{base}/a"])
    assert_stays(lambda: plus.count() == 2 and hash_.count() == 5, 0.3)


def test_empty_levels_and_special_characters(broker, mqtt_client):
    base = unique_topic()
    c = mqtt_client(broker)
    c.subscribe(f"/{base}/+", 1)
    c.subscribe(f"{base}//x", 1)
    c.subscribe(f"{base}/a.b/*", 1)
    pub = mqtt_client(broker)
    for t in (f"/{base}/y", f"{base}//x", f"{base}/a.b/*", f"{base}/a/b/*", f"{base}/a.b/c"):
        pub.publish(t, b"x", qos=1)
    assert topics_of(c, 3) == sorted([f"/{base}/y", f"{base}//x", f"{base}/a.b/*"])
    assert_stays(lambda: c.count() == 3, 0.3)


def test_dollar_topics_not_matched_by_leading_wildcards(broker, mqtt_client):
    base = unique_topic()
    everything = mqtt_client(broker)
    everything.subscribe("#", 1)
    plus = mqtt_client(broker)
    plus.subscribe(f"+/{base}", 1)
    explicit = mqtt_client(broker)
    explicit.subscribe(f"$sys/{base}/#", 1)
    pub = mqtt_client(broker)
    pub.publish(f"$sys/{base}", b"hidden", qos=1)
    pub.publish(f"$sys/{base}/x", b"hidden", qos=1)
    pub.publish(f"x/{base}", b"seen", qos=1)
    assert [m.payload for m in explicit.wait_messages(2)] == [b"hidden", b"hidden"]
    assert [m.topic for m in plus.wait_messages(1)] == [f"x/{base}"]
    wait_for(lambda: any(m.topic == f"x/{base}" for m in everything.wait_messages(1)), 5)
    assert_stays(lambda: all(not m.topic.startswith("$") for m in everything.messages), 0.3)
    assert_stays(lambda: plus.count() == 1, 0.1)


def test_unsubscribe(broker, mqtt_client):
    topic = unique_topic()
    c = mqtt_client(broker, version="5")
    c.subscribe(topic, 1)
    pub = mqtt_client(broker)
    pub.publish(topic, b"before", qos=1)
    c.wait_messages(1)
    c.unsubscribe(topic)
    pub.publish(topic, b"after", qos=1)
    assert_stays(lambda: c.count() == 1, 0.3)
    # UNSUBACK codes: success for a subscription, 'no subscription existed' otherwise.
    r = raw.RawMqtt(broker.mqtt_port, 5)
    r.connect("unsub-codes")
    r.subscribe([(topic, 0)])
    r.send(raw.unsubscribe([topic, "never/subscribed"], packet_id=4, version=5))
    ack = r.expect(raw.UNSUBACK)
    assert (ack.packet_id, ack.reasons) == (4, [0x00, 0x11])
    r.close()


def test_suback_codes(broker):
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("suback")
    ack = c.subscribe([("a/b", 0), ("a/+", 1), ("a/#", 2)], packet_id=9)
    assert (ack.packet_id, ack.reasons) == (9, [0, 1, 2])
    c.close()


def test_invalid_filter_closes_the_connection(broker):
    for version, reason in ((4, None), (5, 0x81)):
        raw.expect_disconnect_and_close(broker.mqtt_port, raw.subscribe(["a/#/b"], version=version),
                                        version=version, reason=reason)
        raw.expect_disconnect_and_close(broker.mqtt_port, raw.subscribe(["a+"], version=version),
                                        version=version, reason=reason)
    raw.assert_broker_works(broker.mqtt_port)


def test_resubscribe_replaces_the_options(broker, mqtt_client):
    topic = unique_topic()
    c = mqtt_client(broker)
    c.subscribe(topic, 0)
    pub = mqtt_client(broker)
    pub.publish(topic, b"a", qos=2)
    assert c.wait_messages(1)[0].qos == 0
    assert c.subscribe(topic, 2) == [2]
    pub.publish(topic, b"b", qos=2)
    got = c.wait_messages(2)
    assert (got[1].payload, got[1].qos) == (b"b", 2)
    assert_stays(lambda: c.count() == 2, 0.3, "one subscription, not two")


def test_shared_subscription(broker, mqtt_client):
    topic = unique_topic()
    members = [mqtt_client(broker, version=v) for v in ("5", "3.1.1", "5")]
    for m in members:
        m.subscribe(f"$share/workers/{topic}", 1)
    other = mqtt_client(broker)
    other.subscribe(f"$share/auditors/{topic}", 1)
    plain = mqtt_client(broker)
    plain.subscribe(topic, 1)
    pub = mqtt_client(broker)
    n = 30
    for i in range(n):
        pub.publish(topic, f"job{i}", qos=1)
    wait_for(lambda: sum(m.count() for m in members) == n, 10,
             lambda: f"{[m.count() for m in members]} of {n}")
    got = sorted(p for m in members for p in m.payloads())
    assert got == sorted(f"job{i}".encode() for i in range(n)), "each message to one member"
    assert sum(1 for m in members if m.count() > 0) >= 2, "the work is spread"
    assert len(other.wait_messages(n)) == n, "another group gets its own copy"
    assert len(plain.wait_messages(n)) == n
    assert_stays(lambda: sum(m.count() for m in members) == n, 0.3)


def test_no_local(broker, mqtt_client):
    topic = unique_topic()
    c = mqtt_client(broker, version="5")
    c.subscribe(topic, options=SubscribeOptions(qos=1, noLocal=True))
    other = mqtt_client(broker, version="5")
    other.subscribe(topic, options=SubscribeOptions(qos=1, noLocal=False))
    c.publish(topic, b"mine", qos=1)
    other.publish(topic, b"theirs", qos=1)
    assert [m.payload for m in c.wait_messages(1)] == [b"theirs"]
    assert sorted(m.payload for m in other.wait_messages(2)) == [b"mine", b"theirs"]
    assert_stays(lambda: c.count() == 1, 0.3, "no-local: our own message does not come back")
