"""Store and forward for topic messages (docs/federation.md "Store and forward"): persistent
topic messages bound for a link wait in a durable subscription of the link's own while the link
is down, and all arrive once when it is back; demand withdrawn takes the backlog with it."""

import json

import pytest

from helpers.federation import Node, bodies, probe_until_received, wait_links
from helpers.http import request
from helpers.wait import assert_stays, wait_for

LINKS = "/admin/v1/federation/links"


def backlogs(node):
    """The names of a node's topic backlogs for its links (named subscriptions)."""
    r = request(node.broker.http_port, "GET", "/admin/v1/destinations?kind=subscription&filter=federation:")
    assert r.status == 200, r
    return [d["name"] for d in r.json()["items"]]


def links(node):
    return request(node.broker.http_port, "GET", LINKS).json()["links"]


def cut(a):
    assert request(a.broker.http_port, "DELETE", f"{LINKS}/a-b").status == 204


def heal(a, b):
    body = json.dumps({"name": "a-b", "connect": f"127.0.0.1:{b.fed_port}"}).encode()
    assert request(a.broker.http_port, "POST", LINKS, body=body).status == 201


@pytest.mark.timeout(60)
def test_topic_messages_wait_while_the_link_is_down_and_arrive_once(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/topic/sf")
    producer = stomp_client(a.broker.port)
    probe_until_received(producer, on_b, "/topic/sf")
    assert len(backlogs(a)) == 1, backlogs(a)
    cut(a)
    wait_for(lambda: links(b) == [], 10, lambda: links(b))
    sent = [f"sf-{i}" for i in range(20)]
    for body in sent:
        producer.send("/topic/sf", body, headers={"persistent": "true"})
    assert_stays(lambda: bodies(on_b, "sf-") == [], 0.3)
    heal(a, b)
    wait_for(lambda: len(bodies(on_b, "sf-")) >= len(sent), 20,
             lambda: f"{len(sent)} on B, got {len(bodies(on_b, 'sf-'))}\n{a.broker.log()}")
    assert_stays(lambda: len(bodies(on_b, "sf-")) == len(sent), 1.0, "a topic message arrived twice")
    assert sorted(bodies(on_b, "sf-")) == sorted(sent)


@pytest.mark.timeout(60)
def test_backlog_survives_a_restart_of_the_node_holding_it(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/topic/kept")
    producer = stomp_client(a.broker.port)
    probe_until_received(producer, on_b, "/topic/kept")
    cut(a)
    wait_for(lambda: links(b) == [], 10)
    sent = [f"k-{i}" for i in range(10)]
    for body in sent:
        producer.send("/topic/kept", body, headers={"persistent": "true"})
    a.broker.kill()  # SIGKILL: only what is durable is left
    a.broker.start()  # dials B again from its configuration
    wait_for(lambda: len(bodies(on_b, "k-")) >= len(sent), 20, lambda: a.broker.log())
    assert_stays(lambda: len(bodies(on_b, "k-")) == len(sent), 1.0)
    assert sorted(bodies(on_b, "k-")) == sorted(sent)


@pytest.mark.timeout(60)
def test_withdrawn_demand_takes_the_backlog_with_it(broker_factory, stomp_client):
    b = Node(broker_factory, "b")
    a = Node(broker_factory, "a", links=[b])
    wait_links(a, 1)
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/topic/gone", id="s1")
    producer = stomp_client(a.broker.port)
    probe_until_received(producer, on_b, "/topic/gone")
    wait_for(lambda: len(backlogs(a)) == 1, 5)
    on_b.unsubscribe("s1")
    wait_for(lambda: backlogs(a) == [], 10, lambda: backlogs(a))
