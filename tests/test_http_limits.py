"""[limits] on the HTTP routes (docs/security.md, "Limits"; docs/http.md): an event stream refused
by a limit is answered 429/503 with problem details, like any other HTTP refusal, and counted in
carrier_refusals_total; the message rate per connection ([limits] max_messages_per_second)
covers POST sends with 429 + Retry-After, while other connections keep being served."""

import http.client
import itertools
import json
import re
import time
import uuid

import pytest

from helpers.http import request, send
from helpers.wait import wait_for


def name():
    return f"h{uuid.uuid4().hex[:10]}"


_scrape_sources = itertools.count(1)


def refusals(broker, reason):
    # Where exempt_loopback is false the test's own reads would count against the per-source cap
    # (a connection it has just closed may still be open on the broker's side), and a refused read
    # would add to the very count it reads: each read comes from a loopback address of its own.
    def scrape():
        n = next(_scrape_sources)
        c = http.client.HTTPConnection("127.0.0.1", broker.http_port, timeout=10,
                                       source_address=(f"127.0.{100 + n // 250}.{1 + n % 250}", 0))
        r = request(broker.http_port, "GET", "/metrics", conn=c)
        c.close()
        return r if r.status == 200 else None
    text = wait_for(scrape, 10, "a /metrics read within the per-source cap").body.decode()
    m = re.search(r'^carrier_refusals_total\{reason="%s"\} (\d+)$' % reason, text, re.M)
    assert m, (reason, text)
    return int(m.group(1))


def assert_problem(r, status, words):
    assert r.status == status, r
    assert r.headers["content-type"] == "application/problem+json", r
    doc = r.json()
    assert doc["status"] == status and words in doc["detail"], doc


