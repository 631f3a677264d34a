"""Runtime control of a link from its far node over the link protocol (docs/federation.md):
stopForwarding / restartForwarding pause and resume one destination, and setMaxRate holds the
pushes to a rate."""

from helpers.federation import Node
from helpers.federation_peer import RESTART_FORWARDING, RESULT, STOP_FORWARDING, RawPeer
from helpers.wait import assert_stays, wait_for


def test_stop_and_restart_forwarding_at_runtime(broker_factory, stomp_client):
    node = Node(broker_factory, "n")
    peer = RawPeer(node.fed_port, demand=[("queue:ctl", 0), ("queue:other", 0)])
    assert peer.control(STOP_FORWARDING, "queue:ctl") == (RESULT, b"ok\r\n")
    producer = stomp_client(node.broker.port)
    producer.connect()
    producer.send_many("/queue/ctl", [f"c-{i}" for i in range(10)], headers={"persistent": "true"})
    producer.send("/queue/other", "not-paused")
    # Only the destination that was not paused is forwarded; the paused ones wait.
    wait_for(lambda: peer.push_count() == 1, 10)
    assert peer.pushes[0][1] == "other"
    assert_stays(lambda: peer.push_count() == 1, 0.5)
    assert peer.control(RESTART_FORWARDING, "queue:ctl") == (RESULT, b"ok\r\n")
    wait_for(lambda: peer.push_count() == 11, 10, lambda: f"11 pushes, got {peer.push_count()}")
    assert sorted(s for _, s in peer.pushes) == ["ctl"] * 10 + ["other"]
    peer.close()


def test_set_max_rate_holds_the_pushes_within_ten_percent(broker_factory, stomp_client):
    node = Node(broker_factory, "n")
    peer = RawPeer(node.fed_port, demand=[("queue:rate", 0)])
    assert peer.set_max_rate(20) == (RESULT, b"ok\r\n")
    producer = stomp_client(node.broker.port)
    producer.connect()
    producer.send_many("/queue/rate", [f"r-{i}" for i in range(70)])
    wait_for(lambda: peer.push_count() >= 60, 20, lambda: f"60 pushes, got {peer.push_count()}")
    # The rate over pushes 10..60, once the bucket's initial burst is spent.
    t10, t60 = peer.pushes[10][0], peer.pushes[60 - 1][0]
    rate = (60 - 1 - 10) / (t60 - t10)
    assert 18.0 <= rate <= 22.0, f"{rate:.1f} pushes/s against a limit of 20"
    # Lifting the limit lets the rest through at once.
    assert peer.set_max_rate(0) == (RESULT, b"ok\r\n")
    wait_for(lambda: peer.push_count() == 70, 5)
    peer.close()


def test_malformed_push_gets_an_error_and_the_link_stays_up(broker_factory):
    node = Node(broker_factory, "n")
    peer = RawPeer(node.fed_port)
    op, body = peer.request(3, b"\x00\x00\x00\x05" + b"\x00" * 10)
    assert op == RESULT and body.startswith(b"error: "), body
    # Still up: the next request is answered.
    assert peer.set_max_rate(0) == (RESULT, b"ok\r\n")
    peer.close()
