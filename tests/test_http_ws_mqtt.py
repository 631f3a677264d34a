"""MQTT over WebSocket on the HTTP listener's GET /ws (sub-protocol `mqtt`, MQTT 5.0 / 3.1.1
section 6): paho's WebSocket transport as a real client, packets spanning frames and sharing
them, text frames refused (1003), and cross-protocol with STOMP over TCP."""

import uuid

import pytest

from helpers.mqtt_clients import MqttClient
from helpers.raw_mqtt import CONNACK, PUBLISH, SUBACK, connect, publish, subscribe
from helpers.raw_ws import TEXT, WsMqtt


@pytest.mark.parametrize("version", ["3.1.1", "5"])
def test_paho_over_websocket_publishes_and_receives(broker, version):
    topic = f"wsm/{uuid.uuid4().hex[:8]}"
    c = MqttClient(broker.http_port, version=version, websocket_path="/ws")
    try:
        c.connect()
        c.subscribe(topic, qos=1)
        c.publish(topic, b"over a websocket", qos=1)
        c.wait_messages(1)
        assert c.payloads() == [b"over a websocket"]
    finally:
        c.close_quietly()


def test_websocket_mqtt_to_tcp_stomp_and_back(broker, stomp_client):
    level = uuid.uuid4().hex[:8]
    stomp = stomp_client(broker)
    stomp.subscribe(f"/topic/wsm.{level}.out")
    c = MqttClient(broker.http_port, websocket_path="/ws")
    try:
        c.connect()
        c.subscribe(f"wsm/{level}/back", qos=1)
        c.publish(f"wsm/{level}/out", b"from ws mqtt", qos=1)
        stomp.wait_messages(1)
        assert stomp.messages[0].body == "from ws mqtt"
        stomp.send(f"/topic/wsm.{level}.back", "from tcp stomp")
        c.wait_messages(1)
        assert c.payloads() == [b"from tcp stomp"]
    finally:
        c.close_quietly()


def test_packets_span_frames_and_share_them(broker):
    c = WsMqtt(broker.http_port)
    try:
        assert c.ws.protocol == "mqtt"
        hello = connect("split-" + uuid.uuid4().hex[:6])
        for i in range(len(hello)):  # CONNECT one byte per WebSocket frame
            c.send(hello[i:i + 1])
        assert c.expect(CONNACK).reason == 0
        topic = f"wsm/{uuid.uuid4().hex[:8]}"
        # SUBSCRIBE and two PUBLISHes in one frame.
        c.send(subscribe([(topic, 0)]) + publish(topic, b"a") + publish(topic, b"b"))
        assert c.expect(SUBACK)
        got = [c.expect(PUBLISH).payload for _ in range(2)]
        assert got == [b"a", b"b"]
    finally:
        c.close()


def test_a_text_frame_closes_with_1003(broker):
    c = WsMqtt(broker.http_port)
    try:
        c.ws.send(connect("text-" + uuid.uuid4().hex[:6]), TEXT)
        assert c.ws.expect_close(1003)[0] == 1003
    finally:
        c.close()


@pytest.mark.timeout(90)
def test_a_websocket_consumer_keeps_up_with_a_burst(broker):
    """Regression: the WebSocket's writer ran inside the session's flush(), so acks of written
    deliveries staged around it were lost; the subscriber's backlog then held its publisher
    back for good. A burst over TCP to a WebSocket subscriber must flow, and the publisher stay
    served."""
    topic = f"wsm/{uuid.uuid4().hex[:8]}"
    consumer = MqttClient(broker.http_port, websocket_path="/ws")
    producer = MqttClient(broker.mqtt_port)
    try:
        consumer.connect()
        consumer.subscribe(topic, qos=1)
        producer.connect()
        for _ in range(30000):
            producer.client.publish(topic, b"x" * 1024, qos=0)
        producer.publish(topic, b"end", qos=1, timeout=60)
        consumer._wait(lambda: b"end" in [m.payload for m in consumer.messages], 60, "the burst's last message")
    finally:
        consumer.close_quietly()
        producer.close_quietly()
