"""Resuming Server-Sent Events on a durable HTTP subscription (docs/http.md, "Resuming an event
stream"): GET /v1/subscriptions/{name}/events keeps the newest http.events_resume_window written
events unconfirmed; a reconnect with Last-Event-ID (as EventSource sends it) gets every message
after that id, in order, none it already had: after the stream died mid-way and after a broker
restart. A stale or unknown id starts from the oldest unconfirmed event; a client that never
reads holds at most twice the window."""

import json
import uuid

import pytest

from helpers.http import request, send
from helpers.sse import EventStream
from helpers.wait import wait_for


def fresh(prefix="res"):
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def make_subscription(port, name, topic):
    r = request(port, "PUT", f"/v1/subscriptions/{name}", body=json.dumps({"topic": topic}).encode(),
                headers={"Content-Type": "application/json"})
    assert r.status == 201, r


def publish(port, topic, bodies, persistent=False):
    ids = []
    for b in bodies:
        ids += send(port, topic, b.encode(), kind="topics", query="?persistent=true" if persistent else "")
    return ids


def open_stream(port, name, last_event_id=None, **kw):
    headers = {"Last-Event-ID": last_event_id} if last_event_id is not None else None
    s = EventStream(port, f"/v1/subscriptions/{name}/events", headers=headers, **kw)
    status, head = s.head()
    assert status == 200, (status, head, s.buf)
    assert head["content-type"].startswith("text/event-stream")
    return s


def read(stream, n):
    return [stream.next_event() for _ in range(n)]


def test_a_stream_killed_mid_way_resumes_after_its_last_event(broker):
    port, name, topic = broker.http_port, fresh(), f"feed.{uuid.uuid4().hex[:8]}"
    make_subscription(port, name, topic)
    bodies = [f"m{i}" for i in range(10)]
    ids = publish(port, topic, bodies)
    s = open_stream(port, name)
    got = read(s, 4)
    assert [e["id"] for e in got] == ids[:4]
    s.sock.close()  # dies mid-stream: the other six were written, or not, but never read

    with open_stream(port, name, last_event_id=got[-1]["id"]) as s2:
        rest = read(s2, 6)
        assert [e["id"] for e in rest] == ids[4:]
        assert [e["data"] for e in rest] == bodies[4:]
        # And the stream goes on live.
        later = publish(port, topic, ["m10"])
        assert s2.next_event()["id"] == later[0]
    # The stream ended with the window unconfirmed: a reconnect through the last id gets nothing
    # old, only what comes next.
    with open_stream(port, name, last_event_id=later[0]) as s3:
        newest = publish(port, topic, ["m11"])
        e = s3.next_event()
        assert e["id"] == newest[0] and e["data"] == "m11"


def test_resume_while_the_old_stream_is_still_attached(broker):
    # The new stream comes before the broker has seen the old one end (a half-open connection):
    # fresh messages come first; the old one's events when it ends, through the id skipped.
    port, name, topic = broker.http_port, fresh(), f"feed.{uuid.uuid4().hex[:8]}"
    make_subscription(port, name, topic)
    ids = publish(port, topic, [f"o{i}" for i in range(5)])
    old = open_stream(port, name)
    got = read(old, 2)
    with open_stream(port, name, last_event_id=got[-1]["id"]) as s2:
        # Two streams share the subscription now: this one goes to either.
        fresh_ids = publish(port, topic, ["new"])
        old.close()
        rest = [e["id"] for e in read(s2, 4)]
        assert sorted(rest) == sorted(ids[2:] + fresh_ids), (rest, ids, fresh_ids)
        assert [i for i in rest if i in ids] == ids[2:]  # the old ones in order, after the id
        assert not any("Last-Event-ID not among" in c for c in s2.comments), s2.comments
        later = publish(port, topic, ["later"])
        assert s2.next_event()["id"] == later[0]


def test_resume_after_a_broker_restart(broker):
    port, name, topic = broker.http_port, fresh(), f"feed.{uuid.uuid4().hex[:8]}"
    make_subscription(port, name, topic)
    bodies = [f"p{i}" for i in range(8)]
    ids = publish(port, topic, bodies, persistent=True)
    with open_stream(port, name) as s:
        got = read(s, 3)
    assert [e["id"] for e in got] == ids[:3]
    broker.restart()
    port = broker.http_port
    with open_stream(port, name, last_event_id=got[-1]["id"]) as s2:
        rest = read(s2, 5)
    assert [e["id"] for e in rest] == ids[3:]
    assert [e["data"] for e in rest] == bodies[3:]


