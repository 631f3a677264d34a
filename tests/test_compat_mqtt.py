"""What real MQTT clients' test suites (paho's interoperability tests, paho.mqtt.c's, Mosquitto's
broker tests) expect of a broker, where Carrier used to differ: reason codes for properties in the
wrong packet and wildcard response topics, MQTT 3.1's own rules for 3.1 clients, the client's
maximum packet size on every packet, and "no matching subscribers" (0x10) for MQTT 5 publishers.
Raw bytes where a real client would not send the packet or cannot show the reply, paho where it
can."""

import struct

import pytest

from helpers import raw_mqtt as raw
from helpers.mqtt_clients import mqtt_client, props, unique_topic  # noqa: F401 (fixture)
from helpers.wait import assert_stays
from paho.mqtt.packettypes import PacketTypes


def wire_size(p):
    """The size of a packet as read: first byte, remaining length, body."""
    return 1 + len(raw.varint(len(p.body))) + len(p.body)


# --- properties in the wrong packet: Malformed Packet (MQTT 5 2.2.2.2), as mosquitto --------------

def test_property_not_allowed_in_subscribe_is_malformed(broker, mqtt_client):
    sub = mqtt_client(broker, version="5")
    topic = unique_topic()
    sub.subscribe(topic, 1)
    body = struct.pack("!H", 1) + raw.properties({"payload_format_indicator": 1}) + raw.string("a/b") + b"\x01"
    packets = raw.expect_disconnect_and_close(broker.mqtt_port, raw.packet(raw.SUBSCRIBE, 0x02, body), version=5,
                                              reason=0x81)
    assert "payload format indicator" in packets[-1].props.get("reason_string", "")
    # Others are untouched.
    pub = mqtt_client(broker, version="5")
    pub.publish(topic, b"still here", qos=1)
    assert sub.wait_messages(1)[0].payload == b"still here"
    raw.assert_broker_works(broker.mqtt_port, version=5)


def test_property_not_allowed_in_connect_is_malformed(broker):
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("pna", version=5, props={"topic_alias": 1}))
    assert [(p.type, p.reason) for p in c.read_until_closed()] == [(raw.CONNACK, 0x81)]
    c.close()


# --- a response topic is a topic name: no wildcards (MQTT-3.3.2-14), protocol error as mosquitto --

@pytest.mark.parametrize("response_topic", ["replies/+", "replies/#"])
def test_response_topic_with_wildcard_is_a_protocol_error(broker, mqtt_client, response_topic):
    topic = unique_topic()
    sub = mqtt_client(broker, version="5")
    sub.subscribe(topic, 1)
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect(unique_topic("rt"))
    c.send(raw.publish(topic, b"bad", qos=1, packet_id=4, version=5, props={"response_topic": response_topic}))
    packets = c.read_until_closed()
    assert [(p.type, p.reason) for p in packets] == [(raw.DISCONNECT, 0x82)], "no PUBACK, a DISCONNECT 0x82"
    assert "response topic" in packets[-1].props.get("reason_string", "")
    c.close()
    # Not forwarded; a good response topic still is.
    good = mqtt_client(broker, version="5")
    good.publish(topic, b"good", qos=1, properties=props(PacketTypes.PUBLISH, ResponseTopic="replies/1"))
    got = sub.wait_messages(1)
    assert [m.payload for m in got] == [b"good"]
    assert got[0].properties.ResponseTopic == "replies/1"
    assert_stays(lambda: sub.count() == 1, 0.2)


def test_will_response_topic_with_wildcard_is_refused(broker):
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("wrt", version=5, will=("w/t", b"x", 0, False, {"response_topic": "r/#"})))
    assert [(p.type, p.reason) for p in c.read_until_closed()] == [(raw.CONNACK, 0x82)]
    c.close()
    raw.assert_broker_works(broker.mqtt_port, version=5)


# --- MQTT 3.1 clients get 3.1's rules ----------------------------------------------------------

