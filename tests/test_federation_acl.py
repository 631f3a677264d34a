"""The ACL on federation links (docs/federation.md "Who may push and draw what"): the user a
node's link logged in as may push only into the destinations it may write, and draws only the
demand it may read; everything else stays where it is, and the link stays up."""

import pytest

from helpers.federation import Node, bodies, wait_links
from helpers.wait import assert_stays, wait_for
from test_auth import passwd

ACL = """\
user linker
queue write in.>
queue read out.>

user bob
queue readwrite >
"""


@pytest.fixture
def pair(broker_factory):
    """B checks links against the ACL above; A dials it as `linker`."""
    b = Node(broker_factory, "b", users=[passwd("linker", "s3cret"), passwd("bob", "builder")], acl=ACL)
    a = Node(broker_factory, "a", links=[b], link_extra='username = "linker"\npassword = "s3cret"\n')
    wait_links(a, 1)
    return a, b


def as_bob(stomp_client, node):
    return stomp_client(node.broker.port, connect_headers={"login": "bob", "passcode": "builder"})


def test_a_link_pushes_only_where_its_user_may_write(pair, stomp_client):
    a, b = pair
    on_b = as_bob(stomp_client, b)
    on_b.subscribe("/queue/in.orders")
    on_b.subscribe("/queue/secret")
    producer = stomp_client(a.broker.port)
    producer.send_many("/queue/in.orders", [f"in-{i}" for i in range(3)], headers={"persistent": "true"})
    wait_for(lambda: len(bodies(on_b, "in-")) == 3, 15, lambda: a.broker.log())
    producer.send("/queue/secret", "not-for-b", headers={"persistent": "true"})
    # B refuses the push (A's log says why); the message does not reach B's consumer.
    wait_for(lambda: 'may not send to /queue/secret' in a.broker.log(5000), 15, lambda: a.broker.log())
    assert_stays(lambda: bodies(on_b, "not-for") == [], 0.5)
    # The link is still up and carries what it may.
    producer.send("/queue/in.orders", "in-after")
    wait_for(lambda: bodies(on_b, "in-after") == ["in-after"], 10)
    assert a.established() == 1


def test_a_link_draws_only_the_demand_its_user_may_read(pair, stomp_client):
    a, b = pair
    on_a = stomp_client(a.broker.port)
    on_a.subscribe("/queue/out.reports")
    on_a.subscribe("/queue/private.notes")
    producer = as_bob(stomp_client, b)
    producer.send_many("/queue/out.reports", [f"out-{i}" for i in range(3)], headers={"persistent": "true"})
    producer.send("/queue/private.notes", "stays-on-b", headers={"persistent": "true"})
    wait_for(lambda: len(bodies(on_a, "out-")) == 3, 15, lambda: b.broker.log())
    assert_stays(lambda: bodies(on_a, "stays") == [], 1.0)
    # It waits on B for a consumer that may have it.
    local = as_bob(stomp_client, b)
    local.subscribe("/queue/private.notes")
    wait_for(lambda: bodies(local) == ["stays-on-b"], 10)
