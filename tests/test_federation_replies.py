"""Replies across links (docs/federation.md "Replies"): a reply to a request that crossed links
travels back along the reversed stack (sendback), hop by hop, to the requester's temporary
queue; the temporary queue is known only on the nodes the request passed, never flooded."""

import uuid

import pytest

from helpers.federation import Node, bodies, start_line, wait_links
from helpers.federation_peer import RESULT, SENDBACK, RawPeer
from helpers.http import request
from helpers.wait import assert_stays, wait_for


def temp_queues(node, part):
    """The temporary queues a node's admin API lists whose name holds `part`."""
    r = request(node.broker.http_port, "GET", f"/admin/v1/destinations?kind=temp-queue&filter={part}")
    assert r.status == 200, r
    return [d["name"] for d in r.json()["items"] if d["kind"] == "temp-queue"]


def serve_requests(responder, answered):
    """Answers each request once, to its reply-to, with its correlation-id."""
    for m in list(responder.messages):
        if m.headers["message-id"] in answered:
            continue
        answered.add(m.headers["message-id"])
        responder.send(m.headers["reply-to"], m.body.replace("ping", "pong"),
                       headers={"correlation-id": m.headers.get("correlation-id", "")})


@pytest.mark.timeout(60)
def test_request_reply_across_three_hops_returns_along_the_path(broker_factory, stomp_client):
    a, b, c = start_line(broker_factory, ["a", "b", "c"])
    d = Node(broker_factory, "d", links=[b])  # beside the path: B's other neighbour
    wait_links(b, 3)
    service = f"/queue/svc-{uuid.uuid4().hex[:6]}"
    responder = stomp_client(c.broker.port)
    responder.subscribe(service)
    requester = stomp_client(a.broker.port)
    reply_name = f"rep{uuid.uuid4().hex[:6]}"
    sent = [f"ping {i}" for i in range(10)]
    for i, body in enumerate(sent):
        requester.send(service, body, headers={"reply-to": f"/temp-queue/{reply_name}", "correlation-id": f"c{i}"})
    wait_for(lambda: len(responder.messages) >= len(sent), 20,
             lambda: f"{len(sent)} requests on C, got {len(responder.messages)}")
    reply_to = responder.messages[0].headers["reply-to"]
    # The requester's queue, named for A's node on the network.
    assert reply_to.startswith("/temp-queue/carrier-") and reply_to.endswith("." + reply_name), reply_to
    answered = set()
    serve_requests(responder, answered)
    wait_for(lambda: len(requester.messages) >= len(sent), 20,
             lambda: f"{len(sent)} replies on A, got {len(requester.messages)}")
    assert_stays(lambda: len(requester.messages) == len(sent), 0.5, "a reply arrived twice")
    assert sorted(bodies(requester)) == sorted(b.replace("ping", "pong") for b in sent)
    assert sorted(m.headers.get("correlation-id") for m in requester.messages) == sorted(
        f"c{i}" for i in range(len(sent)))
    assert {m.headers.get("subscription") for m in requester.messages} == {f"/temp-queue/{reply_name}"}
    # The way back was learnt where the requests passed (B, C) and nowhere else (D).
    assert temp_queues(b, reply_name) and temp_queues(c, reply_name)
    assert temp_queues(d, reply_name) == []


@pytest.mark.timeout(60)
def test_reply_after_the_requester_left_goes_nowhere_and_the_link_stays_up(broker_factory, stomp_client):
    a, b = start_line(broker_factory, ["a", "b"])
    wait_links(b, 1)
    service = f"/queue/svc-{uuid.uuid4().hex[:6]}"
    responder = stomp_client(b.broker.port)
    responder.subscribe(service)
    requester = stomp_client(a.broker.port)
    requester.send(service, "ping gone", headers={"reply-to": "/temp-queue/gone"})
    wait_for(lambda: len(responder.messages) == 1, 20)
    requester.disconnect()  # its temporary queue goes with it
    responder.send(responder.messages[0].headers["reply-to"], "pong gone")
    wait_for(lambda: "sendback refused" in b.broker.log(2000), 10, lambda: b.broker.log())
    # The link still carries requests and replies.
    second = stomp_client(a.broker.port)
    second.send(service, "ping again", headers={"reply-to": "/temp-queue/again"})
    wait_for(lambda: len(responder.messages) == 2, 20)
    responder.send(responder.messages[1].headers["reply-to"], "pong again")
    wait_for(lambda: bodies(second) == ["pong again"], 20)
    assert b.established() == 1


def test_malformed_sendback_gets_an_error_and_the_link_stays_up(broker_factory):
    node = Node(broker_factory, "n")
    peer = RawPeer(node.fed_port)
    op, body = peer.request(SENDBACK, b"\x00\x00\x00\x05" + b"\x00" * 10)
    assert op == RESULT and body.startswith(b"error: "), body
    assert peer.set_max_rate(0) == (RESULT, b"ok\r\n")
    peer.close()
