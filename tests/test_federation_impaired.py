"""Federation over an impaired network (docs/federation.md "Tests"): three nodes in a line, each
in a network namespace of its own, joined by veth pairs. Packet loss is real (nftables drops
packets at random inside the namespaces: `helpers.netns.drop_randomly`), delay comes from a
relay that holds each chunk (`helpers.delay_proxy`), as this kind of kernel often has no
sch_netem. Skipped, with the reason, without root, `ip netns` or `nft`."""

import os
import shutil
import threading
import time
import types
import uuid

import pytest

from helpers.delay_proxy import DelayProxy
from helpers.federation import Node, bodies, wait_links
from helpers.http import request
from helpers.netns import Line
from helpers.wait import assert_stays, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="network namespaces need root and ip (iproute2)")

LOSS_PERCENT = 15
DELAY_MS = 40


@pytest.fixture
def line():
    made = Line(3)
    yield made
    made.close()


def via(proxy, name):
    """What Node dials for a link through `proxy` (on the dialling node's loopback)."""
    return types.SimpleNamespace(name=name, host="127.0.0.1", fed_port=proxy.port)


def start_nodes(broker_factory, line, proxies=False):
    """A in names[0], B in names[1] dialling A, C in names[2] dialling B: A <- B <- C. With
    `proxies`, each link runs through a DelayProxy in the dialling node's namespace. Returns
    the nodes and the proxies."""
    ns = line.names
    a = Node(broker_factory, "a", host=line.left(0), preexec_fn=line.preexec(ns[0]))
    relays = []
    target = a
    if proxies:
        relays.append(DelayProxy(line.left(0), a.fed_port, DELAY_MS, ns=ns[1]))
        target = via(relays[-1], "a")
    b = Node(broker_factory, "b", links=[target], host=line.left(1), preexec_fn=line.preexec(ns[1]))
    target = b
    if proxies:
        relays.append(DelayProxy(line.left(1), b.fed_port, DELAY_MS, ns=ns[2]))
        target = via(relays[-1], "b")
    c = Node(broker_factory, "c", links=[target], host=line.right(1), preexec_fn=line.preexec(ns[2]))
    wait_links(b, 2, timeout=20)
    wait_links(c, 1, timeout=20)
    return (a, b, c), relays


@pytest.mark.timeout(240)
def test_a_lossy_hop_delivers_every_confirmed_message_once_in_order_per_producer(line, broker_factory,
                                                                                 stomp_client):
    if shutil.which("nft") is None:
        pytest.skip("packet loss needs nft (Debian package nftables; scripts/bootstrap installs it)")
    (a, b, c), _ = start_nodes(broker_factory, line)
    if why := line.loss(0, LOSS_PERCENT):
        pytest.fail(f"cannot drop packets on the A-B hop: {why}")
    queue = f"/queue/lossy-{uuid.uuid4().hex[:6]}"
    consumer = line.run_in(line.names[2], lambda: stomp_client(c.broker.port))
    line.run_in(line.names[2], lambda: consumer.subscribe(queue))
    producers = [line.run_in(line.names[0], lambda: stomp_client(a.broker.port)) for _ in range(2)]
    sent = [[f"p{p}-{i:03d}" for i in range(150)] for p in range(len(producers))]
    confirmed = [[] for _ in producers]
    failures = []

    def produce(p):
        try:
            for body in sent[p]:
                producers[p].send(queue, body, headers={"persistent": "true"}, timeout=30)
                confirmed[p].append(body)
        except Exception as e:  # reported by the main thread
            failures.append(e)
    threads = [threading.Thread(target=produce, args=(p,)) for p in range(len(producers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures and all(not t.is_alive() for t in threads), failures
    assert confirmed == sent
    total = sum(len(s) for s in sent)
    wait_for(lambda: len(consumer.messages) >= total, 150,
             lambda: f"{total} on C, got {len(consumer.messages)}\n{a.broker.log()}\n{b.broker.log()}")
    assert_stays(lambda: len(consumer.messages) == total, 1.0, "a message arrived twice")
    got = bodies(consumer)
    for p, expected in enumerate(sent):
        assert [x for x in got if x.startswith(f"p{p}-")] == expected, f"producer {p}'s messages out of order"
    # The loss was real: the hop dropped packets and TCP sent them again.
    assert line.dropped(0) > 0, "no packet was dropped on the A-B hop"
    print(f"{line.dropped(0)} packets dropped on the A-B hop")


def temp_queues(line, ns, node, part):
    """The temporary queues a node's admin API lists whose name holds `part`."""
    def ask():
        r = request(node.broker.http_port, "GET", f"/admin/v1/destinations?kind=temp-queue&filter={part}")
        assert r.status == 200, r
        return [d["name"] for d in r.json()["items"] if d["kind"] == "temp-queue"]
    return line.run_in(ns, ask)


@pytest.mark.timeout(180)
def test_request_reply_across_three_delayed_hops_returns_along_the_path(line, broker_factory, stomp_client):
    (a, b, c), relays = start_nodes(broker_factory, line, proxies=True)
    try:
        service = f"/queue/svc-{uuid.uuid4().hex[:6]}"
        responder = line.run_in(line.names[2], lambda: stomp_client(c.broker.port))
        line.run_in(line.names[2], lambda: responder.subscribe(service))
        requester = line.run_in(line.names[0], lambda: stomp_client(a.broker.port))
        reply_name = f"rep{uuid.uuid4().hex[:6]}"
        # C's demand must reach A (two delayed hops) before the requests leave A's queue; the
        # requests wait there until it does, so the clock starts at the send.
        started = time.monotonic()
        sent = [f"ping {i}" for i in range(10)]
        for i, body in enumerate(sent):
            requester.send(service, body, headers={"reply-to": f"/temp-queue/{reply_name}", "correlation-id": f"c{i}"})
        wait_for(lambda: len(responder.messages) >= len(sent), 60,
                 lambda: f"{len(sent)} requests on C, got {len(responder.messages)}")
        replied_at = time.monotonic()
        for m in list(responder.messages):
            responder.send(m.headers["reply-to"], m.body.replace("ping", "pong"),
                           headers={"correlation-id": m.headers.get("correlation-id", "")})
        wait_for(lambda: len(requester.messages) >= len(sent), 60,
                 lambda: f"{len(sent)} replies on A, got {len(requester.messages)}")
        back = time.monotonic() - replied_at
        assert_stays(lambda: len(requester.messages) == len(sent), 0.5, "a reply arrived twice")
        assert sorted(bodies(requester)) == sorted(x.replace("ping", "pong") for x in sent)
        assert sorted(m.headers.get("correlation-id") for m in requester.messages) == sorted(
            f"c{i}" for i in range(len(sent)))
        # The replies crossed both delayed hops (C -> B -> A, each at least DELAY_MS one way),
        # so the delay was in effect; the requests crossed them the other way.
        assert back >= 2 * DELAY_MS / 1000.0, f"replies back in {back * 1000:.0f} ms: the delay was not there"
        assert replied_at - started >= 2 * DELAY_MS / 1000.0
        assert all(r.connections >= 1 for r in relays)
        # The way back was learnt on the path (B, C).
        assert temp_queues(line, line.names[1], b, reply_name)
        assert temp_queues(line, line.names[2], c, reply_name)
    finally:
        for r in relays:
            r.close()
