"""PUBLISH at QoS 0, 1 and 2 in both directions: the acknowledgement flows, exactly-once for QoS 2,
delivered QoS = min(published, subscribed), MQTT 5 properties end to end, topic aliases both
ways, receive maximum as flow control, maximum packet size, message expiry; mosquitto clients."""

import queue
import threading
import time

import pytest

from helpers import raw_mqtt as raw
from helpers.mqtt_clients import (PacketTypes, mosquitto_pub, mqtt_client, props, start_mosquitto_sub,  # noqa: F401
                                  unique_topic)
from helpers.wait import assert_stays, wait_for


@pytest.mark.parametrize("version", ["3.1", "3.1.1", "5"])
@pytest.mark.parametrize("qos", [0, 1, 2])
def test_pub_sub_each_qos(broker, mqtt_client, version, qos):
    topic = unique_topic()
    sub = mqtt_client(broker, version=version)
    assert sub.subscribe(topic, qos) == [qos]
    pub = mqtt_client(broker, version=version)
    bodies = [f"{qos}-{i}".encode() for i in range(10)] + [b"", bytes(range(256))]
    for b in bodies:
        pub.publish(topic, b, qos=qos)
    got = sub.wait_messages(len(bodies))
    assert [m.payload for m in got] == bodies, "in order, binary-safe"
    assert {m.qos for m in got} == {qos}
    assert_stays(lambda: sub.count() == len(bodies), 0.2)


@pytest.mark.parametrize("pub_qos,sub_qos", [(2, 0), (2, 1), (1, 2), (0, 2), (1, 0)])
def test_delivered_qos_is_the_minimum(broker, mqtt_client, pub_qos, sub_qos):
    topic = unique_topic()
    sub = mqtt_client(broker, version="5")
    sub.subscribe(topic, sub_qos)
    mqtt_client(broker).publish(topic, b"x", qos=pub_qos)
    assert sub.wait_messages(1)[0].qos == min(pub_qos, sub_qos)


def test_qos2_inbound_exactly_once(broker, mqtt_client):
    """A QoS 2 PUBLISH sent again with DUP before PUBREL is not routed again; PUBREC comes
    back each time; PUBREL completes it; the packet id can then carry a new message."""
    topic = unique_topic()
    sub = mqtt_client(broker)
    sub.subscribe(topic, 2)
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("q2in")
    c.send(raw.publish(topic, b"once", qos=2, packet_id=5))
    assert c.expect(raw.PUBREC).packet_id == 5
    c.send(raw.publish(topic, b"once", qos=2, packet_id=5, dup=True))
    assert c.expect(raw.PUBREC).packet_id == 5
    c.send(raw.ack(raw.PUBREL, 5))
    assert c.expect(raw.PUBCOMP).packet_id == 5
    c.send(raw.publish(topic, b"next", qos=2, packet_id=5))
    c.expect(raw.PUBREC)
    c.send(raw.ack(raw.PUBREL, 5))
    c.expect(raw.PUBCOMP)
    assert [m.payload for m in sub.wait_messages(2)] == [b"once", b"next"]
    assert_stays(lambda: sub.count() == 2, 0.3, "the duplicate must not be delivered")
    # PUBREL for an id nobody used: PUBCOMP (MQTT 5 says 'packet identifier not found').
    c5 = raw.RawMqtt(broker.mqtt_port, 5)
    c5.connect("q2in5")
    c5.send(raw.ack(raw.PUBREL, 77, version=5))
    assert c5.expect(raw.PUBCOMP).reason == 0x92


def test_qos2_outbound_flow(broker, mqtt_client):
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("q2out")
    c.subscribe([(topic, 2)])
    mqtt_client(broker).publish(topic, b"exactly", qos=2)
    p = c.expect(raw.PUBLISH)
    assert (p.qos, p.payload, p.dup) == (2, b"exactly", False)
    c.send(raw.ack(raw.PUBREC, p.packet_id))
    assert c.expect(raw.PUBREL).packet_id == p.packet_id
    c.send(raw.ack(raw.PUBCOMP, p.packet_id))
    c.send(raw.PINGREQ_BYTES)
    c.expect(raw.PINGRESP)  # nothing else came: no resend
    c.close()


def test_qos1_unacknowledged_is_redelivered_with_dup(broker, mqtt_client):
    """A persistent session's QoS 1 message that was sent but never acknowledged comes again,
    flagged DUP, when the client reconnects."""
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("redeliver", clean=False)
    c.subscribe([(topic, 1)])
    mqtt_client(broker).publish(topic, b"again", qos=1)
    first = c.expect(raw.PUBLISH)
    assert not first.dup
    c.close()  # no PUBACK
    c = raw.RawMqtt(broker.mqtt_port, 4)
    assert c.connect("redeliver", clean=False).session_present
    again = c.expect(raw.PUBLISH)
    assert (again.payload, again.dup, again.qos) == (b"again", True, 1)
    c.send(raw.ack(raw.PUBACK, again.packet_id))
    c.close()


