"""Will messages: published when a connection ends without DISCONNECT (dropped socket,
keep-alive timeout, take-over), not after a clean DISCONNECT; MQTT 5 'disconnect with will' and
will delay interval."""

import time

import pytest

from helpers import raw_mqtt as raw
from helpers.mqtt_clients import PacketTypes, mqtt_client, props, unique_topic  # noqa: F401
from helpers.wait import assert_stays


def watcher(broker, mqtt_client, topic):
    w = mqtt_client(broker)
    w.subscribe(topic, 1)
    return w


@pytest.mark.parametrize("version", ["3.1", "3.1.1", "5"])
def test_will_on_abnormal_end(broker, mqtt_client, version):
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    c = mqtt_client(broker, version=version, will=dict(topic=topic, payload=b"gone", qos=1, retain=False))
    c.drop()
    m = w.wait_messages(1)[0]
    assert (m.topic, m.payload, m.qos) == (topic, b"gone", 1)


@pytest.mark.parametrize("version", ["3.1.1", "5"])
def test_no_will_after_disconnect(broker, mqtt_client, version):
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    c = mqtt_client(broker, version=version, will=dict(topic=topic, payload=b"gone", qos=1))
    c.disconnect()
    mqtt_client(broker).publish(topic, b"marker", qos=1)
    assert [m.payload for m in w.wait_messages(1)] == [b"marker"]
    assert_stays(lambda: w.count() == 1, 0.3)


def test_disconnect_with_will_message(broker, mqtt_client):
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    c = mqtt_client(broker, version="5", will=dict(topic=topic, payload=b"asked for", qos=1))
    c.disconnect(reasoncode=0x04)
    assert w.wait_messages(1)[0].payload == b"asked for"


def test_will_on_keep_alive_timeout(broker, mqtt_client):
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("silent", keep_alive=1, will=(topic, b"timed out", 1, False))
    assert w.wait_messages(1, timeout=5)[0].payload == b"timed out"
    c.close()


def test_will_on_takeover(broker, mqtt_client):
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    cid = unique_topic("tw")
    first = mqtt_client(broker, client_id=cid, will=dict(topic=topic, payload=b"taken", qos=1))
    mqtt_client(broker, client_id=cid)
    first.wait_disconnected()
    assert w.wait_messages(1)[0].payload == b"taken"


def test_retained_will(broker, mqtt_client):
    topic = unique_topic("will/")
    c = mqtt_client(broker, will=dict(topic=topic, payload=b"offline", qos=1, retain=True))
    c.drop()
    def arrived_retained():
        s = mqtt_client(broker)
        s.subscribe(topic, 1)
        try:
            return s.wait_messages(1, timeout=0.5)[0].retain == 1
        except AssertionError:
            return False
    from helpers.wait import wait_for
    wait_for(arrived_retained, 5, "the retained will")


def test_will_properties(broker, mqtt_client):
    topic = unique_topic("will/")
    w = mqtt_client(broker, version="5")
    w.subscribe(topic, 1)
    will_props = props(PacketTypes.WILLMESSAGE, ContentType="text/plain", UserProperty=[("why", "test")])
    c = mqtt_client(broker, version="5", will=dict(topic=topic, payload=b"p", qos=1, properties=will_props))
    c.drop()
    m = w.wait_messages(1)[0]
    assert m.properties.ContentType == "text/plain"
    assert m.properties.UserProperty == [("why", "test")]


def test_will_delay(broker, mqtt_client):
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    cid = unique_topic("wd")
    connect_props = props(PacketTypes.CONNECT, SessionExpiryInterval=60)
    will_props = props(PacketTypes.WILLMESSAGE, WillDelayInterval=2)
    c = mqtt_client(broker, version="5", client_id=cid, properties=connect_props,
                    will=dict(topic=topic, payload=b"late", qos=1, properties=will_props))
    dropped = time.monotonic()
    c.drop()
    m = w.wait_messages(1, timeout=6)[0]
    assert m.payload == b"late"
    assert time.monotonic() - dropped >= 1.8, "not before the will delay"


def test_will_delay_cancelled_by_reconnect(broker, mqtt_client):
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    cid = unique_topic("wdc")
    connect_props = props(PacketTypes.CONNECT, SessionExpiryInterval=60)
    will_props = props(PacketTypes.WILLMESSAGE, WillDelayInterval=2)
    c = mqtt_client(broker, version="5", client_id=cid, properties=connect_props,
                    will=dict(topic=topic, payload=b"late", qos=1, properties=will_props))
    c.drop()
    back = mqtt_client(broker, version="5", client_id=cid, clean=False, properties=connect_props)
    assert back.connack["flags"]["session present"] == 1
    mqtt_client(broker).publish(topic, b"marker", qos=1)
    assert w.wait_messages(1)[0].payload == b"marker"
    assert_stays(lambda: w.count() == 1, 3.0, "the will must not come once the client is back")


def test_will_delay_ends_with_session_expiry(broker, mqtt_client):
    """The will goes at the earlier of its delay and the session's end."""
    topic = unique_topic("will/")
    w = watcher(broker, mqtt_client, topic)
    connect_props = props(PacketTypes.CONNECT, SessionExpiryInterval=1)
    will_props = props(PacketTypes.WILLMESSAGE, WillDelayInterval=60)
    c = mqtt_client(broker, version="5", properties=connect_props,
                    will=dict(topic=topic, payload=b"session over", qos=1, properties=will_props))
    c.drop()
    assert w.wait_messages(1, timeout=5)[0].payload == b"session over"
