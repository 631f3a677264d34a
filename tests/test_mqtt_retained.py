"""Retained messages: kept per topic, sent to new subscriptions with RETAIN set, replaced,
cleared by an empty payload, persisted across a restart; retain handling and
retain-as-published (MQTT 5)."""

import pytest

from helpers import raw_mqtt as raw
from helpers.mqtt_clients import SubscribeOptions, mqtt_client, unique_topic  # noqa: F401
from helpers.wait import assert_stays


@pytest.mark.parametrize("version", ["3.1.1", "5"])
def test_retained_goes_to_new_subscribers(broker, mqtt_client, version):
    topic = unique_topic()
    pub = mqtt_client(broker, version=version)
    pub.publish(topic, b"first", qos=1, retain=True)
    pub.publish(topic, b"latest", qos=1, retain=True)
    sub = mqtt_client(broker, version=version)
    sub.subscribe(topic, 1)
    m = sub.wait_messages(1)[0]
    assert (m.payload, m.retain) == (b"latest", 1)
    # A live message on the same topic arrives without RETAIN (3.1.1 3.3.1.3).
    pub.publish(topic, b"live", qos=1, retain=True)
    live = sub.wait_messages(2)[1]
    assert (live.payload, live.retain) == (b"live", 0)
    assert_stays(lambda: sub.count() == 2, 0.2)


def test_wildcard_subscription_gets_every_retained_topic(broker, mqtt_client):
    base = unique_topic()
    pub = mqtt_client(broker)
    for t in (base, f"{base}/a", f"{base}/a/b", f"{base}x"):
        pub.publish(t, t.encode(), qos=1, retain=True)
    sub = mqtt_client(broker)
    sub.subscribe(f"{base}/#", 0)
    assert sorted(m.topic for m in sub.wait_messages(3)) == sorted([base, f"{base}/a", f"{base}/a/b"])
    assert all(m.retain for m in sub.messages)
    assert_stays(lambda: sub.count() == 3, 0.3)


def test_empty_payload_clears(broker, mqtt_client):
    topic = unique_topic()
    pub = mqtt_client(broker)
    pub.publish(topic, b"soon gone", qos=1, retain=True)
    pub.publish(topic, b"", qos=1, retain=True)
    sub = mqtt_client(broker)
    sub.subscribe(topic, 1)
    pub.publish(topic, b"marker", qos=1)
    assert [m.payload for m in sub.wait_messages(1)] == [b"marker"]
    assert_stays(lambda: sub.count() == 1, 0.2)


def test_retained_survives_a_restart(broker_factory, mqtt_client):
    broker = broker_factory()
    topic = unique_topic()
    pub = mqtt_client(broker)
    pub.publish(topic, b"kept", qos=1, retain=True)
    pub.close_quietly()
    broker.restart()
    sub = mqtt_client(broker)
    sub.subscribe(topic, 1)
    m = sub.wait_messages(1)[0]
    assert (m.payload, m.retain) == (b"kept", 1)


def test_retain_handling(broker, mqtt_client):
    topic = unique_topic()
    mqtt_client(broker).publish(topic, b"r", qos=1, retain=True)
    never = mqtt_client(broker, version="5")
    never.subscribe(topic, options=SubscribeOptions(qos=1, retainHandling=2))
    if_new = mqtt_client(broker, version="5")
    if_new.subscribe(topic, options=SubscribeOptions(qos=1, retainHandling=1))
    always = mqtt_client(broker, version="5")
    always.subscribe(topic, options=SubscribeOptions(qos=1, retainHandling=0))
    assert [m.payload for m in if_new.wait_messages(1)] == [b"r"]
    assert [m.payload for m in always.wait_messages(1)] == [b"r"]
    # Subscribing again: handling 1 sends nothing (the subscription exists), 0 sends again.
    if_new.subscribe(topic, options=SubscribeOptions(qos=1, retainHandling=1))
    always.subscribe(topic, options=SubscribeOptions(qos=1, retainHandling=0))
    assert [m.payload for m in always.wait_messages(2)] == [b"r", b"r"]
    assert_stays(lambda: never.count() == 0 and if_new.count() == 1, 0.3)


def test_retain_as_published(broker, mqtt_client):
    topic = unique_topic()
    rap = mqtt_client(broker, version="5")
    rap.subscribe(topic, options=SubscribeOptions(qos=1, retainAsPublished=True))
    plain = mqtt_client(broker, version="5")
    plain.subscribe(topic, options=SubscribeOptions(qos=1, retainAsPublished=False))
    pub = mqtt_client(broker)
    pub.publish(topic, b"flagged", qos=1, retain=True)
    pub.publish(topic, b"plain", qos=1, retain=False)
    assert [(m.payload, m.retain) for m in rap.wait_messages(2)] == [(b"flagged", 1), (b"plain", 0)]
    assert [(m.payload, m.retain) for m in plain.wait_messages(2)] == [(b"flagged", 0), (b"plain", 0)]


def test_shared_subscriptions_get_no_retained(broker, mqtt_client):
    topic = unique_topic()
    mqtt_client(broker).publish(topic, b"r", qos=1, retain=True)
    s = mqtt_client(broker, version="5")
    s.subscribe(f"$share/g/{topic}", 1)
    mqtt_client(broker).publish(topic, b"live", qos=1)
    assert [m.payload for m in s.wait_messages(1)] == [b"live"]
    assert_stays(lambda: s.count() == 1, 0.2)


def test_retained_with_raw_client_sets_the_flag(broker):
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("raw-retain")
    c.send(raw.publish(topic, b"r", qos=1, packet_id=1, retain=True))
    c.expect(raw.PUBACK)
    c.subscribe([(topic, 0)])
    p = c.expect(raw.PUBLISH)
    assert (p.payload, p.retain, p.qos) == (b"r", True, 0)
    c.close()
