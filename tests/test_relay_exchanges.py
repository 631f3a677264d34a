"""Seed 000's relay over raw HTTP (docs/relay.md): a thin peer asks for an id, connects with a
lease, creates, searches, listens on and sends to pipes, and collects what waits for it by
polling, with the exact JXME bytes on the wire."""

import signal
import uuid

import pytest

from helpers.http import request
from helpers.raw_relay import MEDIA_TYPE, Peer, decode, encode, request_message
from helpers.wait import wait_for


def name():
    return f"r{uuid.uuid4().hex[:10]}"


def create_pipe(peer, pipe, arg="JxtaUnicast"):
    m = peer.call("create", [("name", pipe), ("type", "PIPE"), ("arg", arg)])
    assert m.get("response") == "success", m
    assert m.get("type") == "PIPE" and m.get("name") == pipe and m.get("arg") == arg
    return m.get("id")


def listen(peer, pipe_id):
    m = peer.call("listen", [("id", pipe_id)])
    assert m.get("response") == "success", m
    return m


# Listing 14's application elements: two in the empty namespace, one in "records".
LISTING_14_APP = [("", "sender", "tester"), ("", "message", "Hello"), ("records", "fileReference", "3")]


def send(peer, pipe_id, app=LISTING_14_APP):
    m = peer.call("send", [("id", pipe_id)], extra=app, namespaces=("proxy", "records"))
    assert m.get("response") == "success", m


def pipe_messages(peer, count, timeout=10.0):
    """Polls until `count` pipe messages (response=message) came."""
    got = [m for m in getattr(peer, "inbox", []) if m.get("response") == "message"]
    peer.inbox = [m for m in getattr(peer, "inbox", []) if m.get("response") != "message"]

    def poll():
        for m in peer.post(wait_ms=500, max_messages=100):
            (got if m.get("response") == "message" else peer.inbox).append(m)
        return len(got) >= count
    wait_for(poll, timeout, f"{count} pipe messages for {peer.id}")
    return got


def app_elements(m):
    return [(e[0], e[1], e[2].decode()) for e in m.elements if e[0] not in ("proxy", "jxta")]


def test_create_answer_is_listing_11_byte_for_byte(broker):
    """docs/relay.md shows these bytes."""
    peer = Peer(broker.http_port)
    r = request(broker.http_port, "POST", f"/{peer.id}?0,-1,{peer.base}", headers={"Content-Type": MEDIA_TYPE},
                body=encode([("proxy", "request", "create"), ("proxy", "name", "testPipe"),
                             ("proxy", "requestId", "4"), ("proxy", "type", "PIPE"),
                             ("proxy", "arg", "JxtaUnicast")]))
    assert r.status == 200
    assert r.body == encode([("proxy", "response", "success"), ("proxy", "requestId", "4"),
                             ("proxy", "type", "PIPE"), ("proxy", "name", "testPipe"),
                             ("proxy", "id", "urn:jxta:uuid-51746573745069706504"),
                             ("proxy", "arg", "JxtaUnicast"),
                             ("jxta", "EndpointDestinationAddress", "jxta://" + peer.id),
                             ("jxta", "EndpointSourceAddress", peer.base)])


def test_search_answer_is_listing_9_byte_for_byte(broker):
    """docs/relay.md shows these bytes: the seed's search for myPeerGroup (Listing 8) and
    Carrier's answer, whose group id is the seed's own."""
    peer = Peer(broker.http_port)
    assert peer.call("create", [("type", "GROUP"), ("name", "myPeerGroup")]).get("response") == "success"
    r = request(broker.http_port, "POST", f"/{peer.id}?0,-1,{peer.base}", headers={"Content-Type": MEDIA_TYPE},
                body=encode([("proxy", "request", "search"), ("proxy", "type", "GROUP"), ("proxy", "attr", "name"),
                             ("proxy", "value", "myPeerGroup"), ("proxy", "threshold", "1"),
                             ("proxy", "requestId", "3")]))
    assert r.status == 200
    assert r.body == encode([("proxy", "response", "result"), ("proxy", "requestId", "3"),
                             ("proxy", "type", "GROUP"), ("proxy", "name", "myPeerGroup"),
                             ("proxy", "id", "urn:jxta:uuid-476D795065657247726F757002"),
                             ("jxta", "EndpointDestinationAddress", "jxta://" + peer.id),
                             ("jxta", "EndpointSourceAddress", peer.base)])


