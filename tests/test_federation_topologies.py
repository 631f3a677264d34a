"""Federation across three nodes (docs/federation.md): a line passes messages hop by hop, a
ring neither loops nor delivers twice, and TTL stops a message at the right hop."""

from helpers.federation import Node, bodies, probe_until_received, start_line, wait_links
from helpers.wait import assert_stays, wait_for


def test_line_queue_from_a_reaches_c_once(broker_factory, stomp_client):
    a, b, c = start_line(broker_factory, ["a", "b", "c"])
    wait_links(b, 2)
    on_c = stomp_client(c.broker.port)
    on_c.subscribe("/queue/line")
    producer = stomp_client(a.broker.port)
    sent = [f"m-{i}" for i in range(40)]
    producer.send_many("/queue/line", sent, headers={"persistent": "true"})
    wait_for(lambda: len(on_c.messages) >= 40, 20, lambda: f"40 on C, got {len(on_c.messages)}")
    assert_stays(lambda: len(on_c.messages) == 40, 0.5)
    assert sorted(bodies(on_c)) == sorted(sent)


def test_ring_topic_every_node_gets_each_message_once(broker_factory, stomp_client):
    a = Node(broker_factory, "a")
    b = Node(broker_factory, "b", links=[a])
    c = Node(broker_factory, "c", links=[b, a])  # closes the ring: a - b - c - a
    for n in (a, b, c):
        wait_links(n, 2)
    consumers = {}
    for n in (a, b, c):
        consumers[n.name] = stomp_client(n.broker.port)
        consumers[n.name].subscribe("/topic/ring")
    producer = stomp_client(a.broker.port)
    probe_until_received(producer, consumers["b"], "/topic/ring")
    probe_until_received(producer, consumers["c"], "/topic/ring")
    sent = [f"r-{i}" for i in range(20)]
    for body in sent:
        producer.send("/topic/ring", body)
    for name, client in consumers.items():
        wait_for(lambda: len(bodies(client, "r-")) >= 20, 15, f"20 messages on {name}")
    # No loop, no second copy: the count stays put.
    assert_stays(lambda: all(len(bodies(cl, "r-")) == 20 for cl in consumers.values()), 1.0)
    for client in consumers.values():
        assert sorted(bodies(client, "r-")) == sorted(sent)


def test_ttl_stops_a_message_at_the_right_hop(broker_factory, stomp_client):
    # A's messages may take one hop: B gets them, C (two hops away) does not; B's own messages
    # (TTL 5) reach C, so the B-C link works.
    a = Node(broker_factory, "a", ttl=1)
    b = Node(broker_factory, "b", links=[a])
    c = Node(broker_factory, "c", links=[b])
    wait_links(b, 2)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/topic/hops")
    on_c = stomp_client(c.broker.port)
    on_c.subscribe("/topic/hops")
    from_b = stomp_client(b.broker.port)
    probe_until_received(from_b, on_c, "/topic/hops")
    from_a = stomp_client(a.broker.port)
    probe_until_received(from_a, on_b, "/topic/hops")
    for i in range(5):
        from_a.send("/topic/hops", f"a-{i}")
    wait_for(lambda: len(bodies(on_b, "a-")) == 5, 10)
    from_b.send("/topic/hops", "b-marker")
    # C gets B's marker (sent after A's messages went through B) and none of A's.
    wait_for(lambda: bodies(on_c, "b-") == ["b-marker"], 10)
    assert bodies(on_c, "a-") == []


def test_ring_queue_goes_the_nearest_way_and_arrives_once(broker_factory, stomp_client):
    a = Node(broker_factory, "a")
    b = Node(broker_factory, "b", links=[a])
    c = Node(broker_factory, "c", links=[b, a])
    for n in (a, b, c):
        wait_links(n, 2)
    on_c = stomp_client(c.broker.port)
    on_c.subscribe("/queue/ringq")
    producer = stomp_client(a.broker.port)
    sent = [f"q-{i}" for i in range(60)]
    producer.send_many("/queue/ringq", sent, headers={"persistent": "true"})
    wait_for(lambda: len(on_c.messages) >= 60, 20, lambda: f"60 on C, got {len(on_c.messages)}")
    assert_stays(lambda: len(on_c.messages) == 60, 1.0)
    assert sorted(bodies(on_c)) == sorted(sent)
