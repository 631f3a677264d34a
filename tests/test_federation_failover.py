"""Store and forward across a failing node (docs/federation.md): the middle node of a line is
SIGKILLed mid-stream and restarted; every message A confirmed reaches C exactly once."""

import threading

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
    sent = [f"s-{i}" for i in range(150)]
    confirmed = []

    def produce():
        # One at a time, each confirmed (RECEIPT) before the next: still sending when B dies.
        for body in sent:
            producer.send("/queue/safe", body, headers={"persistent": "true"}, timeout=20)
            confirmed.append(body)

    thread = threading.Thread(target=produce)
    thread.start()
    wait_for(lambda: len(on_c.messages) >= 10, 20)
    b.broker.kill()
    killed_at = len(confirmed)
    b.broker.start()
    thread.join(60)
    assert not thread.is_alive() and confirmed == sent
    assert killed_at < len(sent), "B died after the producer had finished: not mid-stream"
    wait_for(lambda: len(on_c.messages) >= len(sent), 40,
             lambda: f"{len(sent)} messages on C, got {len(on_c.messages)}")
    assert_stays(lambda: len(on_c.messages) == len(sent), 1.0)
    assert sorted(bodies(on_c)) == sorted(sent)
