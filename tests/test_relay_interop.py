"""The seed-000 relay meets the other protocols (docs/relay.md, "Mapping"): a relay peer's send
reaches STOMP and MQTT consumers as body and headers/user properties, and what they send
reaches the relay peer's mailbox."""

import uuid

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from helpers.mqtt_clients import mqtt_client  # noqa: F401
from helpers.raw_relay import Peer
from test_relay_exchanges import LISTING_14_APP, app_elements, create_pipe, listen, pipe_messages, send


def name():
    return f"x{uuid.uuid4().hex[:10]}"


def test_a_relay_send_reaches_stomp_and_mqtt_consumers(broker, stomp_client, mqtt_client):
    peer = Peer(broker.http_port)
    topic = name()
    pipe_id = create_pipe(peer, topic, "JxtaPropagate")
    stomp = stomp_client(broker)
    stomp.subscribe(f"/topic/{topic}")
    mqtt5 = mqtt_client(broker, version="5")
    mqtt5.subscribe(topic, qos=1)
    mqtt3 = mqtt_client(broker)
    mqtt3.subscribe(topic, qos=1)
    send(peer, pipe_id)
    [frame] = stomp.wait_messages(1)
    assert frame.body == "Hello"
    assert frame.headers["sender"] == "tester"
    assert frame.headers["records:fileReference"] == "3"
    assert "jxme-elements" in frame.headers
    [m5] = mqtt5.wait_messages(1)
    assert m5.payload == b"Hello"
    props = dict(m5.properties.UserProperty)
    assert props["sender"] == "tester" and props["records:fileReference"] == "3"
    [m3] = mqtt3.wait_messages(1)
    assert m3.payload == b"Hello"


def test_stomp_and_mqtt_sends_reach_the_relay_peer(broker, stomp_client, mqtt_client):
    peer = Peer(broker.http_port)
    queue, topic = name(), name()
    listen(peer, create_pipe(peer, queue))
    listen(peer, create_pipe(peer, topic, "JxtaPropagate"))
    stomp = stomp_client(broker)
    stomp.send(f"/queue/{queue}", "from stomp", headers={"sender": "stomp-app", "content-type": "text/plain"})
    mqtt5 = mqtt_client(broker, version="5")
    props = Properties(PacketTypes.PUBLISH)
    props.UserProperty = ("sender", "mqtt-app")
    mqtt5.publish(topic, b"from mqtt", qos=1, properties=props)
    got = pipe_messages(peer, 2)
    by_body = {m.get("message", ""): m for m in got}
    assert set(by_body) == {"from stomp", "from mqtt"}
    assert by_body["from stomp"].get("sender", "") == "stomp-app"
    [body] = [e for e in by_body["from stomp"].elements if e[1] == "message"]
    assert body[3] == "text/plain"
    assert by_body["from mqtt"].get("sender", "") == "mqtt-app"


def test_relay_to_relay_through_a_queue_keeps_elements_byte_identical(broker):
    a, b = Peer(broker.http_port), Peer(broker.http_port)
    pipe_id = create_pipe(a, name())
    listen(b, pipe_id)
    app = LISTING_14_APP + [("records", "blob", "\x00\x01 binary \xff")]
    send(a, pipe_id, app)
    [m] = pipe_messages(b, 1)
    assert app_elements(m)[:3] == LISTING_14_APP
    assert [e for e in m.elements if e[1] == "blob"][0][2] == "\x00\x01 binary \xff".encode()