def test_pid_connect_create_listen_search_send_poll(broker):
    port = broker.http_port
    r = request(port, "GET", "/unknown-unknown?0,-1,http://127.0.0.1:%d/EndpointService:jxta-NetGroup/"
                "uuid-DEADBEEFDEAFBABAFEEDBABE0000000F05/pid" % port)
    assert r.status == 200 and r.headers["content-type"] == MEDIA_TYPE
    [pid] = decode(r.body)
    # Listing 3's layout: relay-namespace response and peerid, then the jxta endpoint addresses.
    assert [(e[0], e[1]) for e in pid.elements] == [("relay", "response"), ("relay", "peerid"),
                                                     ("jxta", "EndpointDestinationAddress"),
                                                     ("jxta", "EndpointSourceAddress")]
    assert pid.get("peerid", "relay").startswith("uuid-59616261646162614A78746150325033")

    receiver, sender = Peer(port, lease_ms=7200000), Peer(port)
    assert receiver.lease == 3600000, "a lease is capped by relay.max_lease_ms"
    pipe = name()
    pipe_id = create_pipe(receiver, pipe)
    listen(receiver, pipe_id)
    # Search by name with a wildcard finds it (one result message per match).
    [found] = sender.collect(sender.ask("search", [("type", "PIPE"), ("attr", "name"),
                                                   ("value", pipe[:6] + "*"), ("threshold", "5")]))
    assert found.get("response") == "result" and found.get("id") == pipe_id and found.get("name") == pipe
    send(sender, found.get("id"))
    [m] = pipe_messages(receiver, 1)
    assert m.get("id") == pipe_id
    # The application elements come back byte-identical, in their namespaces.
    assert app_elements(m) == LISTING_14_APP


def test_responses_carry_their_request_ids_and_errors_have_a_reason(broker):
    peer = Peer(broker.http_port)
    m = peer.call("send", [("id", "urn:jxta:uuid-nothing")])
    assert m.get("response") == "error" and "pipe id" in m.get("reason")
    m = peer.call("frobnicate")
    assert m.get("response") == "error" and "unknown request" in m.get("reason")
    # Two requests in one POST: two responses, each with its own requestId.
    body = request_message("create", 7, [("name", name()), ("type", "GROUP")]) + \
        request_message("create", 8, [("name", name()), ("type", "PIPE"), ("arg", "JxtaPropagate")])
    got = peer.post(body, wait_ms=2000, max_messages=10)
    peer.pending = got
    ids = {m.get("requestId") for m in got + peer.collect("8")}
    assert {"7", "8"} <= ids


def test_propagate_pipe_reaches_two_listeners(broker):
    port = broker.http_port
    a, b, sender = Peer(port), Peer(port), Peer(port)
    pipe_id = create_pipe(a, name(), "JxtaPropagate")
    listen(a, pipe_id)
    listen(b, pipe_id)
    send(sender, pipe_id)
    for peer in (a, b):
        [m] = pipe_messages(peer, 1)
        assert app_elements(m) == LISTING_14_APP


def test_a_message_stays_until_the_next_poll_acknowledges_it(broker):
    port = broker.http_port
    receiver, sender = Peer(port), Peer(port)
    pipe_id = create_pipe(receiver, name())
    listen(receiver, pipe_id)
    send(sender, pipe_id)
    [m] = pipe_messages(receiver, 1)
    # The message is acked by this poll; nothing else comes.
    assert [x for x in receiver.post(wait_ms=300) if x.get("response") == "message"] == []


