"""A node whose broker holds its producers back (docs/federation.md, "Back-pressure"): while its
store's disk is under [journal] disk_free_limit_bytes, its links leave the far nodes' pushes
unread, as a STOMP session leaves SENDs, so the messages wait on the far node, unacknowledged by
its forwarding consumer; when space returns they all arrive, once each.

A limit above any real disk (2^62 bytes) puts the node in the alarm without filling a disk;
lowering it to 0 by SIGHUP is the space coming back (as test_journal_disk_limit.py does)."""

import json
import signal

import pytest

from helpers.federation import Node, bodies, wait_links
from helpers.http import request
from helpers.wait import assert_stays, wait_for

ABOVE_ANY_DISK = 1 << 62


def disk_alarm(node):
    r = request(node.broker.http_port, "GET", "/admin/v1/overview")
    assert r.status == 200, r
    return json.loads(r.body)["disk"]["alarm"]


def queue_depth(node, name):
    r = request(node.broker.http_port, "GET", f"/admin/v1/queues/{name}")
    assert r.status == 200, r
    doc = r.json()
    return doc["depth"] + doc.get("unacked", 0)


@pytest.mark.timeout(60)
def test_pushes_wait_while_the_disk_is_short_and_arrive_once_when_it_returns(broker_factory, stomp_client):
    b = Node(broker_factory, "b", extra=f"[journal]\ndisk_free_limit_bytes = {ABOVE_ANY_DISK}\n")
    wait_for(lambda: disk_alarm(b), 10, "the disk alarm on b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/queue/held")
    producer = stomp_client(a.broker.port)
    sent = [f"held-{i}" for i in range(10)]
    for body in sent:
        producer.send("/queue/held", body, headers={"persistent": "true"})
    # Nothing gets through while b's disk is short, and a keeps every message.
    assert_stays(lambda: bodies(on_b, "held-") == [], 1.0, "a push was taken during the disk alarm")
    assert queue_depth(a, "held") == len(sent)

    config = b.broker.config_path.read_text().replace(str(ABOVE_ANY_DISK), "0")
    b.broker.config_path.write_text(config)
    b.broker.send_signal(signal.SIGHUP)
    wait_for(lambda: len(bodies(on_b, "held-")) >= len(sent), 20,
             lambda: f"{len(sent)} on b, got {bodies(on_b, 'held-')}\n{b.broker.log()}")
    assert_stays(lambda: len(bodies(on_b, "held-")) == len(sent), 1.0, "a message arrived twice")
    assert sorted(bodies(on_b, "held-")) == sorted(sent)
    wait_for(lambda: queue_depth(a, "held") == 0, 10, "a's queue to empty once b took them")
