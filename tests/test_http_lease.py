"""HTTP ack=lease (docs/http.md, "Leases"): GET .../messages?ack=lease hands out messages with a
lease id each; POST /v1/leases/{id}/ack or /nack (and the batch form) end them from any
connection; a lease that runs out gives its message back, counted as a delivery (redelivery
policy, max_deliveries -> DLQ); the lease limits answer 429; a restart gives unacked leased
messages back; every error status."""

import json
import uuid

import pytest

from helpers.http import assert_problem, request, send
from helpers.reliable import config, policy
from helpers.wait import wait_for


def fresh(prefix="lease"):
    return f"{prefix}.{uuid.uuid4().hex[:10]}"


def lease(port, q, query="max=10&wait=5s&ack=lease&visibility=30s"):
    r = request(port, "GET", f"/v1/queues/{q}/messages?{query}")
    assert r.status in (200, 204), r
    return [] if r.status == 204 else r.json()


def take(port, q, query="max=10"):
    """ack=auto with no wait: what is visible now."""
    r = request(port, "GET", f"/v1/queues/{q}/messages?{query}")
    assert r.status in (200, 204), r
    return [] if r.status == 204 else r.json()


def end(port, lease_id, action="ack", query=""):
    return request(port, "POST", f"/v1/leases/{lease_id}/{action}{query}")


def end_batch(port, ids, action="ack", query=""):
    return request(port, "POST", f"/v1/leases/{action}{query}", body=json.dumps(ids),
                   headers={"Content-Type": "application/json"})


def test_leased_messages_are_invisible_until_acked_or_nacked(broker):
    port, q = broker.http_port, fresh()
    send(port, q, b"one")
    send(port, q, b"two")
    got = lease(port, q)
    assert [m["body"] for m in got] == ["one", "two"], got
    assert all(m["lease"] and m["lease_expires_ms"] > 0 for m in got), got
    assert take(port, q) == []  # both leased
    # Ack and nack from other connections than the one that polled (each request is its own).
    r = end(port, got[0]["lease"])
    assert r.status == 204, r
    r = end(port, got[1]["lease"], "nack")
    assert r.status == 204, r
    back = take(port, q)
    assert [m["body"] for m in back] == ["two"], back
    assert back[0]["redelivered"] is True and back[0]["delivery_count"] == 2, back
    # Ended leases are gone: 404 (documented), for ack and nack alike.
    assert_problem(end(port, got[0]["lease"]), 404)
    assert_problem(end(port, got[1]["lease"], "nack"), 404)


def test_a_lease_that_runs_out_gives_the_message_back(broker):
    port, q = broker.http_port, fresh()
    send(port, q, b"late")
    got = lease(port, q, "max=1&wait=5s&ack=lease&visibility=1s")
    assert len(got) == 1, got
    back = wait_for(lambda: take(port, q), 15, "the message to come back after its lease ran out")
    assert back[0]["body"] == "late" and back[0]["delivery_count"] == 2, back
    assert_problem(end(port, got[0]["lease"]), 404)


def test_a_poll_holding_leases_does_not_take_later_messages(broker):
    port, q = broker.http_port, fresh()
    send(port, q, b"first")
    got = lease(port, q)
    assert len(got) == 1, got
    send(port, q, b"second")
    later = take(port, q, "max=10&wait=2s")
    assert [m["body"] for m in later] == ["second"], later
    assert later[0]["delivery_count"] == 1, later  # not bounced off the leasing consumer
    assert end(port, got[0]["lease"]).status == 204


def test_batch_ack_and_nack(broker):
    port, q = broker.http_port, fresh()
    for body in (b"a", b"b", b"c"):
        send(port, q, body)
    got = lease(port, q)
    ids = [m["lease"] for m in got]
    assert len(ids) == 3, got
    r = end_batch(port, [ids[0], ids[1], "0-1-0000000000000000", "not-a-lease"])
    assert r.status == 200, r
    assert sorted(r.json()["ended"]) == sorted(ids[:2]), r
    assert sorted(r.json()["not_found"]) == sorted(["0-1-0000000000000000", "not-a-lease"]), r
    r = end_batch(port, [ids[0], ids[2]], "nack")
    assert r.status == 200, r
    assert r.json() == {"ended": [ids[2]], "not_found": [ids[0]]}, r
    assert [m["body"] for m in take(port, q)] == ["c"]


def test_nack_without_requeue_dead_letters(broker):
    port, q = broker.http_port, fresh()
    send(port, q, b"poison")
    got = lease(port, q)
    r = end(port, got[0]["lease"], "nack", "?requeue=false")
    assert r.status == 204, r
    dead = wait_for(lambda: take(port, f"DLQ.{q}"), 10, "the message in the dead-letter queue")
    assert dead[0]["body"] == "poison", dead
    assert take(port, q) == []


