"""The admin API under /admin/v1/ (docs/admin.md): overview, destinations, connections (list and
close), browse, purge, move by selector and test messages, with its 400/403/404/405 answers as
problem details, and the admin right ([admin] users, else loopback clients only)."""

import http.client
import json
import subprocess
import uuid

import pytest

from helpers.broker import free_port
from helpers.http import assert_problem, basic, receive, request, send
from helpers.users import broker_with_users
from helpers.wait import wait_for


def name():
    return f"a{uuid.uuid4().hex[:10]}"


def get(port, path, **kw):
    r = request(port, "GET", path, **kw)
    assert r.status == 200, r
    return r.json()


def test_overview(broker):
    send(broker.http_port, name(), b"x")
    o = get(broker.http_port, "/admin/v1/overview")
    assert o["shards"] == 2 and o["version"] and o["ready"] is True
    assert o["store"]["kind"] == "log" and o["store"]["healthy"] is True
    assert o["messages"]["published"] >= 1 and o["messages"]["ready"] >= 1
    assert o["memory"]["used_bytes"] > 0
    assert {"protocol": "http", "address": "127.0.0.1", "port": broker.http_port} in o["listeners"]
    assert o["connections"]["http"] >= 1


def test_destinations_filter_sort_and_pages(broker):
    prefix = name()
    for i, n in enumerate((3, 1, 2)):
        for _ in range(n):
            send(broker.http_port, f"{prefix}.q{i}", b"x")
    page = get(broker.http_port, f"/admin/v1/destinations?filter={prefix}&sort=depth&order=desc")
    assert page["total"] == 3
    assert [(d["name"], d["depth"]) for d in page["items"]] == [
        (f"{prefix}.q0", 3), (f"{prefix}.q2", 2), (f"{prefix}.q1", 1)]
    assert page["items"][0]["kind"] == "queue" and page["items"][0]["consumers"] == 0
    page = get(broker.http_port, f"/admin/v1/destinations?filter={prefix}&offset=1&limit=1")
    assert page["total"] == 3 and [d["name"] for d in page["items"]] == [f"{prefix}.q1"]
    assert_problem(request(broker.http_port, "GET", "/admin/v1/destinations?sort=colour"), 400)
    assert_problem(request(broker.http_port, "GET", "/admin/v1/destinations?limit=0"), 400)
    assert_problem(request(broker.http_port, "GET", "/admin/v1/destinations?bogus=1"), 400)


def test_browse_does_not_consume_and_purge_by_selector(broker):
    q = name()
    for i in range(5):
        send(broker.http_port, q, f"m{i}".encode(), headers={"Carrier-Header-n": str(i)})
    browsed = get(broker.http_port, f"/admin/v1/queues/{q}/messages?limit=3")
    assert [m["body_preview"] for m in browsed] == ["m0", "m1", "m2"]
    assert browsed[0]["headers"]["n"] == "0" and browsed[0]["body_bytes"] == 2
    assert len(get(broker.http_port, f"/admin/v1/queues/{q}/messages?limit=100")) == 5, "browse took nothing"
    r = request(broker.http_port, "DELETE", f"/admin/v1/queues/{q}/messages?selector=n%20%3C%202")
    assert r.status == 200 and r.json() == {"purged": 2}, r
    assert [m["body"] for m in receive(broker.http_port, q, "max=10&wait=5s")] == ["m2", "m3", "m4"]
    assert_problem(request(broker.http_port, "DELETE", f"/admin/v1/queues/{q}/messages?selector=n%20%3D"), 400)
    assert_problem(request(broker.http_port, "GET", f"/admin/v1/queues/{name()}/messages"), 404)
    assert_problem(request(broker.http_port, "DELETE", "/admin/v1/queues/$mqtt-sessions/messages"), 403)


