"""HTTP durable subscriptions (docs/http.md, "Subscriptions"): PUT /v1/subscriptions/{name}
with a topic filter (and a selector) makes one, GET describes it, GET .../messages polls it like a
queue (ack=auto and ack=lease), DELETE removes it; it survives a restart, an unpolled one expires
after http.subscription_idle_timeout_ms, STOMP publishers reach it, and every error status."""

import json
import uuid

import pytest

from helpers.http import assert_problem, request, send
from helpers.reliable import config, core
from helpers.wait import wait_for


def fresh(prefix="sub"):
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def put(port, name, spec):
    body = spec if isinstance(spec, bytes) else json.dumps(spec).encode()
    return request(port, "PUT", f"/v1/subscriptions/{name}", body=body,
                   headers={"Content-Type": "application/json"})


def poll(port, name, query="max=10&wait=5s"):
    r = request(port, "GET", f"/v1/subscriptions/{name}/messages?{query}")
    assert r.status in (200, 204), r
    return [] if r.status == 204 else r.json()


def test_create_describe_poll_delete(broker):
    port, name, topic = broker.http_port, fresh(), f"news.{uuid.uuid4().hex[:8]}"
    r = put(port, name, {"topic": f"{topic}.>"})
    assert r.status == 201, r
    assert r.json()["name"] == name and r.json()["topic"] == f"{topic}.>", r
    assert put(port, name, {"topic": f"{topic}.>"}).status == 200  # the same again: no change
    assert_problem(put(port, name, {"topic": f"{topic}.*"}), 409)
    r = request(port, "GET", f"/v1/subscriptions/{name}")
    assert r.status == 200 and r.json()["topic"] == f"{topic}.>", r
    assert r.json()["idle_timeout_ms"] == 86400000, r
    # Published while nobody polls: it waits in the subscription.
    send(port, f"{topic}.eu", b"kept", kind="topics")
    send(port, f"{topic}.us", b"also", kind="topics")
    got = poll(port, name)
    assert [m["body"] for m in got] == ["kept", "also"], got
    assert poll(port, name, "max=10") == []  # ack=auto: taken
    r = request(port, "DELETE", f"/v1/subscriptions/{name}")
    assert r.status == 204, r
    assert_problem(request(port, "GET", f"/v1/subscriptions/{name}"), 404)
    assert_problem(request(port, "GET", f"/v1/subscriptions/{name}/messages"), 404)
    assert_problem(request(port, "DELETE", f"/v1/subscriptions/{name}"), 404)


def test_stomp_publish_reaches_an_http_subscription_with_a_selector(broker, stomp_client):
    port, name, topic = broker.http_port, fresh(), f"cross.{uuid.uuid4().hex[:8]}"
    assert put(port, name, {"topic": topic, "selector": "color = 'red'"}).status == 201
    c = stomp_client(broker.port)
    c.send(f"/topic/{topic}", "blue one", headers={"color": "blue"})
    c.send(f"/topic/{topic}", "red one", headers={"color": "red"})
    got = poll(port, name)
    assert [m["body"] for m in got] == ["red one"], got
    assert got[0]["destination"] == f"/topic/{topic}", got


def test_lease_poll_on_a_subscription(broker):
    port, name, topic = broker.http_port, fresh(), f"leased.{uuid.uuid4().hex[:8]}"
    assert put(port, name, {"topic": topic}).status == 201
    send(port, topic, b"m1", kind="topics")
    send(port, topic, b"m2", kind="topics")
    got = poll(port, name, "max=10&wait=5s&ack=lease&visibility=30s")
    assert [m["body"] for m in got] == ["m1", "m2"], got
    assert request(port, "POST", f"/v1/leases/{got[0]['lease']}/ack").status == 204
    assert request(port, "POST", f"/v1/leases/{got[1]['lease']}/nack").status == 204
    back = poll(port, name, "max=10&wait=5s")
    assert [m["body"] for m in back] == ["m2"] and back[0]["redelivered"], back


def test_other_protocols_names_do_not_collide(broker, stomp_client):
    port, topic = broker.http_port, f"ns.{uuid.uuid4().hex[:8]}"
    c = stomp_client(broker.port, connect_headers={"client-id": "c1"})
    c.subscribe(f"/topic/{topic}", id="s1", headers={"activemq.subscriptionName": "same"})
    assert put(port, "same", {"topic": f"{topic}.other"}).status == 201  # its own namespace
    c.send(f"/topic/{topic}", "for stomp")
    c.wait_messages(1)
    assert poll(port, "same", "max=10") == []


