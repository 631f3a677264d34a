"""Bad input closes that connection, with a DISCONNECT carrying the reason code on MQTT 5 (or a
CONNACK when the CONNECT itself is bad), and nothing else is affected."""

import pytest

from helpers import raw_mqtt as raw

CASES = [
    # (what, bytes after CONNECT, MQTT 5 reason)
    ("remaining length over 4 bytes", b"\x30\xff\xff\xff\xff\x01", 0x81),
    ("reserved packet type 0", b"\x00\x00", 0x81),
    ("reserved flags on SUBSCRIBE", b"\x80\x06\x00\x01\x00\x01a\x00", 0x81),
    ("PUBLISH QoS 3", b"\x36\x05\x00\x01t\x00\x01", 0x81),
    ("wildcard in a PUBLISH topic", None, 0x90),
    ("topic not UTF-8", None, 0x81),
    ("topic with U+0000", None, 0x81),
    ("topic with a surrogate", None, 0x81),
    ("unknown property", None, 0x81),
    ("property not allowed in PUBLISH", None, 0x81),
    ("server packet from a client", b"\x90\x03\x00\x01\x00", 0x82),
]


def case_bytes(what, data, version):
    if data is not None:
        return data
    if what == "wildcard in a PUBLISH topic":
        return raw.publish("a/+/b", b"x", version=version)
    if what == "topic not UTF-8":
        return raw.publish(b"\xc3\x28", b"x", version=version)
    if what == "topic with U+0000":
        return raw.publish(b"a\x00b", b"x", version=version)
    if what == "topic with a surrogate":
        return raw.publish(b"\xed\xa0\x80", b"x", version=version)
    if what == "unknown property":
        return raw.packet(raw.PUBLISH, 0, raw.string("t") + b"\x02\x7f\x00")
    if what == "property not allowed in PUBLISH":
        return raw.packet(raw.PUBLISH, 0, raw.string("t") + raw.properties({"session_expiry_interval": 1}))
    raise AssertionError(what)


@pytest.mark.parametrize("what,data,reason", CASES, ids=[c[0] for c in CASES])
def test_bad_packet_mqtt5(broker, what, data, reason):
    packets = raw.expect_disconnect_and_close(broker.mqtt_port, case_bytes(what, data, 5), version=5,
                                              reason=reason)
    assert packets[-1].props.get("reason_string"), "the DISCONNECT says why"
    raw.assert_broker_works(broker.mqtt_port)


@pytest.mark.parametrize("what,data,reason", [c for c in CASES if c[0] not in (
    "unknown property", "property not allowed in PUBLISH")], ids=lambda x: x if isinstance(x, str) else "")
def test_bad_packet_mqtt311(broker, what, data, reason):
    packets = raw.expect_disconnect_and_close(broker.mqtt_port, case_bytes(what, data, 4), version=4)
    assert packets == [], "MQTT 3.1.1 has no DISCONNECT from the server: just closed"
    raw.assert_broker_works(broker.mqtt_port)


def short_connect():
    """A CONNECT whose remaining length ends inside the client id."""
    good = raw.connect("x")
    return bytes([good[0], good[1] - 1]) + good[2:-1]


def test_bad_connects(broker):
    bad = {
        "wrong protocol name": raw.connect("x").replace(b"MQTT", b"MQTX"),
        "reserved connect flag": raw.connect("x").replace(b"MQTT\x04\x02", b"MQTT\x04\x03"),
        "will flags without will": raw.connect("x").replace(b"MQTT\x04\x02", b"MQTT\x04\x2a"),
        "client id not UTF-8": raw.packet(raw.CONNECT, 0, raw.string("MQTT") + b"\x04\x02\x00\x3c"
                                          + raw.string(b"\xff")),
        "fields past the remaining length": short_connect(),
    }
    for what, data in bad.items():
        c = raw.RawMqtt(broker.mqtt_port, 4)
        c.send(data)
        assert c.read_until_closed() == [], what
    # MQTT 5: a bad CONNECT is answered with a CONNACK naming the problem.
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("x", version=5).replace(b"MQTT\x05\x02", b"MQTT\x05\x03"))
    packets = c.read_until_closed()
    assert [(p.type, p.reason) for p in packets] == [(raw.CONNACK, 0x81)]
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("x", version=5, props={"topic_alias": 1}))
    assert [(p.type, p.reason) for p in c.read_until_closed()] == [(raw.CONNACK, 0x81)]
    raw.assert_broker_works(broker.mqtt_port)


def test_garbage_and_half_packets(broker):
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.send(b"GET / HTTP/1.1\r\n\r\n")
    assert c.read_until_closed() == []
    # A client that stops half-way through a packet just holds its own connection.
    half = raw.RawMqtt(broker.mqtt_port, 4)
    half.connect("half")
    half.send(raw.publish("t", b"x" * 100)[:20])
    raw.assert_broker_works(broker.mqtt_port)
    half.close()


def test_bad_input_does_not_disturb_others(broker):
    good = raw.RawMqtt(broker.mqtt_port, 5)
    good.connect("bystander")
    good.subscribe([("bystander/t", 1)])
    for data in (b"\x30\xff\xff\xff\xff\x01", raw.publish("a/#", b"x", version=5)):
        raw.expect_disconnect_and_close(broker.mqtt_port, data, version=5)
    good.send(raw.publish("bystander/t", b"fine", qos=1, packet_id=1, version=5))
    got = [good.read(), good.read()]
    assert sorted(p.type for p in got) == [raw.PUBLISH, raw.PUBACK]
    good.close()