def open_stream(port, path, source="127.0.0.1"):
    """(connection, response) of a GET with `Accept: text/event-stream`; the caller closes."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=15, source_address=(source, 0))
    c.request("GET", path, headers={"Accept": "text/event-stream"})
    return c, c.getresponse()


def test_an_event_stream_for_a_new_queue_past_max_destinations_is_refused_and_counted(broker_factory):
    broker = broker_factory(store="memory", config="[limits]\nmax_destinations = 2\n")
    existing = name()
    send(broker.http_port, existing, b"kept")
    send(broker.http_port, name(), b"x")
    before = refusals(broker, "destinations")

    c, r = open_stream(broker.http_port, f"/v1/queues/{name()}/events")
    try:
        body = r.read()  # a problem document, not an endless stream
        assert r.status == 429, (r.status, body)
        assert r.getheader("content-type") == "application/problem+json"
        assert "max_destinations" in json.loads(body)["detail"]
    finally:
        c.close()
    assert refusals(broker, "destinations") == before + 1

    # A stream of a queue that exists is served, and carries its message.
    c, r = open_stream(broker.http_port, f"/v1/queues/{existing}/events")
    try:
        assert r.status == 200 and r.getheader("content-type").startswith("text/event-stream")
        seen = b""
        deadline = time.monotonic() + 10
        while b"kept" not in seen and time.monotonic() < deadline:
            seen += r.fp.readline()
        assert b"data: kept" in seen, seen
    finally:
        c.close()
    assert refusals(broker, "destinations") == before + 1


def test_a_long_poll_of_a_new_queue_past_max_destinations_is_refused_at_once(broker_factory):
    broker = broker_factory(store="memory", config="[limits]\nmax_destinations = 2\n")
    existing = name()
    send(broker.http_port, existing, b"kept")
    send(broker.http_port, name(), b"x")
    before = refusals(broker, "destinations")

    # A 30 s wait: the refusal must come back well before it is over, as a 429, not a 204.
    started = time.monotonic()
    r = request(broker.http_port, "GET", f"/v1/queues/{name()}/messages?wait=30s", timeout=25)
    assert_problem(r, 429, "max_destinations")
    assert time.monotonic() - started < 20
    assert refusals(broker, "destinations") == before + 1

    # The same for a leased poll, whose reserved leases are given back.
    r = request(broker.http_port, "GET", f"/v1/queues/{name()}/messages?wait=30s&ack=lease", timeout=25)
    assert_problem(r, 429, "max_destinations")
    # A queue that exists is still served on the same terms.
    r = request(broker.http_port, "GET", f"/v1/queues/{existing}/messages?wait=5s")
    assert r.status == 200 and r.json()[0]["body"] == "kept", r


def test_event_streams_past_the_per_source_cap_are_refused_and_counted(broker_factory):
    broker = broker_factory(config="[limits]\nexempt_loopback = false\nmax_connections_per_source = 1\n"
                                   "connection_rate_per_source = 0\n")
    topic = name()
    held, r = open_stream(broker.http_port, f"/v1/topics/{topic}/events", source="127.0.0.31")
    try:
        assert r.status == 200, r.status
        before = refusals(broker, "connections_per_source")
        c, refused = open_stream(broker.http_port, f"/v1/topics/{topic}/events", source="127.0.0.31")
        try:
            body = refused.read()
            assert refused.status == 429, (refused.status, body)
            assert refused.getheader("retry-after") == "1"
            assert "too many connections" in json.loads(body)["detail"]
        finally:
            c.close()
        assert refusals(broker, "connections_per_source") == before + 1
        # Another address is served meanwhile.
        other, ok = open_stream(broker.http_port, f"/v1/topics/{topic}/events", source="127.0.0.32")
        assert ok.status == 200
        other.close()
    finally:
        held.close()


def test_http_subscriptions_past_their_cap_are_counted(broker_factory):
    broker = broker_factory(config="[http]\nmax_subscriptions = 1\n")
    spec = json.dumps({"topic": f"{name()}.t"}).encode()
    headers = {"Content-Type": "application/json"}
    assert request(broker.http_port, "PUT", f"/v1/subscriptions/{name()}", body=spec, headers=headers).status == 201
    before = refusals(broker, "subscriptions")
    r = request(broker.http_port, "PUT", f"/v1/subscriptions/{name()}", body=spec, headers=headers)
    assert_problem(r, 429, "http.max_subscriptions")
    assert refusals(broker, "subscriptions") == before + 1


@pytest.mark.timeout(90)
def test_the_message_rate_refuses_http_sends_past_it_with_retry_after(broker_factory):
    rate, burst = 2, 3
    broker = broker_factory(store="memory",
                            config=f"[limits]\nmax_messages_per_second = {rate}\nmessage_burst = {burst}\n")
    q = name()
    before = refusals(broker, "message_rate")
    conn = http.client.HTTPConnection("127.0.0.1", broker.http_port, timeout=10)
    try:
        # As fast as one connection can: past the burst (and what the rate refills meanwhile)
        # the sends are refused, each refusal saying when to come back.
        started = time.monotonic()
        accepted, refused = 0, None
        for _ in range(200):
            r = request(broker.http_port, "POST", f"/v1/queues/{q}/messages", body=b"m", conn=conn)
            if r.status == 201:
                accepted += 1
                continue
            refused = r
            break
        elapsed = time.monotonic() - started
        assert refused is not None, f"{accepted} sends, none refused"
        assert_problem(refused, 429, "max_messages_per_second")
        assert int(refused.headers["retry-after"]) >= 1, refused
        assert burst <= accepted <= burst + rate * elapsed + 1, (accepted, elapsed)
        assert refusals(broker, "message_rate") == before + 1

        # Another connection has its own allowance.
        send(broker.http_port, q, b"other")

        # The same connection is served again once its tokens are back (polled, not slept).
        wait_for(lambda: request(broker.http_port, "POST", f"/v1/queues/{q}/messages", body=b"again",
                                 conn=conn).status == 201, 10, "a send after Retry-After", interval=0.25)
    finally:
        conn.close()
    # Only accepted sends were stored: a refused one is not half taken.
    depth = request(broker.http_port, "GET", f"/admin/v1/queues/{q}").json()["depth"]
    assert depth == accepted + 2, (depth, accepted)


def test_a_batch_larger_than_the_burst_goes_through_and_is_owed(broker_factory):
    rate = 5
    broker = broker_factory(store="memory", config=f"[limits]\nmax_messages_per_second = {rate}\n")
    q = name()
    batch = json.dumps([{"body": f"b{i}"} for i in range(20)]).encode()
    conn = http.client.HTTPConnection("127.0.0.1", broker.http_port, timeout=10)
    try:
        r = request(broker.http_port, "POST", f"/v1/queues/{q}/messages", body=batch,
                    headers={"Content-Type": "application/vnd.carrier.batch+json"}, conn=conn)
        assert r.status == 201 and len(r.json()["ids"]) == 20, r
        # 15 messages owed at 5 a second: the next send waits about 3 s.
        r = request(broker.http_port, "POST", f"/v1/queues/{q}/messages", body=b"next", conn=conn)
        assert_problem(r, 429, "max_messages_per_second")
        assert int(r.headers["retry-after"]) >= 2, r
    finally:
        conn.close()
