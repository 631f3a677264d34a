"""Runtime control of a link from its far node over the link protocol (docs/federation.md):
stopForwarding / restartForwarding pause and resume one destination, and setMaxRate holds the
pushes to a rate."""

from helpers.broker import run_cli
from helpers.federation import Node, bodies, wait_links
from helpers.federation_peer import RESTART_FORWARDING, RESULT, STOP_FORWARDING, RawPeer
from helpers.wait import assert_stays, wait_for


def test_stop_and_restart_forwarding_at_runtime(broker_factory, stomp_client):
    node = Node(broker_factory, "n")
    peer = RawPeer(node.fed_port, demand=[("queue:ctl", 0), ("queue:other", 0)])
    assert peer.control(STOP_FORWARDING, "queue:ctl") == (RESULT, b"ok\r\n")
    producer = stomp_client(node.broker.port)
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


def test_carrier_federation_stop_and_restart_between_two_nodes(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    b_id = (b.broker.data_dir / "federation-node-id").read_text().strip()
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/queue/paused")
    stop = run_cli("federation", "stop", "--connect", f"127.0.0.1:{a.fed_port}", "--target", b_id,
                   "--selector", "queue:paused")
    assert (stop.returncode, stop.stdout.strip()) == (0, "ok"), stop.stderr
    producer = stomp_client(a.broker.port)
    producer.send_many("/queue/paused", [f"p-{i}" for i in range(10)], headers={"persistent": "true"})
    assert_stays(lambda: not on_b.messages, 1.0)
    restart = run_cli("federation", "restart", "--connect", f"127.0.0.1:{a.fed_port}", "--target", b_id,
                      "--selector", "queue:paused")
    assert restart.returncode == 0, restart.stderr
    wait_for(lambda: len(on_b.messages) == 10, 10)
    assert sorted(bodies(on_b)) == sorted(f"p-{i}" for i in range(10))


def test_carrier_federation_refuses_a_bad_target(broker_factory):
    node = Node(broker_factory, "n")
    result = run_cli("federation", "stop", "--connect", f"127.0.0.1:{node.fed_port}", "--target", "xyz",
                     "--selector", "queue:q")
    assert result.returncode == 2 and "--target" in result.stderr