def test_mqtt5_properties_end_to_end(broker, mqtt_client):
    topic = unique_topic()
    sub = mqtt_client(broker, version="5")
    sub.subscribe(topic, 1)
    pub = mqtt_client(broker, version="5")
    p = props(PacketTypes.PUBLISH, PayloadFormatIndicator=1, MessageExpiryInterval=120,
              ContentType="application/json", ResponseTopic="replies/here", CorrelationData=b"\x00\x01corr",
              UserProperty=[("k1", "v1"), ("k2", "v2"), ("k1", "again")])
    pub.publish(topic, b'{"a": 1}', qos=1, properties=p)
    m = sub.wait_messages(1)[0]
    got = m.properties
    assert got.PayloadFormatIndicator == 1
    assert 118 <= got.MessageExpiryInterval <= 120
    assert got.ContentType == "application/json"
    assert got.ResponseTopic == "replies/here"
    assert got.CorrelationData == b"\x00\x01corr"
    assert got.UserProperty == [("k1", "v1"), ("k2", "v2"), ("k1", "again")]


def test_payload_format_invalid(broker):
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("pfi")
    c.send(raw.publish("pfi/t", b"\xff\xfe", qos=1, packet_id=3, version=5,
                       props={"payload_format_indicator": 1}))
    ack = c.expect(raw.PUBACK)
    assert (ack.packet_id, ack.reason) == (3, 0x99)
    c.close()


def test_message_expiry(broker, mqtt_client):
    topic = unique_topic()
    cid = unique_topic("exp")
    sub = mqtt_client(broker, version="5", client_id=cid, clean=True,
                      properties=props(PacketTypes.CONNECT, SessionExpiryInterval=60))
    sub.subscribe(topic, 1)
    sub.disconnect()
    pub = mqtt_client(broker, version="5")
    pub.publish(topic, b"short", qos=1, properties=props(PacketTypes.PUBLISH, MessageExpiryInterval=1))
    pub.publish(topic, b"long", qos=1, properties=props(PacketTypes.PUBLISH, MessageExpiryInterval=60))
    time.sleep(1.5)  # the message's own lifetime has to pass; nothing to poll for
    sub = mqtt_client(broker, version="5", client_id=cid, clean=False,
                      properties=props(PacketTypes.CONNECT, SessionExpiryInterval=60))
    got = sub.wait_messages(1)
    assert [m.payload for m in got] == [b"long"]
    assert got[0].properties.MessageExpiryInterval < 60
    assert_stays(lambda: sub.count() == 1, 0.3, "the expired message must not come")


def test_subscription_identifiers(broker, mqtt_client):
    base = unique_topic()
    c = mqtt_client(broker, version="5")
    c.subscribe(f"{base}/+", 1, properties=props(PacketTypes.SUBSCRIBE, SubscriptionIdentifier=7))
    c.subscribe(f"{base}/x", 1, properties=props(PacketTypes.SUBSCRIBE, SubscriptionIdentifier=99))
    mqtt_client(broker).publish(f"{base}/x", b"both", qos=1)
    got = c.wait_messages(2)
    ids = sorted(m.properties.SubscriptionIdentifier[0] for m in got)
    assert ids == [7, 99], "one copy per matching subscription, each with its identifier"
    assert_stays(lambda: c.count() == 2, 0.2)


def test_client_publish_with_subscription_identifier_is_a_protocol_error(broker):
    raw.expect_disconnect_and_close(broker.mqtt_port, raw.publish("a", b"x", version=5,
                                                                  props={"subscription_identifier": 3}),
                                    version=5, reason=0x82)


def test_topic_alias_inbound(broker, mqtt_client):
    topic = unique_topic()
    sub = mqtt_client(broker)
    sub.subscribe(topic, 1)
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("alias-in")
    c.send(raw.publish(topic, b"one", qos=1, packet_id=1, version=5, props={"topic_alias": 3}))
    c.expect(raw.PUBACK)
    c.send(raw.publish("", b"two", qos=1, packet_id=2, version=5, props={"topic_alias": 3}))
    c.expect(raw.PUBACK)
    assert [m.payload for m in sub.wait_messages(2)] == [b"one", b"two"]
    assert {m.topic for m in sub.wait_messages(2)} == {topic}
    # An unknown alias is a protocol error; one past the maximum is 'topic alias invalid'.
    raw.expect_disconnect_and_close(broker.mqtt_port, raw.publish("", b"x", version=5, props={"topic_alias": 9}),
                                    version=5, reason=0x82)
    raw.expect_disconnect_and_close(broker.mqtt_port,
                                    raw.publish("t", b"x", version=5, props={"topic_alias": 17}),
                                    version=5, reason=0x94)


