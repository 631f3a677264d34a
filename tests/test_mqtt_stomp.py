"""One model, two protocols: MQTT topic a/b/c is STOMP /topic/a.b.c; QoS >= 1 is a persistent
message; persistent STOMP messages reach MQTT subscribers at the QoS they subscribed with;
MQTT 5 user properties <-> STOMP headers, message expiry <-> expires, response topic /
correlation data <-> reply-to / correlation-id."""

import time

from helpers.broker import now_ms
from helpers.mqtt_clients import PacketTypes, mqtt_client, props, unique_topic  # noqa: F401
from helpers.wait import assert_stays


def test_mqtt_to_stomp(broker, mqtt_client, stomp_client):
    base = unique_topic()
    s = stomp_client(broker)
    s.subscribe(f"/topic/{base}.sensors.*")
    pub = mqtt_client(broker, version="5")
    p = props(PacketTypes.PUBLISH, ContentType="application/json", ResponseTopic=f"{base}/replies",
              CorrelationData=b"req-42", MessageExpiryInterval=600, UserProperty=[("unit", "celsius")])
    pub.publish(f"{base}/sensors/kitchen", b'{"t": 21}', qos=1, properties=p)
    pub.publish(f"{base}/sensors/hall", b"plain", qos=0)
    m1, m2 = s.wait_messages(2)
    h = m1.headers
    assert h["destination"] == f"/topic/{base}.sensors.kitchen"
    assert h["persistent"] == "true", "QoS 1 is a persistent message"
    assert h["content-type"] == "application/json"
    assert h["reply-to"] == f"/topic/{base}.replies"
    assert h["correlation-id"] == "req-42"
    assert h["unit"] == "celsius"
    assert abs(int(h["expires"]) - (now_ms() + 600_000)) < 60_000
    assert m1.body == '{"t": 21}'
    assert m2.headers["destination"] == f"/topic/{base}.sensors.hall"
    assert "persistent" not in m2.headers, "QoS 0 is not persistent"


def test_stomp_to_mqtt(broker, mqtt_client, stomp_client):
    base = unique_topic()
    q1 = mqtt_client(broker, version="5")
    q1.subscribe(f"{base}/+", 1)
    q0 = mqtt_client(broker)
    q0.subscribe(f"{base}/#", 0)
    s = stomp_client(broker)
    s.send(f"/topic/{base}.orders", "persistent one",
           headers={"persistent": "true", "correlation-id": "c-7", "reply-to": f"/topic/{base}.answers",
                    "content-type": "text/plain", "region": "eu", "expires": str(now_ms() + 60_000)})
    s.send(f"/topic/{base}.orders", "transient one")
    a, b = q1.wait_messages(2)
    assert (a.topic, a.payload, a.qos) == (f"{base}/orders", b"persistent one", 1)
    assert (b.payload, b.qos) == (b"transient one", 0), "a non-persistent message is QoS 0"
    pr = a.properties
    assert pr.CorrelationData == b"c-7"
    assert pr.ResponseTopic == f"{base}/answers"
    assert pr.ContentType == "text/plain"
    assert ("region", "eu") in pr.UserProperty
    assert 50 <= pr.MessageExpiryInterval <= 60
    assert [m.qos for m in q0.wait_messages(2)] == [0, 0], "delivered at the subscription's QoS"


def test_mqtt_request_stomp_reply(broker, mqtt_client, stomp_client):
    """Request/response across protocols: the STOMP service replies to reply-to and the MQTT
    requester gets it on its response topic with the correlation data."""
    base = unique_topic()
    requester = mqtt_client(broker, version="5")
    requester.subscribe(f"{base}/responses", 1)
    service = stomp_client(broker)
    service.subscribe(f"/topic/{base}.requests")
    requester.publish(f"{base}/requests", b"ping", qos=1,
                      properties=props(PacketTypes.PUBLISH, ResponseTopic=f"{base}/responses",
                                       CorrelationData=b"id-1"))
    req = service.wait_messages(1)[0]
    service.send(req.headers["reply-to"], "pong", headers={"correlation-id": req.headers["correlation-id"]})
    reply = requester.wait_messages(1)[0]
    assert (reply.payload, reply.properties.CorrelationData) == (b"pong", b"id-1")


def test_wildcards_cross_protocol(broker, mqtt_client, stomp_client):
    base = unique_topic()
    s = stomp_client(broker)
    s.subscribe(f"/topic/{base}.>")
    m = mqtt_client(broker)
    m.subscribe(f"{base}/#", 0)
    mqtt_client(broker).publish(f"{base}/x/y", b"from mqtt", qos=1)
    stomp_client(broker).send(f"/topic/{base}.z", "from stomp")
    assert sorted(f.body for f in s.wait_messages(2)) == ["from mqtt", "from stomp"]
    assert sorted(x.topic for x in m.wait_messages(2)) == [f"{base}/x/y", f"{base}/z"]


def test_mqtt_topic_with_dots_for_stomp(broker, mqtt_client, stomp_client):
    base = unique_topic()
    s = stomp_client(broker)
    s.subscribe(f"/topic/{base}.v1/2")
    mqtt_client(broker).publish(f"{base}/v1.2", b"dotted", qos=1)
    assert s.wait_messages(1)[0].headers["destination"] == f"/topic/{base}.v1/2"


def test_persistent_stomp_message_waits_in_a_persistent_mqtt_session(broker, mqtt_client, stomp_client):
    base = unique_topic()
    cid = unique_topic("x")
    c = mqtt_client(broker, client_id=cid, clean=False)
    c.subscribe(f"{base}/#", 1)
    c.disconnect()
    stomp_client(broker).send(f"/topic/{base}.news", "while away", headers={"persistent": "true"})
    c = mqtt_client(broker, client_id=cid, clean=False)
    m = c.wait_messages(1)[0]
    assert (m.payload, m.qos) == (b"while away", 1)


def test_stomp_sees_mqtt_retained_and_will(broker, mqtt_client, stomp_client):
    base = unique_topic()
    s = stomp_client(broker)
    s.subscribe(f"/topic/{base}.status")
    c = mqtt_client(broker, will=dict(topic=f"{base}/status", payload=b"offline", qos=1))
    c.drop()
    assert s.wait_messages(1)[0].body == "offline"
    assert_stays(lambda: s.count() == 1, 0.2)
