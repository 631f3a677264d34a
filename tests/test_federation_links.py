"""Federation links between two nodes (docs/federation.md): a message produced on A reaches a
consumer on B once; links need the far node's credentials; hostile bytes on the federation port
get error results, then the link is dropped, and the broker keeps serving."""

import socket
import struct

from helpers.federation import Node, bodies, probe_until_received, wait_links
from helpers.wait import assert_stays, wait_for
from test_auth import passwd


def test_queue_message_produced_on_a_is_consumed_once_on_b(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    consumer = stomp_client(b.broker.port)
    consumer.subscribe("/queue/orders")
    producer = stomp_client(a.broker.port)
    sent = [f"order-{i}" for i in range(30)]
    producer.send_many("/queue/orders", sent, headers={"persistent": "true"})
    wait_for(lambda: len(consumer.messages) >= 30, 15, lambda: f"30 messages on B, got {len(consumer.messages)}")
    assert_stays(lambda: len(consumer.messages) == 30, 0.5)
    assert sorted(bodies(consumer)) == sorted(sent)
    # Headers and persistence crossed the link with the message.
    assert consumer.messages[0].headers.get("persistent") == "true"


def test_topic_reaches_every_interested_node_once(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/topic/prices.>")
    on_a = stomp_client(a.broker.port)
    on_a.subscribe("/topic/prices.>")
    producer = stomp_client(a.broker.port)
    probe_until_received(producer, on_b, "/topic/prices.eu")
    for i in range(10):
        producer.send("/topic/prices.eu", f"price-{i}")
    counts = lambda: (len(bodies(on_a, "price-")), len(bodies(on_b, "price-")))  # noqa: E731
    # Both subscribers get all ten (the local one need not be first on a loaded machine), then
    # nothing more: no copy comes back from b, none is forwarded twice.
    wait_for(lambda: counts() == (10, 10), 10, message=lambda: f"(a, b) got {counts()}")
    assert_stays(lambda: counts() == (10, 10), 0.5, message=lambda: f"(a, b) got {counts()}")


def test_traffic_flows_both_ways_whichever_side_dialled(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(b, 1)
    on_a = stomp_client(a.broker.port)
    on_a.subscribe("/queue/back")
    producer = stomp_client(b.broker.port)
    producer.send("/queue/back", "from-b", headers={"persistent": "true"})
    wait_for(lambda: bodies(on_a) == ["from-b"], 10)


def test_queue_stays_with_local_consumer(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    # A's own consumer first: when B's demand reaches A, A already keeps the queue.
    on_a = stomp_client(a.broker.port)
    on_a.subscribe("/queue/work")
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/queue/work")
    producer = stomp_client(a.broker.port)
    producer.send_many("/queue/work", [f"w-{i}" for i in range(20)])
    wait_for(lambda: len(on_a.messages) == 20, 10)
    assert_stays(lambda: not on_b.messages, 0.5)


def test_link_needs_the_far_nodes_credentials(broker_factory):
    b = Node(broker_factory, "b", users=[passwd("linker", "s3cret")])
    wrong = Node(broker_factory, "wrong", links=[b], link_extra='username = "linker"\npassword = "nope"\n')
    # Refused, and dialled again after a back-off: refused again.
    wait_for(lambda: b.broker.log(10000).count("link refused: authentication failed") >= 2, 10,
             lambda: b.broker.log())
    assert wrong.established() == 0
    right = Node(broker_factory, "right", links=[b], link_extra='username = "linker"\npassword = "s3cret"\n')
    wait_links(right, 1)


# --- hostile bytes on the federation port ---------------------------------------------------

UNKNOWN_OPERATION = 0x77
RESULT = 0x80000000


def frame(operation, request_id, body=b""):
    return struct.pack(">III", len(body), operation, request_id) + body


def read_frame(sock):
    header = b""
    while len(header) < 12:
        chunk = sock.recv(12 - len(header))
        if not chunk:
            return None
        header += chunk
    length, operation, request_id = struct.unpack(">III", header)
    body = b""
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    return operation, request_id, body


def test_refused_frames_get_error_results_then_the_link_is_dropped(broker_factory, stomp_client):
    node = Node(broker_factory, "n", extra="max_bad_frames = 3\n")
    with socket.create_connection(("127.0.0.1", node.fed_port), timeout=5) as s:
        s.sendall(frame(UNKNOWN_OPERATION, 7, b"junk"))
        op, rid, body = read_frame(s)
        assert (op, rid) == (RESULT, 7)
        assert body.startswith(b"error: ") and body.endswith(b"\r\n")
        # A push before the link is established is refused the same way.
        s.sendall(frame(3, 8, b"\x00" * 5))
        op, rid, body = read_frame(s)
        assert (op, rid) == (RESULT, 8) and body.startswith(b"error: ")
        s.sendall(frame(UNKNOWN_OPERATION, 9))
        op, rid, _ = read_frame(s)
        assert rid == 9
        assert read_frame(s) is None, "the third refused frame closes the link"
    # Everyone else is still served.
    client = stomp_client(node.broker.port)
    client.send("/queue/still", "here")


def test_oversized_frame_closes_the_link(broker_factory):
    node = Node(broker_factory, "n", extra="max_frame_bytes = 65536\n")
    with socket.create_connection(("127.0.0.1", node.fed_port), timeout=5) as s:
        s.sendall(struct.pack(">III", 1 << 30, 3, 1))
        s.settimeout(5)
        assert read_frame(s) is None
    assert node.broker.running()