def test_topic_alias_outbound(broker, mqtt_client):
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("alias-out", props={"topic_alias_maximum": 2})
    c.subscribe([(topic, 0)], props=None)
    pub = mqtt_client(broker)
    for i in range(3):
        pub.publish(topic, f"m{i}", qos=1)
    first, second, third = (c.expect(raw.PUBLISH) for _ in range(3))
    assert first.topic == topic and first.props["topic_alias"] >= 1
    assert second.topic == "" and second.props["topic_alias"] == first.props["topic_alias"]
    assert third.topic == ""


def test_receive_maximum_is_flow_control(broker, mqtt_client):
    """With receive maximum 2 the broker has at most two QoS 1 messages unacknowledged."""
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("flow", props={"receive_maximum": 2})
    c.subscribe([(topic, 1)])
    pub = mqtt_client(broker)
    for i in range(6):
        pub.publish(topic, f"m{i}", qos=1)
    got = [c.expect(raw.PUBLISH), c.expect(raw.PUBLISH)]
    with pytest.raises(TimeoutError):
        c.read(0.4)
    while len(got) < 6:
        c.send(raw.ack(raw.PUBACK, got[len(got) - 2].packet_id if len(got) == 2 else got[-1].packet_id))
        got.append(c.expect(raw.PUBLISH))
        if len(got) < 6:
            with pytest.raises(TimeoutError):
                c.read(0.1)
    assert [p.payload for p in got] == [f"m{i}".encode() for i in range(6)]
    c.close()


def test_receive_maximum_exceeded(broker_factory):
    broker = broker_factory(config="[mqtt]\nreceive_maximum = 2\n")
    c = raw.RawMqtt(broker.mqtt_port, 5)
    ack = c.connect("toomany")
    assert ack.props["receive_maximum"] == 2
    # Three QoS 2 PUBLISHes without PUBREL: the third exceeds the maximum.
    data = b"".join(raw.publish("rm/t", b"x", qos=2, packet_id=i, version=5) for i in (1, 2, 3))
    c.send(data)
    packets = c.read_until_closed()
    assert packets[-1].type == raw.DISCONNECT and packets[-1].reason == 0x93, packets


def test_client_maximum_packet_size(broker, mqtt_client):
    topic = unique_topic()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("small", props={"maximum_packet_size": 100})
    c.subscribe([(topic, 1)])
    pub = mqtt_client(broker)
    pub.publish(topic, b"x" * 200, qos=1)  # too large for this client: dropped
    pub.publish(topic, b"fits", qos=1)
    p = c.expect(raw.PUBLISH)
    assert p.payload == b"fits"
    c.send(raw.ack(raw.PUBACK, p.packet_id))
    c.close()


def test_broker_maximum_packet_size(broker_factory):
    broker = broker_factory(config="[mqtt]\nmax_packet_size = 1024\n")
    packets = raw.expect_disconnect_and_close(broker.mqtt_port, raw.publish("big", b"x" * 2000, version=5),
                                              version=5, reason=0x95)
    assert packets
    raw.expect_disconnect_and_close(broker.mqtt_port, raw.publish("big", b"x" * 2000), version=4)
    raw.assert_broker_works(broker.mqtt_port)


class LineReader:
    """mosquitto_sub's output lines, read by a thread so a test can wait with a timeout."""

    def __init__(self, proc):
        self.lines = queue.Queue()
        self.thread = threading.Thread(target=self._run, args=(proc,), daemon=True)
        self.thread.start()

    def _run(self, proc):
        for line in proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def next(self, timeout):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None


@pytest.mark.parametrize("version", ["3.1", "3.1.1", "5"])
def test_mosquitto_clients(broker, version):
    topic = unique_topic("mosq/")
    sub = start_mosquitto_sub(broker.mqtt_port, topic, 100, qos=1, version=version)
    reader = LineReader(sub)
    try:
        # Until mosquitto_sub has subscribed, markers are lost: publish them until one shows.
        def marker_seen():
            r = mosquitto_pub(broker.mqtt_port, topic, "marker", qos=1, version=version)
            assert r.returncode == 0, r.stderr
            return reader.next(0.3) == f"{topic} marker"
        wait_for(marker_seen, 10, "mosquitto_sub to receive a marker")
        for i in range(2):
            r = mosquitto_pub(broker.mqtt_port, topic, f"hello {i}", qos=i + 1, version=version)
            assert r.returncode == 0, r.stderr
        lines = []
        while len(lines) < 2:
            line = reader.next(5)
            assert line is not None, f"mosquitto_sub printed {lines}"
            if line != f"{topic} marker":
                lines.append(line)
        assert lines == [f"{topic} hello 0", f"{topic} hello 1"]
    finally:
        sub.kill()
        sub.wait()