@pytest.mark.timeout(90)
def test_leases_running_out_count_towards_max_deliveries(broker_factory):
    b = broker_factory(config=config(policy("queue:lease.>", max_deliveries=2)))
    port, q = b.http_port, fresh()
    send(port, q, b"x")
    first = lease(port, q, "max=1&wait=5s&ack=lease&visibility=1s")
    assert first[0]["delivery_count"] == 1, first
    second = lease(port, q, "max=1&wait=20s&ack=lease&visibility=1s")
    assert second and second[0]["delivery_count"] == 2, second
    # The second lease runs out too: past max_deliveries, so to the DLQ.
    dead = wait_for(lambda: take(port, f"DLQ.{q}"), 20, "the message in the dead-letter queue")
    assert dead[0]["body"] == "x", dead
    assert take(port, q) == []


@pytest.mark.timeout(90)
def test_a_restart_gives_unacked_leased_messages_back(broker):
    port, q = broker.http_port, fresh()
    send(port, q, b"acked", query="?persistent=true")
    send(port, q, b"leased", query="?persistent=true")
    got = lease(port, q, "max=10&wait=5s&ack=lease&visibility=10m")
    assert [m["body"] for m in got] == ["acked", "leased"], got
    assert end(port, got[0]["lease"]).status == 204  # durable once answered
    broker.restart()
    port = broker.http_port
    back = take(port, q, "max=10&wait=5s")
    assert [m["body"] for m in back] == ["leased"], back
    assert_problem(end(port, got[1]["lease"]), 404)  # the old lease died with the broker


def test_lease_limits_answer_429(broker_factory):
    b = broker_factory(config="[http]\nmax_leases_per_user = 2\n", shards=1)
    port, q = b.http_port, fresh()
    for body in (b"a", b"b", b"c"):
        send(port, q, body)
    got = lease(port, q)
    assert [m["body"] for m in got] == ["a", "b"], got  # capped at the room left
    r = request(port, "GET", f"/v1/queues/{q}/messages?ack=lease")
    assert_problem(r, 429)
    assert "max_leases_per_user" in r.json()["detail"], r
    assert end(port, got[0]["lease"]).status == 204  # room again
    again = lease(port, q)
    assert [m["body"] for m in again] == ["c"], again


def test_lease_total_limit(broker_factory):
    b = broker_factory(config="[http]\nmax_leases = 1\n", shards=1)
    port, q = b.http_port, fresh()
    send(port, q, b"a")
    send(port, q, b"b")
    assert len(lease(port, q)) == 1
    r = request(port, "GET", f"/v1/queues/{q}/messages?ack=lease")
    assert_problem(r, 429)
    assert "max_leases" in r.json()["detail"], r


def test_lease_errors(broker_factory):
    b = broker_factory(config="[http]\nmin_lease_visibility_ms = 500\nmax_lease_visibility_ms = 60000\n")
    port, q = b.http_port, fresh()
    assert_problem(request(port, "GET", f"/v1/queues/{q}/messages?ack=lease&visibility=100ms"), 400)
    assert_problem(request(port, "GET", f"/v1/queues/{q}/messages?ack=lease&visibility=2m"), 400)
    assert_problem(request(port, "GET", f"/v1/queues/{q}/messages?visibility=10s"), 400)
    assert_problem(request(port, "GET", f"/v1/queues/{q}/messages?ack=later"), 400)
    assert_problem(end(port, "nonsense"), 404)
    assert_problem(end(port, "0-ffff-0123456789abcdef", "nack"), 404)
    assert_problem(end(port, "99-1-0123456789abcdef"), 404)  # a shard that does not exist
    assert_problem(end(port, "0-1-0123456789abcdef", "ack", "?requeue=false"), 400)
    assert_problem(end(port, "0-1-0123456789abcdef", "nack", "?requeue=maybe"), 400)
    assert_problem(end(port, "0-1-0123456789abcdef", "nack", "?other=1"), 400)
    r = request(port, "GET", "/v1/leases/0-1-0123456789abcdef/ack")
    assert_problem(r, 405)
    assert r.headers["allow"] == "POST", r
    assert_problem(request(port, "POST", "/v1/leases/ack", body=b"not json"), 400)
    assert_problem(request(port, "POST", "/v1/leases/ack", body=b"[]"), 400)
    assert_problem(request(port, "POST", "/v1/leases/nack", body=b'{"ids": []}'), 400)
    assert_problem(request(port, "POST", "/v1/leases/ack", body=b'["a", 1]'), 400)
    assert_problem(request(port, "POST", "/v1/leases/ack", body=json.dumps(["x"] * 1001).encode()), 400)
    # The broker keeps serving.
    send(port, q, b"still")
    assert [m["body"] for m in take(port, q)] == ["still"]
