"""Federation links at runtime and what is seen of them (docs/federation.md "Links at runtime",
docs/metrics.md): POST/DELETE/GET /admin/v1/federation/links under the admin API's access check,
`carrier federation add|remove|list`, and the carrier_federation_* series in /metrics."""

import json
import os
import re

from helpers.broker import free_port, run_cli
from helpers.federation import Node, bodies, wait_links
from helpers.federation_peer import RawPeer
from helpers.http import basic, request
from helpers.users import broker_with_users
from helpers.wait import assert_stays, wait_for

LINKS = "/admin/v1/federation/links"


def links(node, **kw):
    r = request(node.broker.http_port, "GET", LINKS, **kw)
    assert r.status == 200, r
    return r.json()


def add(node, body, **kw):
    return request(node.broker.http_port, "POST", LINKS, body=json.dumps(body).encode(),
                   headers={"content-type": "application/json"}, **kw)


def problem(r, status):
    assert r.status == status, r
    assert r.headers["content-type"] == "application/problem+json", r
    return r.json()["detail"]


def node_id(node):
    return (node.broker.data_dir / "federation-node-id").read_text().strip()


def metric(node, name, **labels):
    """The value of one sample of /metrics, or None."""
    text = request(node.broker.http_port, "GET", "/metrics").body.decode()
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = "^" + re.escape(name) + (r"\{" + re.escape(want) + r"\}" if want else "") + r" (\S+)$"
    m = re.search(pattern, text, re.M)
    return float(m.group(1)) if m else None


def test_a_link_added_at_runtime_carries_messages_and_goes_when_removed(broker_factory, stomp_client):
    a = Node(broker_factory, "a")
    b = Node(broker_factory, "b")
    assert links(a)["links"] == []
    r = add(a, {"name": "to-b", "connect": f"127.0.0.1:{b.fed_port}", "cost": 2})
    assert r.status == 201, r
    wait_links(b, 1)
    wait_for(lambda: [l["state"] for l in links(a)["links"]] == ["up"], 10, lambda: links(a))
    [link] = links(a)["links"]
    assert (link["name"], link["direction"], link["connect"], link["peer_node"]) == (
        "to-b", "outbound", f"127.0.0.1:{b.fed_port}", node_id(b))
    [inbound] = links(b)["links"]
    assert inbound["direction"] == "inbound" and inbound["peer_node"] == node_id(a)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/queue/rt")
    producer = stomp_client(a.broker.port)
    producer.send_many("/queue/rt", [f"rt-{i}" for i in range(5)], headers={"persistent": "true"})
    wait_for(lambda: len(on_b.messages) == 5, 15)
    wait_for(lambda: links(a)["links"][0]["pushed"] == 5, 5, lambda: links(a))
    assert links(b)["links"][0]["received"] == 5

    r = request(a.broker.http_port, "DELETE", f"{LINKS}/to-b")
    assert r.status == 204, r
    assert links(a)["links"] == []
    wait_for(lambda: links(b)["links"] == [], 10, lambda: links(b))
    # Not dialled again: B sees no new link.
    assert_stays(lambda: b.established() == 1 and links(b)["links"] == [], 1.0)
    producer.send("/queue/rt", "stays-on-a")
    assert_stays(lambda: bodies(on_b, "stays") == [], 0.5)


def test_bad_requests_get_problem_details(broker_factory):
    a = Node(broker_factory, "a")
    port = free_port()
    assert add(a, {"name": "x", "connect": f"127.0.0.1:{port}"}).status == 201
    assert "exists" in problem(add(a, {"name": "x", "connect": f"127.0.0.1:{port}"}), 409)
    assert "HOST:PORT" in problem(add(a, {"name": "y", "connect": "nowhere"}), 400)
    assert "port" in problem(add(a, {"name": "y", "connect": "127.0.0.1:99999"}), 400)
    assert "unknown field" in problem(add(a, {"name": "y", "connect": "h:1", "colour": "red"}), 400)
    assert "required" in problem(add(a, {"connect": "h:1"}), 400)
    assert "name" in problem(add(a, {"name": "a b", "connect": "h:1"}), 400)
    assert "name" in problem(add(a, {"name": "n" * 201, "connect": "h:1"}), 400)
    assert "cost" in problem(add(a, {"name": "y", "connect": "h:1", "cost": 2 ** 63}), 400)
    assert "JSON" in problem(request(a.broker.http_port, "POST", LINKS, body=b"{not json"), 400)
    assert "no link" in problem(request(a.broker.http_port, "DELETE", f"{LINKS}/nope"), 404)
    problem(request(a.broker.http_port, "PUT", LINKS, body=b"{}"), 405)
    problem(request(a.broker.http_port, "GET", "/admin/v1/federation/other"), 404)
    # The one link not reachable is listed as connecting, and the broker still serves.
    [link] = links(a)["links"]
    assert (link["name"], link["state"]) == ("x", "connecting")


