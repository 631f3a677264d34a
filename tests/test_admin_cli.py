"""`carrier admin` against a running broker (docs/admin.md): the tables it prints, --json, the
actions, and its exit status when the broker refuses. The exact table layout is checked by the
golden files of src/cli/admin_table_test.cpp."""

import json
import uuid

from helpers.broker import run_cli
from helpers.http import receive, send
from helpers.wait import wait_for


def admin(broker, *args):
    return run_cli("admin", "--server", f"127.0.0.1:{broker.http_port}", *args)


def test_queues_table_sorted_by_depth_and_json(broker):
    prefix = f"c{uuid.uuid4().hex[:8]}"
    for name, n in ((f"{prefix}.small", 1), (f"{prefix}.big", 3)):
        for _ in range(n):
            send(broker.http_port, name, b"x")
    r = admin(broker, "queues", "--sort", "depth", "--filter", prefix)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "DEPTH", "BYTES", "UNACKED", "CONSUMERS", "ENQUEUED", "OLDEST"]
    assert [l.split()[:2] for l in lines[1:]] == [[f"{prefix}.big", "3"], [f"{prefix}.small", "1"]]
    end = lines[0].index("DEPTH") + len("DEPTH")  # numbers right-aligned under their header
    assert all(l[end - 1] != " " and l[end] == " " for l in lines[1:]), lines
    r = admin(broker, "queues", "--json", "--filter", prefix)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["total"] == 2 and [d["name"] for d in doc["items"]] == [f"{prefix}.big", f"{prefix}.small"]


def test_browse_move_purge(broker):
    dlq, q = f"DLQ.c{uuid.uuid4().hex[:8]}", f"c{uuid.uuid4().hex[:8]}"
    for i in range(3):
        send(broker.http_port, dlq, f"b{i}".encode(), headers={"Carrier-Header-n": str(i)})
    r = admin(broker, "browse", dlq)
    assert r.returncode == 0, r.stderr
    assert [l.split()[-1] for l in r.stdout.splitlines()[1:]] == ["b0", "b1", "b2"]
    r = admin(broker, "move", dlq, "--to", q, "--selector", "n = 1")
    assert r.returncode == 0 and json.loads(r.stdout) == {"moved": 1}, (r.stdout, r.stderr)
    assert [m["body"] for m in receive(broker.http_port, q)] == ["b1"]
    r = admin(broker, "purge", dlq)
    assert r.returncode == 0 and json.loads(r.stdout) == {"purged": 2}, (r.stdout, r.stderr)


def test_connections_and_close(broker, stomp_client):
    stomp_client(broker)
    r = admin(broker, "connections", "--filter", "stomp", "--json")
    assert r.returncode == 0, r.stderr
    [c] = json.loads(r.stdout)["items"]
    r = admin(broker, "connections", "--filter", "stomp")
    assert r.stdout.splitlines()[1].split()[:2] == [str(c["id"]), "stomp"]
    assert admin(broker, "close", str(c["id"])).returncode == 0


def test_refusals_exit_1_with_the_problem_detail(broker):
    r = admin(broker, "browse", f"nothing{uuid.uuid4().hex[:6]}")
    assert r.returncode == 1 and "404" in r.stderr and "no queue" in r.stderr, r.stderr
    r = admin(broker, "queues", "--sort", "colour")
    assert r.returncode == 1 and "cannot sort by" in r.stderr, r.stderr
    r = run_cli("admin", "--server", "127.0.0.1:1", "queues")
    assert r.returncode == 1 and r.stderr.startswith("carrier admin: 127.0.0.1:1:"), r.stderr


def test_topics_table(broker, stomp_client):
    prefix = f"c{uuid.uuid4().hex[:8]}"
    stomp_client(broker).subscribe(f"/topic/{prefix}.news")
    r = admin(broker, "topics", "--filter", prefix)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "SUBSCRIPTIONS", "CONSUMERS", "DEPTH", "UNACKED", "ENQUEUED"]
    assert lines[1].split()[:3] == [f"{prefix}.news", "1", "1"]


def test_close_with_a_reason(broker, stomp_client):
    c = stomp_client(broker)
    r = admin(broker, "connections", "--filter", "stomp", "--json")
    [row] = json.loads(r.stdout)["items"]
    r = admin(broker, "close", str(row["id"]), "--reason", "moving you elsewhere")
    assert r.returncode == 0, r.stderr
    wait_for(lambda: c.errors, message="the ERROR frame")
    assert c.errors[0].body.rstrip("\n") == "moving you elsewhere"