def test_mqtt31_resent_pubrel_with_dup(broker, mqtt_client):
    """3.1 sets DUP on a resent PUBREL (fixed header 0x6A); 3.1.1 forbids it."""
    topic = unique_topic()
    sub = mqtt_client(broker, version="3.1")
    sub.subscribe(topic, 2)
    c = raw.RawMqtt(broker.mqtt_port, 3)
    c.connect("pubrel-dup-31", version=3)
    c.send(raw.publish(topic, b"once", qos=2, packet_id=5))
    assert c.expect(raw.PUBREC).packet_id == 5
    c.send(raw.packet(raw.PUBREL, 0x0A, struct.pack("!H", 5)))  # DUP=1, QoS 1
    assert c.expect(raw.PUBCOMP).packet_id == 5
    # SUBSCRIBE and UNSUBSCRIBE resent with DUP, too.
    c.send(raw.packet(raw.SUBSCRIBE, 0x0A, struct.pack("!H", 6) + raw.string(topic + "/x") + b"\x01"))
    assert c.expect(raw.SUBACK).reasons == [1]
    c.send(raw.packet(raw.UNSUBSCRIBE, 0x0A, struct.pack("!H", 7) + raw.string(topic + "/x")))
    assert c.expect(raw.UNSUBACK).packet_id == 7
    assert [m.payload for m in sub.wait_messages(1)] == [b"once"]
    assert_stays(lambda: sub.count() == 1, 0.2)
    c.close()
    # 3.1.1 keeps its rule: malformed, closed.
    raw.expect_disconnect_and_close(broker.mqtt_port, raw.packet(raw.PUBREL, 0x0A, struct.pack("!H", 5)), version=4)
    raw.assert_broker_works(broker.mqtt_port, version=3)


def test_mqtt31_connect_flags(broker):
    """3.1 defines no reserved CONNECT bit and no will QoS / retain check without a will; a user
    name or password flag with the field missing is taken without it (mosquitto does the same)."""
    base = raw.connect("flags-31", version=3)
    # Byte 9 of a 3.1 CONNECT (after the fixed header, "MQIsdp" and the level) holds the flags.
    header = 2
    flags_at = header + 2 + len("MQIsdp") + 1
    assert base[flags_at] == 0x02
    for flags in (0x03, 0x02 | 0x08 | 0x20, 0x02 | 0x80, 0x02 | 0x80 | 0x40):
        c = raw.RawMqtt(broker.mqtt_port, 3)
        data = bytearray(base)
        data[flags_at] = flags
        c.send(bytes(data))
        ack = c.expect(raw.CONNACK)
        assert ack.reason == 0, f"flags {flags:#x}: {ack}"
        c.close()
    # The CONNECT's fixed-header flags are not checked either.
    c = raw.RawMqtt(broker.mqtt_port, 3)
    c.send(bytes([0x12]) + base[1:])
    assert c.expect(raw.CONNACK).reason == 0
    c.close()
    # 3.1.1 refuses each of them (closing).
    for data in (raw.connect("flags-311", version=4).replace(b"MQTT\x04\x02", b"MQTT\x04\x03"),
                 bytes([0x12]) + raw.connect("flags-311", version=4)[1:]):
        c = raw.RawMqtt(broker.mqtt_port, 4)
        c.send(data)
        assert c.read_until_closed() == []
        c.close()
    raw.assert_broker_works(broker.mqtt_port, version=3)


def test_mqtt31_client_id_at_most_23_characters(broker, mqtt_client):
    c = raw.RawMqtt(broker.mqtt_port, 3)
    c.send(raw.connect("x" * 24, version=3))
    assert [(p.type, p.reason) for p in c.read_until_closed()] == [(raw.CONNACK, 2)], "identifier rejected"
    c.close()
    # Characters, not bytes: 23 two-byte characters are fine.
    c = raw.RawMqtt(broker.mqtt_port, 3)
    c.connect("é" * 23, version=3)
    c.close()
    # paho's own 3.1 client ids (22 characters) and a 23-character one work.
    auto = mqtt_client(broker, version="3.1", client_id="")
    auto.subscribe(unique_topic(), 1)
    mqtt_client(broker, version="3.1", client_id="y" * 23)
    # 3.1.1 has no such limit.
    mqtt_client(broker, version="3.1.1", client_id="z" * 100)


# --- the client's maximum packet size binds every packet (MQTT-3.1.2-24) ---------------------

