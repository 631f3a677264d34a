"""The dedup window kept across restarts (docs/federation.md "Hops, TTL and duplicates"): a push
repeated after the receiving node was SIGKILLed and restarted is dropped as a duplicate, even
once its message was consumed and is gone from the store; the window stays bounded."""

import os

import pytest

from helpers.federation import Node
from helpers.federation_peer import RawPeer
from helpers.wait import assert_stays, wait_for


def restart_hard(node):
    node.broker.kill()
    node.broker.start()


@pytest.mark.timeout(60)
def test_push_repeated_after_sigkill_is_a_duplicate(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    consumer = stomp_client(b.broker.port)
    consumer.subscribe("/queue/dd", ack="client-individual")
    peer = RawPeer(b.fed_port)
    ids = [os.urandom(16) for _ in range(5)]
    for i, msg_id in enumerate(ids):
        assert peer.push(msg_id, "dd", f"d-{i}") == "ok"
    # Consumed and acknowledged: an ACK's receipt comes once the ack is durable, so the messages
    # are gone from the store before the SIGKILL. (An auto ack is written without being waited
    # for: a SIGKILL right after the delivery could bring the message back.)
    for message in consumer.wait_messages(5):
        consumer.ack(message)
    restart_hard(b)
    consumer = stomp_client(b.broker.port)
    consumer.subscribe("/queue/dd")
    peer = RawPeer(b.fed_port)
    for msg_id in ids:
        assert peer.push(msg_id, "dd", "again") == "ok duplicate"
    fresh = os.urandom(16)
    assert peer.push(fresh, "dd", "fresh") == "ok"
    wait_for(lambda: consumer.count() >= 1, 10)
    assert_stays(lambda: consumer.count() == 1, 0.5, "a repeated push was taken again")
    assert consumer.bodies() == ["fresh"]


@pytest.mark.timeout(60)
def test_the_kept_window_is_bounded(broker_factory, stomp_client):
    b = Node(broker_factory, "b", extra="dedup_window = 3\n")
    consumer = stomp_client(b.broker.port)
    consumer.subscribe("/queue/bound", ack="client-individual")
    peer = RawPeer(b.fed_port)
    ids = [os.urandom(16) for _ in range(5)]
    for i, msg_id in enumerate(ids):
        assert peer.push(msg_id, "bound", f"b-{i}") == "ok"
    # Receipted ACKs: an auto ack is not waited for, and a message left stored refills the window.
    for message in consumer.wait_messages(5):
        consumer.ack(message)
    restart_hard(b)
    peer = RawPeer(b.fed_port)
    # The newest three are remembered; the two oldest were forgotten, records and all.
    assert [peer.push(msg_id, "bound", "again") for msg_id in ids[2:]] == ["ok duplicate"] * 3
    assert peer.push(ids[0], "bound", "again") == "ok"
    assert "3 message id(s) seen" in b.broker.log(2000)
