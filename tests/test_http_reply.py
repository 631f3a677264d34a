"""Request/reply over HTTP (docs/http.md): POST .../messages?reply=wait&timeout=D sends with a
temporary reply queue in reply-to and answers with the first reply, or 504; the reply queue
is gone afterwards. Responders: a STOMP client (reply-to) and an MQTT 5 client (response
topic, correlation data)."""

import json
import threading
import uuid

import pytest
from paho.mqtt.packettypes import PacketTypes

from helpers.http import receive, request
from helpers.mqtt_clients import mqtt_client, props  # noqa: F401
from helpers.wait import wait_for


def name():
    return f"r{uuid.uuid4().hex[:10]}"


def answer_in_background(fn):
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def assert_reply_queue_gone(stomp_client, broker, reply_to):
    late = stomp_client(broker)
    late.send(reply_to, "too late", wait=False)
    late._wait(lambda: late.errors, 10, "an ERROR for the deleted reply queue")
    assert "does not exist" in late.errors[0].headers.get("message", ""), late._errors()


def test_stomp_responder(broker, stomp_client):
    q = name()
    responder = stomp_client(broker)
    responder.subscribe(f"/queue/{q}")

    def respond():
        [m] = responder.wait_messages(1, timeout=20)
        responder.send(m.headers["reply-to"], "pong:" + m.body,
                       headers={"correlation-id": m.headers["correlation-id"], "answer": "42",
                                "content-type": "text/plain"})

    t = answer_in_background(respond)
    r = request(broker.http_port, "POST", f"/v1/queues/{q}/messages?reply=wait&timeout=20s", body=b"ping",
                headers={"Carrier-Header-correlation-id": "c-7"}, timeout=30)
    t.join(10)
    assert r.status == 200, r
    assert r.body == b"pong:ping" and r.headers["content-type"] == "text/plain"
    assert r.headers["carrier-header-correlation-id"] == "c-7" and r.headers["carrier-header-answer"] == "42"
    assert len(r.headers["carrier-message-id"]) == 36
    reply_to = responder.messages[0].headers["reply-to"]
    assert reply_to.startswith("/temp-queue/carrier-")
    assert_reply_queue_gone(stomp_client, broker, reply_to)


def test_mqtt5_responder_through_a_topic(broker, mqtt_client):
    topic = name()
    responder = mqtt_client(broker, version="5")
    responder.subscribe(f"svc/{topic}", qos=1)
    seen = []

    def respond():
        while True:
            try:
                msgs = responder.wait_messages(len(seen) + 1, timeout=30)
            except AssertionError:
                return  # no more requests: the test has its reply
            m = msgs[len(seen)]
            seen.append(m)
            responder.publish(m.properties.ResponseTopic, b"pong from mqtt", qos=1,
                              properties=props(PacketTypes.PUBLISH, CorrelationData=m.properties.CorrelationData,
                                               ContentType="text/plain"))

    answer_in_background(respond)

    def replied():
        # A topic keeps nothing for a subscription not yet known on every shard: ask again.
        r = request(broker.http_port, "POST", f"/v1/topics/svc.{topic}/messages?reply=wait&timeout=2s",
                    body=b"ping", headers={"Carrier-Header-correlation-id": "c-9"}, timeout=10)
        assert r.status in (200, 504), r
        return r if r.status == 200 else None

    r = wait_for(replied, 30, "a reply from the MQTT responder")
    assert r.body == b"pong from mqtt" and r.headers["carrier-header-correlation-id"] == "c-9"
    assert seen[-1].properties.ResponseTopic.startswith("/temp-queue/carrier-")


def test_no_reply_is_504_and_the_reply_queue_is_removed(broker, stomp_client):
    q = name()
    r = request(broker.http_port, "POST", f"/v1/queues/{q}/messages?reply=wait&timeout=300ms", body=b"anyone?")
    assert r.status == 504 and r.headers["content-type"] == "application/problem+json", r
    assert "300 ms" in r.json()["detail"]
    [m] = receive(broker.http_port, q)  # the request itself was sent
    assert m["body"] == "anyone?"
    assert_reply_queue_gone(stomp_client, broker, m["headers"]["reply-to"])


@pytest.mark.parametrize("query", ["reply=maybe", "timeout=5s", "reply=wait&timeout=soon",
                                   "reply=wait&timeout=61s"])
def test_bad_reply_parameters_are_400(broker, query):
    r = request(broker.http_port, "POST", f"/v1/queues/{name()}/messages?{query}", body=b"x")
    assert r.status == 400 and r.headers["content-type"] == "application/problem+json", r


def test_a_batch_cannot_wait_for_a_reply(broker):
    r = request(broker.http_port, "POST", f"/v1/queues/{name()}/messages?reply=wait", body=json.dumps(
        [{"body": "a"}, {"body": "b"}]), headers={"Content-Type": "application/vnd.carrier.batch+json"})
    assert r.status == 400 and "one message" in r.json()["detail"], r