def test_a_broker_without_federation_answers_404(broker):
    assert "not enabled" in problem(request(broker.http_port, "GET", LINKS), 404)


def test_the_admin_access_check_applies(broker_factory):
    fed_port = free_port()
    b = broker_with_users(broker_factory, {"alice": "wonderland", "bob": "builder"},
                          '[admin]\nusers = ["alice"]\n[federation]\n' f'listen = "127.0.0.1:{fed_port}"\n')
    body = json.dumps({"name": "z", "connect": "127.0.0.1:1"}).encode()
    problem(request(b.http_port, "POST", LINKS, body=body), 401)
    problem(request(b.http_port, "POST", LINKS, body=body, headers=basic("bob", "builder")), 403)
    problem(request(b.http_port, "GET", LINKS, headers=basic("bob", "builder")), 403)
    r = request(b.http_port, "POST", LINKS, body=body, headers=basic("alice", "wonderland"))
    assert r.status == 201, r


def test_carrier_federation_add_list_remove(broker_factory):
    a = Node(broker_factory, "a")
    b = Node(broker_factory, "b")
    server = f"127.0.0.1:{a.broker.http_port}"
    out = run_cli("federation", "add", "--server", server, "--name", "cli-b", "--connect", f"127.0.0.1:{b.fed_port}")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out
    wait_links(b, 1)

    def listed():
        out = run_cli("federation", "list", "--server", server, "--json")
        assert out.returncode == 0, out
        return json.loads(out.stdout)
    wait_for(lambda: [l["state"] for l in listed()["links"]] == ["up"], 10)
    table = run_cli("federation", "list", "--server", server)
    assert table.returncode == 0 and "cli-b" in table.stdout and "up" in table.stdout, table
    again = run_cli("federation", "add", "--server", server, "--name", "cli-b", "--connect", "127.0.0.1:1")
    assert again.returncode == 1 and "409" in again.stderr, again
    out = run_cli("federation", "remove", "--server", server, "--name", "cli-b")
    assert out.returncode == 0, out
    assert listed()["links"] == []
    gone = run_cli("federation", "remove", "--server", server, "--name", "cli-b")
    assert gone.returncode == 1 and "404" in gone.stderr, gone


def test_metrics_show_links_pushes_backlog_pauses_and_dedup_hits(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/queue/met")
    producer = stomp_client(a.broker.port)
    producer.send_many("/queue/met", [f"m-{i}" for i in range(7)], headers={"persistent": "true"})
    wait_for(lambda: len(on_b.messages) == 7, 15)
    wait_for(lambda: metric(a, "carrier_federation_pushed_total", link="a-b", direction="outbound") == 7, 5,
             lambda: request(a.broker.http_port, "GET", "/metrics").body.decode())
    assert metric(a, "carrier_federation_link_up", link="a-b", direction="outbound") == 1
    assert metric(a, "carrier_federation_backlog", link="a-b", direction="outbound") == 0
    received = request(b.broker.http_port, "GET", "/metrics").body.decode()
    assert re.search(r'^carrier_federation_received_total\{link="127\.0\.0\.1:\d+",direction="inbound"\} 7$',
                     received, re.M), received
    assert metric(a, "carrier_federation_bytes_out_total", link="a-b", direction="outbound") > 0
    # A raw peer pauses a selector toward itself and repeats a push: both show.
    peer = RawPeer(b.fed_port)
    peer.control(5, "queue:held")
    msg_id = os.urandom(16)
    assert peer.push(msg_id, "met", "once") == "ok"
    assert peer.push(msg_id, "met", "once") == "ok duplicate"
    assert metric(b, "carrier_federation_dedup_hits_total") == 1
    report = links(b)
    assert report["dedup"]["hits"] == 1
    paused = [l["paused"] for l in report["links"] if l["peer_node"] == peer.node_id.hex()]
    assert paused == [["queue:held"]], report
    text = request(b.broker.http_port, "GET", "/metrics").body.decode()
    assert re.search(r'^carrier_federation_paused_selectors\{link="[^"]+",direction="inbound"\} 1$', text, re.M), text
    peer.close()
