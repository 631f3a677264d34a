"""The HTTP API's REST routes (docs/http.md): send to queues and topics, receive from queues by
long polling, the JSON batch form, the OpenAPI document, and the same messages crossing to and
from STOMP and MQTT clients."""

import json
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from helpers.http import body_of, receive, request, send
from helpers.mqtt_clients import mqtt_client  # noqa: F401
from helpers.sse import EventStream
from helpers.wait import wait_for

REPO = Path(__file__).resolve().parents[1]


def name():
    return f"h{uuid.uuid4().hex[:10]}"


def test_openapi_document_is_served_and_matches_docs(broker):
    r = request(broker.http_port, "GET", "/v1/openapi.json")
    assert r.status == 200 and r.headers["content-type"] == "application/json"
    served = r.json()
    assert served == json.loads((REPO / "docs" / "http-openapi.json").read_text())
    assert served["openapi"].startswith("3.")
    for path in ("/v1/queues/{name}/messages", "/v1/topics/{name}/messages"):
        assert path in served["paths"]


def test_send_then_receive_keeps_body_headers_and_content_type(broker):
    q = name()
    ids = send(broker.http_port, q, b"hello", headers={
        "Content-Type": "text/plain; charset=utf-8", "Carrier-Header-priority": "7",
        "Carrier-Header-orderId": "42", "Carrier-Header-correlation-id": "c-1"})
    assert len(ids) == 1
    [m] = receive(broker.http_port, q)
    assert m["id"] == ids[0]
    assert m["body"] == "hello"
    assert m["destination"] == f"/queue/{q}"
    assert m["redelivered"] is False and m["delivery_count"] == 1
    h = m["headers"]
    assert h["priority"] == "7" and h["orderId"] == "42" and h["correlation-id"] == "c-1"
    assert h["content-type"] == "text/plain; charset=utf-8"
    assert receive(broker.http_port, q, "wait=0") == [], "ack=auto: taken once the response was written"


def test_binary_body_comes_back_as_base64(broker):
    q = name()
    payload = bytes(range(256)) * 4
    send(broker.http_port, q, payload, headers={"Content-Type": "application/octet-stream"})
    [m] = receive(broker.http_port, q)
    assert "body" not in m and body_of(m) == payload


def test_json_batch_and_max(broker):
    q = name()
    batch = [{"headers": {"n": i, "priority": "5"}, "body": f"m{i}"} for i in range(5)]
    batch.append({"body_base64": "AAH/"})
    ids = send(broker.http_port, q, json.dumps(batch),
               headers={"Content-Type": "application/vnd.carrier.batch+json"})
    assert len(ids) == 6 and len(set(ids)) == 6
    first = receive(broker.http_port, q, "max=4&wait=5s")
    assert [m["body"] for m in first] == ["m0", "m1", "m2", "m3"]
    assert first[1]["headers"]["n"] == "1"
    rest = receive(broker.http_port, q, "max=100&wait=5s")
    assert [body_of(m) for m in rest] == [b"m4", b"\x00\x01\xff"]


def test_plain_json_body_is_one_message(broker):
    q = name()
    send(broker.http_port, q, b'[{"body": "x"}]', headers={"Content-Type": "application/json"})
    [m] = receive(broker.http_port, q)
    assert m["body"] == '[{"body": "x"}]'


def test_chunked_body_with_curl(broker):
    q = name()
    out = subprocess.run(["curl", "-sS", "-H", "Transfer-Encoding: chunked", "-H", "Content-Type: text/plain",
                          "--data-binary", "chunked body", "-w", "\\n%{http_code}",
                          f"http://127.0.0.1:{broker.http_port}/v1/queues/{q}/messages"],
                         capture_output=True, text=True, timeout=20)
    assert out.stdout.strip().endswith("201"), out
    [m] = receive(broker.http_port, q)
    assert m["body"] == "chunked body"