@pytest.mark.timeout(60)
def test_lease_expiry_discards_unpolled_messages_and_forgets_the_peer(broker, stomp_client):
    port = broker.http_port
    sender = Peer(port)
    leased = Peer(port, lease_ms=1500)
    queue, topic = name(), name()
    queue_pipe = create_pipe(leased, queue)
    topic_pipe = create_pipe(leased, topic, "JxtaPropagate")
    listen(leased, queue_pipe)
    listen(leased, topic_pipe)
    send(sender, topic_pipe)
    send(sender, queue_pipe)
    # Not polled: when the lease runs out, the unicast pipe's message goes back to its queue
    # (a STOMP consumer gets it), the propagate pipe's subscription goes with its message.
    client = stomp_client(broker)
    client.subscribe(f"/queue/{queue}")
    client.wait_messages(1, timeout=30)
    assert client.bodies() == ["Hello"]
    r = request(port, "POST", f"/{leased.id}?0,-1,{leased.base}", body=b"")
    assert r.status == 404 and b"connect first" in r.body
    leased.connect(60000)
    listen(leased, topic_pipe)
    assert [x for x in leased.post(wait_ms=500, max_messages=10) if x.get("response") == "message"] == []


def test_malformed_requests_answer_400_and_others_are_served(broker):
    port = broker.http_port
    peer = Peer(port)
    good = request_message("create", 1, [("name", name()), ("type", "GROUP")])
    for bad, words in [(b"jxmx" + good[4:], b"signature"), (good[:5] + b"\x00\x09" + good[7:], b""),
                       (good[:-1], b"element content"), (good + b"jx", b"message 2"),
                       (good.replace(b"jxel\x02", b"jxel\x07", 1), b"not declared")]:
        r = request(port, "POST", f"/{peer.id}", body=bad, headers={"Content-Type": MEDIA_TYPE})
        assert r.status == 400 and words in r.body, r
    r = request(port, "GET", "/uuid-XYZ?0,-1,http://h/connect,10")
    assert r.status == 400 and b"peer id" in r.body
    r = request(port, "GET", "/unknown-unknown?0,-1,http://h/other")
    assert r.status == 400
    r = request(port, "POST", "/uuid-0123456789ABCDEF", body=b"")
    assert r.status == 404
    # A wrong method is 405 whatever the query holds, well-formed or not.
    for query in ["0,-1,http://h/connect,10", "garbage"]:
        r = request(port, "DELETE", f"/unknown-unknown?{query}")
        assert r.status == 405 and r.headers.get("allow") == "GET, POST", r
    # The peer and everyone else go on.
    m = peer.call("create", [("name", name()), ("type", "GROUP")])
    assert m.get("response") == "success"
    assert Peer(port).lease > 0


def test_request_over_the_limit_answers_413(broker_factory):
    broker = broker_factory(config="[relay]\nmax_request_bytes = 1024\nmax_lease_ms = 5000\n")
    peer = Peer(broker.http_port)
    assert peer.lease == 5000
    big = request_message("send", 1, [("id", "x")], extra=[("", "message", "x" * 2000)])
    r = request(broker.http_port, "POST", f"/{peer.id}", body=big)
    assert r.status == 413 and b"max_request_bytes" in r.body


def test_a_send_while_the_disk_is_short_is_refused_with_a_reason_and_works_later(broker_factory):
    # A limit above any disk puts the broker in its disk alarm (test_journal_disk_limit.py); a
    # thin client feels no TCP back-pressure, so its send is answered with an error to retry.
    b = broker_factory(config=f"[journal]\ndisk_free_limit_bytes = {1 << 62}\n")
    wait_for(lambda: request(b.http_port, "GET", "/admin/v1/overview").json()["disk"]["alarm"], 10,
             "the disk alarm")
    receiver, sender = Peer(b.http_port), Peer(b.http_port)
    pipe_id = create_pipe(receiver, name())
    listen(receiver, pipe_id)
    m = sender.call("send", [("id", pipe_id)], extra=LISTING_14_APP, namespaces=("proxy", "records"))
    assert m.get("response") == "error" and "disk_free_limit_bytes" in m.get("reason"), m

    b.config_path.write_text("[journal]\ndisk_free_limit_bytes = 0\n")
    b.send_signal(signal.SIGHUP)
    wait_for(lambda: not request(b.http_port, "GET", "/admin/v1/overview").json()["disk"]["alarm"], 10,
             "the alarm to clear")
    send(sender, pipe_id)
    [got] = pipe_messages(receiver, 1)
    assert app_elements(got) == LISTING_14_APP
