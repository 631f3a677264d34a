"""Store and forward across a failing node (docs/federation.md): the middle node of a line is
SIGKILLed mid-stream and restarted; every message A confirmed reaches C exactly once."""


import pytest

from helpers.federation import bodies, start_line, wait_links
from helpers.wait import assert_stays, wait_for


@pytest.mark.timeout(90)
def test_middle_node_killed_and_restarted_loses_nothing_confirmed(broker_factory, stomp_client):
    a, b, c = start_line(broker_factory, ["a", "b", "c"])
    wait_links(b, 2)
    on_c = stomp_client(c.broker.port)
    on_c.subscribe("/queue/safe")
    producer = stomp_client(a.broker.port)
    first = [f"s-{i}" for i in range(50)]
    producer.send_many("/queue/safe", first, headers={"persistent": "true"})
    # Some have crossed, the rest are on their way when B dies.
    wait_for(lambda: len(on_c.messages) >= 5, 20)
    b.broker.kill()
    # While B is down A keeps confirming: its messages wait for the link.
    second = [f"t-{i}" for i in range(30)]
    producer.send_many("/queue/safe", second, headers={"persistent": "true"})
    b.broker.start()
    expected = sorted(first + second)
    wait_for(lambda: len(on_c.messages) >= len(expected), 40,
             lambda: f"{len(expected)} messages on C, got {len(on_c.messages)}")
    assert_stays(lambda: len(on_c.messages) == len(expected), 1.0)
    assert sorted(bodies(on_c)) == expected