def test_curl_round_trip_as_in_the_docs(broker):
    q = name()
    base = f"http://127.0.0.1:{broker.http_port}"
    sent = subprocess.run(["curl", "-sS", "-X", "POST", "-H", "Carrier-Header-priority: 9", "--data-binary",
                           "from curl", f"{base}/v1/queues/{q}/messages?persistent=true"],
                          capture_output=True, text=True, timeout=20)
    assert sent.returncode == 0 and "ids" in json.loads(sent.stdout), sent
    got = subprocess.run(["curl", "-sS", f"{base}/v1/queues/{q}/messages?max=1&wait=5s"],
                         capture_output=True, text=True, timeout=20)
    [m] = json.loads(got.stdout)
    assert m["body"] == "from curl" and m["headers"]["persistent"] == "true" and m["headers"]["priority"] == "9"


def test_empty_queue_answers_204_after_wait(broker):
    r = request(broker.http_port, "GET", f"/v1/queues/{name()}/messages?wait=200ms")
    assert r.status == 204 and r.body == b""


def test_long_poll_wakes_up_when_a_message_is_sent(broker):
    # The poll waits up to 30 s; the message sent meanwhile must end it with a 200, not the 204
    # that only the wait running out gives.
    q = name()
    result = {}

    def poll():
        result["r"] = request(broker.http_port, "GET", f"/v1/queues/{q}/messages?wait=30s", timeout=40)

    t = threading.Thread(target=poll)
    t.start()
    send(broker.http_port, q, b"wake up")
    t.join(25)
    assert not t.is_alive(), "the poll did not end when the message came"
    r = result["r"]
    assert r.status == 200 and [m["body"] for m in r.json()] == ["wake up"]


def test_keep_alive_serves_many_requests_on_one_connection(broker):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", broker.http_port, timeout=10)
    q = name()
    for i in range(20):
        assert request(broker.http_port, "POST", f"/v1/queues/{q}/messages", body=f"{i}", conn=conn).status == 201
    r = request(broker.http_port, "GET", f"/v1/queues/{q}/messages?max=100&wait=5s", conn=conn)
    assert [m["body"] for m in r.json()] == [str(i) for i in range(20)]
    conn.close()


def test_topic_send_reaches_stomp_and_mqtt_subscribers(broker, stomp_client, mqtt_client):  # noqa: F811
    t = name()
    s = stomp_client(broker)
    s.subscribe(f"/topic/{t}.news")
    m = mqtt_client(broker, version="5")
    m.subscribe(f"{t}/news", qos=1)
    send(broker.http_port, f"{t}.news", b"to everyone", kind="topics",
         headers={"Carrier-Header-lang": "en", "Content-Type": "text/plain"})
    [frame] = s.wait_messages(1)
    assert frame.body == "to everyone" and frame.headers["lang"] == "en"
    assert frame.headers["content-type"] == "text/plain"
    m.wait_messages(1)
    assert m.payloads() == [b"to everyone"]


def test_queue_send_reaches_a_stomp_consumer(broker, stomp_client):
    q = name()
    s = stomp_client(broker)
    s.subscribe(f"/queue/{q}")
    send(broker.http_port, q, b"for stomp", headers={"Carrier-Header-x": "1"})
    [frame] = s.wait_messages(1)
    assert frame.body == "for stomp" and frame.headers["x"] == "1"


def test_stomp_send_is_received_over_http(broker, stomp_client):
    q = name()
    stomp_client(broker).send(f"/queue/{q}", "from stomp", headers={"color": "red", "persistent": "true"})
    [m] = receive(broker.http_port, q)
    assert m["body"] == "from stomp" and m["headers"]["color"] == "red" and m["headers"]["persistent"] == "true"