def test_without_last_event_id_the_unconfirmed_events_come_again(broker):
    port, name, topic = broker.http_port, fresh(), f"feed.{uuid.uuid4().hex[:8]}"
    make_subscription(port, name, topic)
    ids = publish(port, topic, ["a", "b", "c"])
    with open_stream(port, name) as s:
        assert [e["id"] for e in read(s, 3)] == ids
    # A fresh EventSource (no id): at least once, from the oldest unconfirmed.
    with open_stream(port, name) as s2:
        assert [e["id"] for e in read(s2, 3)] == ids


def test_an_unknown_id_resumes_from_the_oldest_unconfirmed_event(broker):
    port, name, topic = broker.http_port, fresh(), f"feed.{uuid.uuid4().hex[:8]}"
    make_subscription(port, name, topic)
    ids = publish(port, topic, ["a", "b", "c"])
    with open_stream(port, name) as s:
        read(s, 2)
    for unknown in ("not-an-id", str(uuid.uuid4()), "x" * 2000):
        with open_stream(port, name, last_event_id=unknown) as s2:
            assert [e["id"] for e in read(s2, 3)] == ids
            assert any("Last-Event-ID not among" in c for c in s2.comments), s2.comments


def test_a_stale_id_older_than_the_window_skips_only_what_was_confirmed(broker_factory):
    b = broker_factory(config="[http]\nevents_resume_window = 2\n")
    port, name, topic = b.http_port, fresh(), f"feed.{uuid.uuid4().hex[:8]}"
    make_subscription(port, name, topic)
    ids = publish(port, topic, [f"w{i}" for i in range(6)])
    with open_stream(port, name) as s:
        got = read(s, 6)
    assert [e["id"] for e in got] == ids

    # Written events past the window of 2 count as received: ids[0..3] are confirmed, so a
    # reconnect naming the first one (stale) gets the two unconfirmed ones, not all six.
    def unconfirmed_after_the_stream():
        r = request(port, "GET", "/admin/v1/destinations?filter=" + name)
        rows = [d for d in r.json()["items"] if name in d["name"]] if r.status == 200 else []
        return rows and rows[0]["depth"] + rows[0]["unacked"] == 2

    wait_for(unconfirmed_after_the_stream, 10, "the subscription to keep only the window")
    with open_stream(port, name, last_event_id=ids[0]) as s2:
        assert [e["id"] for e in read(s2, 2)] == ids[4:]
        assert any("Last-Event-ID not among" in c for c in s2.comments), s2.comments


@pytest.mark.timeout(90)
def test_a_never_reading_stream_holds_a_bounded_share(broker_factory):
    window = 50
    b = broker_factory(config=f"[http]\nevents_resume_window = {window}\nmax_pending_output_bytes = 65536\n")
    port, name, topic = b.http_port, fresh(), f"feed.{uuid.uuid4().hex[:8]}"
    make_subscription(port, name, topic)
    stuck = open_stream(port, name, rcvbuf=4096)  # reads its head, then never again
    body = "x" * 20000
    total = 1000  # 20 MB: more than the socket buffers on both ends can absorb
    sent_ids = []
    for i in range(0, total, 100):
        batch = json.dumps([{"body": f"{i + j}:{body}"} for j in range(100)]).encode()
        r = request(port, "POST", f"/v1/topics/{topic}/messages", body=batch,
                    headers={"Content-Type": "application/vnd.carrier.batch+json"})
        assert r.status == 201, r
        sent_ids += r.json()["ids"]
    assert len(sent_ids) == total

    def stats():
        r = request(port, "GET", "/admin/v1/destinations?filter=" + name)
        assert r.status == 200, r
        rows = [d for d in r.json()["items"] if name in d["name"]]
        return rows[0] if rows else None

    row = wait_for(lambda: (lambda r: r if r and r["enqueued"] == total else None)(stats()), 20,
                   "every message in the subscription")
    # The stream's credit is twice the window. What it wrote went into the kernel's buffers
    # (acked once past the window); the rest, most of it, waits in the subscription.
    assert row["unacked"] <= 2 * window, row
    assert row["depth"] >= total // 2, row
    # Everyone else is served: a poll on the same subscription takes from what waits.
    r = request(port, "GET", f"/v1/subscriptions/{name}/messages?max=10&wait=5s")
    assert r.status == 200 and len(r.json()) == 10, r
    assert request(port, "GET", "/healthz").status == 200
    stuck.close()