def test_move_by_selector_replays_dead_letters(broker):
    dlq, q = f"DLQ.{name()}", name()
    for i in range(4):
        send(broker.http_port, dlq, f"d{i}".encode(), headers={"Carrier-Header-retry": "yes" if i % 2 else "no"})
    r = request(broker.http_port, "POST", f"/admin/v1/queues/{dlq}/move?to=/queue/{q}&selector=retry%3D%27yes%27")
    assert r.status == 200 and r.json() == {"moved": 2}, r
    assert sorted(m["body"] for m in receive(broker.http_port, q, "max=10&wait=5s")) == ["d1", "d3"]
    assert [m["body_preview"] for m in get(broker.http_port, f"/admin/v1/queues/{dlq}/messages")] == ["d0", "d2"]
    r = request(broker.http_port, "POST", f"/admin/v1/queues/{dlq}/move?to={q}&copy=true")
    assert r.status == 200 and r.json() == {"copied": 2}, r
    assert len(get(broker.http_port, f"/admin/v1/queues/{dlq}/messages")) == 2
    assert_problem(request(broker.http_port, "POST", f"/admin/v1/queues/{dlq}/move?to={dlq}"), 400)
    assert_problem(request(broker.http_port, "POST", f"/admin/v1/queues/{dlq}/move"), 400)


def test_send_a_test_message(broker):
    q = name()
    r = request(broker.http_port, "POST", f"/admin/v1/queues/{q}/messages", body=b"ping")
    assert r.status == 201, r
    assert [m["body"] for m in receive(broker.http_port, q)] == ["ping"]


def test_connections_list_and_close(broker, stomp_client):
    stomp_client(broker)
    conns = get(broker.http_port, "/admin/v1/connections?filter=stomp")
    assert conns["total"] == 1
    [c] = conns["items"]
    assert c["protocol"] == "stomp" and c["peer"].startswith("127.0.0.1:") and c["since_ms"] > 0
    r = request(broker.http_port, "DELETE", f"/admin/v1/connections/{c['id']}")
    assert r.status == 204, r
    wait_for(lambda: get(broker.http_port, "/admin/v1/connections?filter=stomp")["total"] == 0,
             message="the STOMP connection closed")
    assert_problem(request(broker.http_port, "DELETE", f"/admin/v1/connections/{c['id']}"), 404)
    assert_problem(request(broker.http_port, "DELETE", "/admin/v1/connections/abc"), 400)


def test_unknown_routes_and_methods(broker):
    assert_problem(request(broker.http_port, "GET", "/admin/v1/nothing"), 404)
    assert_problem(request(broker.http_port, "GET", "/admin/v2/overview"), 404)
    r = request(broker.http_port, "POST", "/admin/v1/overview", body=b"")
    assert_problem(r, 405)
    assert r.headers["allow"] == "GET, HEAD"


def test_admin_users_need_credentials_and_the_right(broker_factory):
    b = broker_with_users(broker_factory, {"alice": "wonderland", "bob": "builder"},
                          '[admin]\nusers = ["alice"]\n')
    assert_problem(request(b.http_port, "GET", "/admin/v1/overview"), 401)
    assert_problem(request(b.http_port, "GET", "/admin/v1/overview", headers=basic("bob", "builder")), 403)
    assert get(b.http_port, "/admin/v1/overview", headers=basic("alice", "wonderland"))["ready"] is True


def non_loopback_address():
    """An IPv4 address of this machine other than 127.x, or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout
    except OSError:
        return None
    return next((a for a in out.split() if "." in a and not a.startswith("127.")), None)


def test_without_admin_users_only_loopback_clients(broker_factory):
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    port = free_port()
    # No users on a non-loopback listener: allowed only when said so (test_acl_defaults.py).
    b = broker_factory(http_flag=False,
                       config=f'[http]\nlisten = "0.0.0.0:{port}"\n[auth]\nallow_anonymous = true\n')
    wait_for(lambda: request(port, "GET", "/healthz").status == 200, message="the HTTP listener")
    assert get(port, "/admin/v1/overview")["ready"] is True
    c = http.client.HTTPConnection(address, port, timeout=10)
    c.request("GET", "/admin/v1/overview")
    r = c.getresponse()
    body = json.loads(r.read())
    c.close()
    assert r.status == 403 and "loopback" in body["detail"], body
    assert b.running()