def test_connack_larger_than_the_client_maximum_is_not_sent(broker):
    """A client declaring a 2-byte maximum gets no CONNACK at all: closed, as mosquitto does."""
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("tiny", version=5, props={"maximum_packet_size": 2}))
    assert c.read_until_closed() == []
    c.close()
    # The exact size of the CONNACK fits; one byte less does not.
    c = raw.RawMqtt(broker.mqtt_port, 5)
    size = wire_size(c.connect("measure", version=5))
    c.close()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    assert wire_size(c.connect("exact", version=5, props={"maximum_packet_size": size})) == size
    c.close()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("short", version=5, props={"maximum_packet_size": size - 1}))
    assert c.read_until_closed() == []
    c.close()
    raw.assert_broker_works(broker.mqtt_port, version=5)


def test_reason_string_dropped_to_fit(broker):
    """A refusing CONNACK and a failed PUBACK lose their reason string rather than go over."""
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("auth", version=5, props={"authentication_method": "x" * 100, "maximum_packet_size": 8}))
    packets = c.read_until_closed()
    assert [(p.type, p.reason) for p in packets] == [(raw.CONNACK, 0x8C)]
    assert "reason_string" not in packets[0].props and wire_size(packets[0]) <= 8
    c.close()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    size = wire_size(c.connect("pfi", version=5, props={"maximum_packet_size": 64}))
    assert size <= 64
    c.send(raw.publish("pfi/t", b"\xff\xfe", qos=1, packet_id=3, version=5, props={"payload_format_indicator": 1}))
    ack = c.expect(raw.PUBACK)
    assert (ack.packet_id, ack.reason) == (3, 0x99)
    assert ack.props.get("reason_string"), "kept where it fits"
    c.close()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("pfi-small", version=5, props={"maximum_packet_size": 20})
    c.send(raw.publish("pfi/t", b"\xff\xfe", qos=1, packet_id=3, version=5, props={"payload_format_indicator": 1}))
    ack = c.expect(raw.PUBACK)
    assert (ack.packet_id, ack.reason) == (3, 0x99)
    assert "reason_string" not in ack.props and wire_size(ack) <= 20
    c.close()


# --- "no matching subscribers" (0x10) for MQTT 5 publishers, as mosquitto ----------------------

def test_puback_no_matching_subscribers(broker, mqtt_client):
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("nms")
    c.send(raw.publish(topic, b"nobody", qos=1, packet_id=1, version=5))
    assert c.expect(raw.PUBACK).reason == 0x10
    # Retained with nobody subscribed: still 0x10 (mosquitto's 03-publish-qos1-no-subscribers-v5),
    # and still retained.
    c.send(raw.publish(topic, b"kept", qos=1, packet_id=2, retain=True, version=5))
    assert c.expect(raw.PUBACK).reason == 0x10
    sub = mqtt_client(broker, version="5")
    sub.subscribe(topic, 1)
    assert sub.wait_messages(1)[0].payload == b"kept"
    # With a subscriber: success.
    c.send(raw.publish(topic, b"somebody", qos=1, packet_id=3, version=5))
    assert c.expect(raw.PUBACK).reason == 0
    # QoS 2: PUBREC 0x10, and the exchange completes.
    other = unique_topic()
    c.send(raw.publish(other, b"nobody2", qos=2, packet_id=4, version=5))
    assert c.expect(raw.PUBREC).reason == 0x10
    c.send(raw.ack(raw.PUBREL, 4, version=5))
    assert c.expect(raw.PUBCOMP).packet_id == 4
    c.close()
    # paho 5 publishers take 0x10 as success.
    pub = mqtt_client(broker, version="5")
    pub.publish(unique_topic(), b"q1", qos=1)
    pub.publish(unique_topic(), b"q2", qos=2)


def test_no_matching_subscribers_only_for_mqtt5(broker):
    for version in (3, 4):
        c = raw.RawMqtt(broker.mqtt_port, version)
        c.connect(f"nms-{version}", version=version)
        c.send(raw.publish(unique_topic(), b"nobody", qos=1, packet_id=1, version=version))
        ack = c.expect(raw.PUBACK)
        assert len(ack.body) == 2, "a 3.x PUBACK is the packet id only"
        c.close()


def test_no_local_subscription_alone_is_no_match(broker):
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("nms-nolocal")
    c.subscribe([(topic, 0x01 | 0x04)])  # QoS 1, no local
    c.send(raw.publish(topic, b"mine", qos=1, packet_id=1, version=5))
    assert c.expect(raw.PUBACK).reason == 0x10
    c.close()
