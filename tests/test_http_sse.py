"""Server-Sent Events (docs/http.md): GET /v1/queues/{name}/events and
/v1/topics/{filter}/events stream messages as text/event-stream, one event per message; queue
messages are acked once written; a client that does not read holds no more than its bound."""

import base64
import time
import json
import subprocess
import uuid

import pytest

from helpers.http import Raw, receive, request, send
from helpers.sse import EventStream, wait_comment
from helpers.wait import wait_for


def name():
    return f"v{uuid.uuid4().hex[:10]}"


def open_stream(port, path, **kw):
    s = EventStream(port, path, **kw)
    status, headers = s.head()
    assert status == 200, (status, headers, s.buf)
    assert headers["content-type"].startswith("text/event-stream")
    assert headers["cache-control"] == "no-cache"
    return s


def test_queue_events_carry_id_and_body_and_are_acked_once_written(broker):
    q = name()
    with open_stream(broker.http_port, f"/v1/queues/{q}/events") as s:
        ids = send(broker.http_port, q, b"first")
        ids += send(broker.http_port, q, b"two\nlines\n")
        ids += send(broker.http_port, q, b"\x00\x01\xff binary")
        ids += send(broker.http_port, q, b"with\r\ncrlf")
        events = [s.next_event() for _ in range(4)]
    assert [e["id"] for e in events] == ids
    assert events[0] == {"id": ids[0], "event": "message", "data": "first"}
    assert events[1]["data"] == "two\nlines\n" and events[1]["event"] == "message"
    # Bodies EventSource would not give back as sent (not UTF-8, or with CR): base64.
    assert events[2]["event"] == "base64" and base64.b64decode(events[2]["data"]) == b"\x00\x01\xff binary"
    assert events[3]["event"] == "base64" and base64.b64decode(events[3]["data"]) == b"with\r\ncrlf"
    # ack=auto: written means taken; nothing comes back after the stream closed.
    assert receive(broker.http_port, q, "wait=300ms") == []


def test_topic_events_with_a_wildcard_filter_as_json_from_stomp(broker, stomp_client):
    t = name()
    with open_stream(broker.http_port, f"/v1/topics/{t}.*/events?format=json") as s:
        producer = stomp_client(broker)

        def delivered():
            producer.send(f"/topic/{t}.kitchen", "21.5", headers={"unit": "celsius", "content-type": "text/plain"})
            try:
                return s.next_event(timeout=0.5)
            except TimeoutError:
                return None

        # A topic keeps nothing for a subscriber not yet attached: publish until one arrives.
        e = wait_for(delivered, 10, "an event for the topic filter")
    m = json.loads(e["data"])
    assert m["id"] == e["id"] and m["destination"] == f"/topic/{t}.kitchen"
    assert m["body"] == "21.5" and m["headers"]["unit"] == "celsius"


def test_curl_reads_events_as_in_the_docs(broker):
    q = name()
    send(broker.http_port, q, b"for curl")
    out = subprocess.run(["curl", "-sN", "--max-time", "3", f"http://127.0.0.1:{broker.http_port}/v1/queues/{q}/events"],
                         capture_output=True, text=True, timeout=20)
    assert out.returncode == 28, out  # curl's "timed out": the stream does not end by itself
    assert "\ndata: for curl\n\n" in out.stdout, out.stdout


def test_keep_alive_comments(broker_factory):
    b = broker_factory(config="[http]\nevents_keepalive_ms = 200\n")
    with open_stream(b.http_port, f"/v1/topics/{name()}/events") as s:
        wait_comment(s, "keep-alive", timeout=10)


def test_a_stream_not_read_holds_a_bounded_share_and_gives_the_rest_back(broker_factory):
    # The stream's client reads nothing. Its output is bounded (64 KiB here) and its credit
    # (prefetch) bounds what it holds beyond that: most of the queue stays for others, and
    # what it held goes back when it goes away. Nothing is lost.
    b = broker_factory(config="[http]\nmax_pending_output_bytes = 65536\n[core]\nprefetch_auto = 100\n")
    q = name()
    s = open_stream(b.http_port, f"/v1/queues/{q}/events", rcvbuf=4096)
    body = b"x" * 8192
    total = 2000  # 16 MB: more than the kernel's socket buffers (4 MiB each way at most) can hide
    batch = [{"body": body.decode()} for _ in range(50)]
    for _ in range(total // 50):
        send(b.http_port, q, json.dumps(batch), headers={"Content-Type": "application/vnd.carrier.batch+json"})
    # Another consumer gets the part the stream could not take: all but socket buffers + credit.
    got = []
    wait_for(lambda: got.extend(receive(b.http_port, q, "max=1000&wait=200ms")) or len(got) >= total - 1200, 30,
             lambda: f"only {len(got)} of {total} left for others")
    assert b.running()
    s.close()  # what it held unwritten (its credit) goes back, redelivered
    wait_for(lambda: got.extend(receive(b.http_port, q, "max=1000&wait=200ms")) or
             any(m["redelivered"] for m in got), 20, lambda: f"nothing came back after the stream closed ({len(got)})")


def test_slow_topic_stream_is_disconnected_under_the_policy(broker_factory):
    b = broker_factory(config='[http]\nmax_pending_output_bytes = 65536\nslow_consumer = "disconnect"\n')
    t = name()
    s = open_stream(b.http_port, f"/v1/topics/{t}/events", rcvbuf=4096)
    wait_comment(s, "carrier event stream")
    batch = json.dumps([{"body": "y" * 8192} for _ in range(100)])

    def closed():
        send(b.http_port, t, batch, kind="topics", headers={"Content-Type": "application/vnd.carrier.batch+json"})
        return "slow consumer" in b.log()

    wait_for(closed, 20, lambda: f"the slow stream was not disconnected:\n{b.log()}")
    with Raw(b.http_port) as other:  # everyone else is still served
        other.send(b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
        assert other.read_response()[0] == 200
    s.close()


@pytest.mark.parametrize("path,status", [
    ("/v1/queues/a.*/events", 400),          # a queue stream takes one queue
    ("/v1/topics/a/events?format=xml", 400),
    ("/v1/topics/a/events?colour=red", 400),
    ("/v1/topics/$sys/events", 403),
])
def test_bad_event_requests(broker, path, status):
    r = request(broker.http_port, "GET", path)
    assert r.status == status and r.headers["content-type"] == "application/problem+json", r


def test_events_take_only_get(broker):
    r = request(broker.http_port, "POST", f"/v1/queues/{name()}/events", body=b"x")
    assert r.status == 405 and r.headers["allow"] == "GET", r


def test_shutdown_ends_open_streams_and_waiting_replies(broker):
    # An event stream and a reply=wait request are open when the broker stops: both end (the
    # stream closes, the request gets its 503) and the broker exits cleanly.
    import threading
    q = name()
    s = open_stream(broker.http_port, f"/v1/queues/{q}/events")
    answer = {}

    def ask():
        answer["r"] = request(broker.http_port, "POST", f"/v1/queues/{q}/messages?reply=wait&timeout=30s",
                              body=b"anyone?", timeout=30)

    t = threading.Thread(target=ask, daemon=True)
    t.start()
    e = s.next_event()  # the request reached the stream: it waits for its reply now
    assert e["data"] == "anyone?"
    assert broker.stop() == 0, broker.log()
    t.join(10)
    assert answer["r"].status == 503, answer
    with pytest.raises(EOFError):
        while True:
            s._fill(time.monotonic() + 5)
    s.close()
