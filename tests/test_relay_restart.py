"""A broker restart keeps a live relay peer's mailbox (docs/relay.md, "Restarts"): the peer, its
lease, its listens, the responses and pipe messages waiting for it and the pipe/group directory
come back after SIGTERM and after SIGKILL; a peer whose lease ran out while the broker was down
is forgotten, its mail discarded."""

import re
import signal
import time
import uuid

import pytest

from helpers.broker import now_ms
from helpers.http import request
from helpers.raw_relay import MEDIA_TYPE, Peer, decode, request_message
from helpers.wait import wait_for
from test_relay_exchanges import create_pipe, listen, pipe_messages


def name():
    return f"s{uuid.uuid4().hex[:10]}"


def settle(broker, stomp_client):
    """A persistent STOMP send with a receipt on each shard's queue: the relay's records, written
    before, are in the store too (each shard writes its batches in order)."""
    c = stomp_client(broker)
    for i in range(4):
        c.send(f"/queue/settle{i}", "x", headers={"persistent": "true"})
    c.disconnect()


def named_subscriptions_at_shutdown(broker):
    found = re.findall(r"(\d+) named subscription\(s\)", broker.log())
    assert found, broker.log()
    return sum(int(n) for n in found[-broker.shards:])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
@pytest.mark.timeout(120)
def test_a_restart_keeps_a_live_peers_mailbox(broker, stomp_client, sig):
    port = broker.http_port
    peer = Peer(port, lease_ms=600000)
    queue, topic = name(), name()
    queue_pipe = create_pipe(peer, queue)
    topic_pipe = create_pipe(peer, topic, "JxtaPropagate")
    listen(peer, queue_pipe)
    listen(peer, topic_pipe)
    stomp = stomp_client(broker)
    stomp.send(f"/queue/{queue}", "queued before", headers={"persistent": "true"})
    stomp.send(f"/topic/{topic}", "published before", headers={"persistent": "true"})
    # Two requests, one response collected: the other waits in the mailbox.
    body = request_message("create", 101, [("type", "GROUP"), ("name", name())]) + \
        request_message("create", 102, [("type", "GROUP"), ("name", name())])
    r = request(port, "POST", f"/{peer.id}?0,-1,{peer.base}", body=body,
                headers={"Content-Type": MEDIA_TYPE, "Carrier-Relay-Max": "1"})
    assert r.status == 200
    stomp.disconnect()
    settle(broker, stomp_client)
    broker.restart(sig=sig)

    # No connect: the peer is still known, with its listens and what waited for it.
    got = {}
    deadline = time.monotonic() + 30
    while not {"queued before", "published before", "102"} <= set(got):
        assert time.monotonic() < deadline, f"after the restart the peer got only {sorted(got)}"
        r = request(port, "POST", f"/{peer.id}?1000,-1,{peer.base}", body=b"",
                    headers={"Content-Type": MEDIA_TYPE, "Carrier-Relay-Max": "100"})
        assert r.status == 200, r
        for m in decode(r.body):
            key = m.get("message", "") if m.get("response") == "message" else m.get("requestId")
            got[key] = m
    assert got["102"].get("response") == "success"
    # What a poll acknowledged before the restart (the answers to requests 1-4) stays acknowledged.
    assert not {"1", "2", "3", "4"} & set(got), sorted(got)
    # The listens go on: what is sent after the restart reaches the peer too.
    stomp = stomp_client(broker)
    stomp.send(f"/queue/{queue}", "queued after")
    stomp.send(f"/topic/{topic}", "published after")
    after = pipe_messages(peer, 2)
    assert sorted(m.get("message", "") for m in after) == ["published after", "queued after"]
    # The directory too: search finds the pipes created before.
    [found] = peer.collect(peer.ask("search", [("type", "PIPE"), ("attr", "name"), ("value", queue)]))
    assert found.get("id") == queue_pipe


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
@pytest.mark.timeout(120)
def test_a_peer_whose_lease_ran_out_while_down_is_forgotten(broker, stomp_client, sig):
    port = broker.http_port
    lease_ms = 3000
    peer = Peer(port, lease_ms=lease_ms)
    queue, topic = name(), name()
    queue_pipe = create_pipe(peer, queue)
    topic_pipe = create_pipe(peer, topic, "JxtaPropagate")
    listen(peer, queue_pipe)
    listen(peer, topic_pipe)
    last_use = now_ms()
    stomp = stomp_client(broker)
    stomp.send(f"/queue/{queue}", "never polled", headers={"persistent": "true"})
    stomp.send(f"/topic/{topic}", "never polled either", headers={"persistent": "true"})
    stomp.disconnect()
    settle(broker, stomp_client)
    broker.stop(sig)
    wait_for(lambda: now_ms() > last_use + lease_ms + 500, 30, "the lease to run out while the broker is down")
    broker.start()

    r = request(port, "POST", f"/{peer.id}?0,-1,{peer.base}", body=b"", headers={"Content-Type": MEDIA_TYPE})
    assert r.status == 404 and b"connect first" in r.body, r
    assert "lease ended while the broker was down" in broker.log()
    # Its unicast pipe's message was never taken: it is the queue's again.
    consumer = stomp_client(broker)
    consumer.subscribe(f"/queue/{queue}")
    consumer.wait_messages(1, timeout=20)
    assert consumer.bodies() == ["never polled"]
    # Reconnecting starts afresh: no old listens, no old mail.
    peer.connect(60000)
    assert [m for m in peer.post(wait_ms=500, max_messages=100)] == []
    # Its propagate pipe's subscription went with it (and with the message in it).
    broker.stop()
    assert named_subscriptions_at_shutdown(broker) == 0