@pytest.mark.timeout(90)
def test_a_subscription_and_its_messages_survive_a_restart(broker):
    port, name, topic = broker.http_port, fresh(), f"durable.{uuid.uuid4().hex[:8]}"
    assert put(port, name, {"topic": topic, "selector": "keep = 'yes'"}).status == 201
    for body, keep in (("m1", "no"), ("m2", "yes"), ("m3", "yes")):
        send(port, topic, body.encode(), kind="topics", query="?persistent=true",
             headers={"Carrier-Header-keep": keep})
    broker.restart()
    port = broker.http_port
    r = request(port, "GET", f"/v1/subscriptions/{name}")
    assert r.status == 200 and r.json()["selector"] == "keep = 'yes'", r
    got = poll(port, name)
    assert [m["body"] for m in got] == ["m2", "m3"], got
    # Still matched into after the restart, selector and all.
    send(port, topic, b"m0", kind="topics", headers={"Carrier-Header-keep": "no"})
    send(port, topic, b"m4", kind="topics", headers={"Carrier-Header-keep": "yes"})
    assert [m["body"] for m in poll(port, name)] == ["m4"]


@pytest.mark.timeout(60)
def test_an_unpolled_subscription_expires(broker_factory):
    b = broker_factory(config=config("[http]\nsubscription_idle_timeout_ms = 1000\n", core(sweep_interval_ms=100)))
    port, idle, used, topic = b.http_port, fresh(), fresh(), f"idle.{uuid.uuid4().hex[:8]}"
    assert put(port, idle, {"topic": topic}).status == 201
    assert put(port, used, {"topic": topic}).status == 201
    send(port, topic, b"lost", kind="topics", query="?persistent=true")
    # `used` is polled all along, `idle` never.
    taken = []

    def idle_gone():
        taken.extend(m["body"] for m in poll(port, used, "max=10&wait=200ms"))
        return request(port, "GET", f"/v1/subscriptions/{idle}").status == 404

    wait_for(idle_gone, 20, "the idle subscription to expire")
    assert taken == ["lost"]
    assert request(port, "GET", f"/v1/subscriptions/{used}").status == 200
    # Gone with its messages: made again, it starts empty.
    assert put(port, idle, {"topic": topic}).status == 201
    assert poll(port, idle, "max=10") == []


def test_subscription_limit(broker_factory):
    b = broker_factory(config="[http]\nmax_subscriptions = 1\n")
    port = b.http_port
    assert put(port, fresh(), {"topic": "lim.a"}).status == 201
    assert_problem(put(port, fresh(), {"topic": "lim.b"}), 429)


def test_subscription_errors(broker):
    port, name = broker.http_port, fresh()
    assert_problem(put(port, name, b"not json"), 400)
    assert_problem(put(port, name, {"selector": "a = 1"}), 400)
    assert_problem(put(port, name, {"topic": 5}), 400)
    assert_problem(put(port, name, {"topic": "a", "extra": 1}), 400)
    assert_problem(put(port, name, {"topic": "a", "selector": "a = = 1"}), 400)
    assert_problem(put(port, name, {"topic": "a", "selector": 3}), 400)
    assert_problem(put(port, name, {"topic": "a.>.b"}), 400)
    assert_problem(put(port, name, {"topic": "$sys.x"}), 400)
    assert_problem(put(port, name, {"topic": ""}), 400)
    assert_problem(put(port, "bad%01name", {"topic": "a"}), 400)
    assert_problem(put(port, "x" * 300, {"topic": "a"}), 400)
    assert_problem(put(port, "bad%zzname", {"topic": "a"}), 400)
    r = request(port, "POST", f"/v1/subscriptions/{name}")
    assert_problem(r, 405)
    assert "PUT" in r.headers["allow"], r
    assert_problem(request(port, "POST", f"/v1/subscriptions/{name}/messages"), 405)
    assert_problem(request(port, "GET", f"/v1/subscriptions/{name}?x=1"), 400)
    assert put(port, name, {"topic": "ok.topic"}).status == 201
    assert_problem(request(port, "GET", f"/v1/subscriptions/{name}/messages?max=0"), 400)
    assert_problem(request(port, "GET", f"/v1/subscriptions/{name}/messages?ack=lease&visibility=1ms"), 400)
    assert request(port, "GET", f"/v1/subscriptions/{name}").status == 200  # still serving