def test_mqtt_publish_is_received_over_http(broker, mqtt_client):  # noqa: F811
    # MQTT -> HTTP both ways a client of the HTTP API receives: a durable subscription's long poll
    # and its event stream (MQTT's "/" levels are the "." levels of the HTTP names).
    t = name()
    r = request(broker.http_port, "PUT", f"/v1/subscriptions/{t}", body=json.dumps({"topic": f"{t}.>"}).encode(),
                headers={"Content-Type": "application/json"})
    assert r.status == 201, r
    m = mqtt_client(broker, version="5")
    m.publish(f"{t}/kitchen", b"from mqtt", qos=1)
    r = request(broker.http_port, "GET", f"/v1/subscriptions/{t}/messages?max=10&wait=5s")
    assert r.status == 200, r
    [got] = r.json()
    assert got["body"] == "from mqtt" and got["destination"] == f"/topic/{t}.kitchen", got
    m.publish(f"{t}/hall", b"\xff\xfebinary from mqtt", qos=1)
    with EventStream(broker.http_port, f"/v1/subscriptions/{t}/events?format=json") as s:
        assert s.head()[0] == 200
        e = s.next_event()
    got = json.loads(e["data"])
    assert body_of(got) == b"\xff\xfebinary from mqtt" and got["destination"] == f"/topic/{t}.hall", got


@pytest.mark.timeout(60)
def test_persistent_send_survives_sigkill(broker):
    q = name()
    ids = send(broker.http_port, q, b"durable", query="?persistent=true")
    send(broker.http_port, q, b"transient")  # not persistent: gone with the process
    broker.kill()
    broker.start()
    got = receive(broker.http_port, q, "max=10&wait=1s")
    assert [m["id"] for m in got] == ids and got[0]["body"] == "durable"


def test_poll_abandoned_by_its_client_gives_its_messages_back(broker):
    # A client that goes away while its poll waits: the consumer is detached, so a message sent
    # afterwards goes to the next poll and nothing is lost.
    from helpers.http import Raw
    q = name()
    with Raw(broker.http_port) as raw:
        raw.send(f"GET /v1/queues/{q}/messages?wait=30s HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    send(broker.http_port, q, b"not lost")
    got = wait_for(lambda: receive(broker.http_port, q, "wait=1s"), 10, "the message at the next poll")
    assert [m["body"] for m in got] == ["not lost"]


def test_messages_of_a_response_never_written_go_back(broker):
    # The client asks for messages that are there, and is gone before the answer can be
    # written in full: the poll's consumer is detached unacked, so they go back to the queue.
    import socket
    import struct
    q = name()
    big = b"x" * (12 << 20)  # more than the kernel buffers: the response cannot be written at once
    send(broker.http_port, q, big)
    s = socket.create_connection(("127.0.0.1", broker.http_port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(f"GET /v1/queues/{q}/messages?max=1&wait=5s HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    s.recv(1024)  # the response has started
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # reset: the rest of the response is never read
    got = wait_for(lambda: receive(broker.http_port, q, "max=1&wait=1s"), 10, "the message back in the queue")
    assert body_of(got[0]) == big and got[0]["redelivered"] is True


def test_waiting_poll_is_answered_503_at_shutdown_and_loses_nothing(broker):
    q = name()
    send(broker.http_port, q, b"kept", query="?persistent=true")
    receive_first = receive(broker.http_port, q, "max=1&wait=5s")
    assert [m["body"] for m in receive_first] == ["kept"]
    send(broker.http_port, q, b"still kept", query="?persistent=true")
    from helpers.http import Raw
    with Raw(broker.http_port, timeout=20) as raw:
        # A second poll on an empty queue waits, then the broker stops under it: once the poll
        # is waiting (a SIGTERM before the request is read rightly resets the connection).
        empty = name()
        raw.send(f"GET /v1/queues/{empty}/messages?wait=30s HTTP/1.1\r\nHost: x\r\n\r\n".encode())

        def polling():
            r = request(broker.http_port, "GET", f"/admin/v1/queues/{empty}")
            return r.status == 200 and r.json()["consumers"] == 1
        wait_for(polling, 10, "the poll to wait on its queue")
        broker.stop()
        got = raw.read_response()
        assert got is None or got[0] == 503, got
    broker.start()
    assert [m["body"] for m in receive(broker.http_port, q, "max=5&wait=1s")] == ["still kept"]
