"""Durable topic subscriptions in both spellings (ActiveMQ: CONNECT client-id + SUBSCRIBE
activemq.subscriptionName / subscription-name; RabbitMQ: durable:true, auto-delete:false, id),
kept while the subscriber is away and across a broker restart, removed by a durable UNSUBSCRIBE;
shared subscriptions (each message to one member of the group), non-durable and durable."""

import signal
import uuid

import pytest

from helpers import STOMP_VERSIONS
from helpers.reliable import fresh, now_ms, unsubscribe, wait_clock_past
from helpers.wait import assert_stays, wait_for

PERSISTENT = {"persistent": "true"}


def new_name(prefix="sub"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class ActiveMQ:
    """client-id on CONNECT, the subscription's name in a SUBSCRIBE header."""

    def __init__(self, header="activemq.subscriptionName"):
        self.header = header
        self.client_id = new_name("client")
        self.name = new_name()

    def connect(self, stomp_client, broker, client_id=None):
        return stomp_client(broker, connect_headers={"client-id": client_id or self.client_id})

    def subscribe(self, client, topic, ack="auto", headers=None):
        return client.subscribe(topic, ack=ack, headers={self.header: self.name, **(headers or {})})

    def remove(self, client, sub_id):
        unsubscribe(client, sub_id, {self.header: self.name})


class RabbitMQ:
    """durable:true and auto-delete:false; the SUBSCRIBE id is the subscription's name."""

    DURABLE = {"durable": "true", "auto-delete": "false"}

    def __init__(self):
        self.name = new_name()

    def connect(self, stomp_client, broker, client_id=None):
        return stomp_client(broker)

    def subscribe(self, client, topic, ack="auto", headers=None):
        return client.subscribe(topic, id=self.name, ack=ack, headers={**self.DURABLE,
                                                                      **(headers or {})})

    def remove(self, client, sub_id):
        unsubscribe(client, sub_id, {"durable": "true"})


SPELLINGS = {
    "activemq": lambda: ActiveMQ(),
    "subscription-name": lambda: ActiveMQ("subscription-name"),
    "rabbitmq": lambda: RabbitMQ(),
}


@pytest.fixture(params=list(SPELLINGS))
def spelling(request):
    return SPELLINGS[request.param]()


def bodies_of(messages):
    return [m.body for m in messages]


@pytest.mark.parametrize("leave", ["disconnect", "drop", "unsubscribe"])
def test_messages_published_while_away_are_kept(broker, stomp_client, spelling, leave):
    topic = fresh("topic")
    subscriber = spelling.connect(stomp_client, broker)
    sub_id = spelling.subscribe(subscriber, topic)
    producer = stomp_client(broker)
    producer.send(topic, "while-here")
    assert bodies_of(subscriber.wait_messages(1)) == ["while-here"]
    if leave == "disconnect":
        subscriber.disconnect()
    elif leave == "drop":
        subscriber.drop()
    else:
        subscriber.unsubscribe(sub_id)  # a plain UNSUBSCRIBE keeps a durable subscription
    producer.send(topic, "away-1")
    producer.send(topic, "away-2", headers=PERSISTENT)
    back = spelling.connect(stomp_client, broker) if leave != "unsubscribe" else subscriber
    spelling.subscribe(back, topic)
    got = back.wait_messages(3 if back is subscriber else 2)
    assert bodies_of(got)[-2:] == ["away-1", "away-2"]
    assert_stays(lambda: back.count() == len(got), 0.3,
                 lambda: f"more than the kept messages: {back.bodies()}")


def test_non_durable_subscription_keeps_nothing(broker, stomp_client):
    topic = fresh("topic")
    subscriber = stomp_client(broker, connect_headers={"client-id": new_name("client")})
    subscriber.subscribe(topic)
    subscriber.disconnect()
    producer = stomp_client(broker)
    producer.send(topic, "nobody-listening")
    again = stomp_client(broker)
    again.subscribe(topic)
    producer.send(topic, "live")
    assert bodies_of(again.wait_messages(1)) == ["live"]
    assert_stays(lambda: again.count() == 1, 0.3, lambda: again.bodies())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_durable_subscription_survives_restart(broker, stomp_client, spelling, sig):
    topic = fresh("topic")
    subscriber = spelling.connect(stomp_client, broker)
    spelling.subscribe(subscriber, topic)
    subscriber.disconnect()
    sent = [f"p{i}" for i in range(5)]
    stomp_client(broker).send_many(topic, sent, headers=PERSISTENT)
    broker.restart(sig=sig)
    back = spelling.connect(stomp_client, broker)
    spelling.subscribe(back, topic)
    assert bodies_of(back.wait_messages(5)) == sent
    # The subscription itself came back too: it still collects while its subscriber is away.
    back.disconnect()
    stomp_client(broker).send(topic, "after-restart", headers=PERSISTENT)
    again = spelling.connect(stomp_client, broker)
    spelling.subscribe(again, topic)
    assert bodies_of(again.wait_messages(1)) == ["after-restart"]
    assert_stays(lambda: again.count() == 1, 0.3, lambda: again.bodies())


def test_unacked_message_of_a_durable_subscription_comes_back_after_restart(
        broker, stomp_client, spelling):
    topic = fresh("topic")
    subscriber = spelling.connect(stomp_client, broker)
    spelling.subscribe(subscriber, topic, ack="client-individual")
    producer = stomp_client(broker)
    producer.send(topic, "unacked", headers=PERSISTENT)
    subscriber.wait_messages(1)
    # The record that flags the message delivered is written without a receipt of its own; a
    # receipted send handed to the store after it proves it durable (the writer keeps order).
    producer.send(fresh("queue"), "sync", headers=PERSISTENT)
    broker.restart(sig=signal.SIGKILL)
    back = spelling.connect(stomp_client, broker)
    spelling.subscribe(back, topic)
    [m] = back.wait_messages(1)
    assert m.body == "unacked"
    assert m.headers.get("redelivered") == "true", m.headers


def test_durable_unsubscribe_removes_subscription_and_its_messages(broker, stomp_client,
                                                                    spelling):
    topic = fresh("topic")
    subscriber = spelling.connect(stomp_client, broker)
    sub_id = spelling.subscribe(subscriber, topic, ack="client-individual",
                                headers={"activemq.prefetchSize": "1"})
    producer = stomp_client(broker)
    producer.send(topic, "in-flight", headers=PERSISTENT)
    producer.send(topic, "waiting", headers=PERSISTENT)
    assert bodies_of(subscriber.wait_messages(1)) == ["in-flight"]
    spelling.remove(subscriber, sub_id)
    spelling.subscribe(subscriber, topic)  # a new, empty subscription under the same name
    producer.send(topic, "new")
    assert subscriber.wait_messages(2)[1].body == "new"
    assert_stays(lambda: subscriber.count() == 2, 0.3,
                 lambda: f"old messages came back: {subscriber.bodies()}")


def test_durable_unsubscribe_stays_removed_after_restart(broker, stomp_client, spelling):
    topic = fresh("topic")
    subscriber = spelling.connect(stomp_client, broker)
    sub_id = spelling.subscribe(subscriber, topic)
    spelling.remove(subscriber, sub_id)
    subscriber.disconnect()
    stomp_client(broker).send(topic, "nobody-subscribed", headers=PERSISTENT)
    broker.restart()
    back = spelling.connect(stomp_client, broker)
    spelling.subscribe(back, topic)
    producer = stomp_client(broker)
    producer.send(topic, "live")
    assert bodies_of(back.wait_messages(1)) == ["live"]
    assert_stays(lambda: back.count() == 1, 0.3, lambda: back.bodies())


def test_activemq_subscriptions_are_per_client_id(broker, stomp_client):
    topic = fresh("topic")
    mine, theirs = ActiveMQ(), ActiveMQ()
    theirs.name = mine.name  # same subscription name, different client-id
    subscriber = mine.connect(stomp_client, broker)
    mine.subscribe(subscriber, topic)
    subscriber.disconnect()
    stomp_client(broker).send(topic, "for-mine")
    other = theirs.connect(stomp_client, broker)
    theirs.subscribe(other, topic)
    assert_stays(lambda: other.count() == 0, 0.3,
                 lambda: f"another client-id's subscription delivered {other.bodies()}")
    back = mine.connect(stomp_client, broker)
    mine.subscribe(back, topic)
    assert bodies_of(back.wait_messages(1)) == ["for-mine"]


def test_two_durable_subscriptions_each_keep_their_copy(broker, stomp_client):
    topic = fresh("topic")
    a, b = ActiveMQ(), RabbitMQ()
    for spelling in (a, b):
        client = spelling.connect(stomp_client, broker)
        spelling.subscribe(client, topic)
        client.disconnect()
    stomp_client(broker).send_many(topic, ["x", "y"], headers=PERSISTENT)
    for spelling in (a, b):
        client = spelling.connect(stomp_client, broker)
        spelling.subscribe(client, topic)
        assert bodies_of(client.wait_messages(2)) == ["x", "y"]


def test_durable_subscription_on_a_wildcard_topic(broker, stomp_client):
    base = fresh("topic")
    spelling = ActiveMQ()
    subscriber = spelling.connect(stomp_client, broker)
    spelling.subscribe(subscriber, base + ".>")
    subscriber.disconnect()
    producer = stomp_client(broker)
    producer.send(base + ".eu", "eu")
    producer.send(base + ".us.east", "us")
    back = spelling.connect(stomp_client, broker)
    spelling.subscribe(back, base + ".>")
    assert bodies_of(back.wait_messages(2)) == ["eu", "us"]


# --- shared subscriptions ---------------------------------------------------------------------

def shared(name, durable=False):
    headers = {"shared": "true", "subscription-name": name}
    if durable:
        headers["durable"] = "true"
    return headers


def test_shared_subscription_gives_each_message_to_one_member(broker, stomp_client):
    topic, group = fresh("topic"), new_name("group")
    members = [stomp_client(broker) for _ in range(3)]
    for member in members:
        member.subscribe(topic, headers=shared(group))
    everyone = stomp_client(broker)  # a plain subscriber alongside the group gets every message
    everyone.subscribe(topic)
    sent = [f"m{i:02d}" for i in range(30)]
    stomp_client(broker).send_many(topic, sent)
    everyone.wait_messages(30)

    def received():
        return [body for member in members for body in member.bodies()]

    wait_for(lambda: len(received()) >= 30, 5.0, lambda: f"{len(received())} of 30 in the group")
    assert sorted(received()) == sent, "each message exactly once across the group"
    assert_stays(lambda: len(received()) == 30, 0.3, lambda: f"duplicates: {received()}")
    assert all(member.count() > 0 for member in members), \
        [member.count() for member in members]
    assert everyone.bodies() == sent


def test_shared_members_on_one_connection_and_without_client_id(broker, stomp_client):
    topic, group = fresh("topic"), new_name("group")
    client = stomp_client(broker)
    client.subscribe(topic, id="one", headers=shared(group))
    client.subscribe(topic, id="two", headers=shared(group))
    sent = [f"m{i}" for i in range(10)]
    stomp_client(broker).send_many(topic, sent)
    got = client.wait_messages(10)
    assert sorted(m.body for m in got) == sent
    assert_stays(lambda: client.count() == 10, 0.3, lambda: client.bodies())


def test_shared_member_leaving_hands_its_unacked_to_the_others(broker, stomp_client):
    topic, group = fresh("topic"), new_name("group")
    a, b = stomp_client(broker), stomp_client(broker)
    a.subscribe(topic, ack="client-individual", headers=shared(group))
    stomp_client(broker).send(topic, "first")
    a.wait_messages(1)
    b.subscribe(topic, headers=shared(group))
    a.drop()
    assert b.wait_messages(1)[0].body == "first"


def test_non_durable_shared_subscription_vanishes_with_its_last_member(broker, stomp_client):
    topic, group = fresh("topic"), new_name("group")
    members = [stomp_client(broker) for _ in range(2)]
    for member in members:
        member.subscribe(topic, headers=shared(group))
    for member in members:
        member.disconnect()
    producer = stomp_client(broker)
    producer.send(topic, "nobody")
    back = stomp_client(broker)
    back.subscribe(topic, headers=shared(group))
    producer.send(topic, "live")
    assert back.wait_messages(1)[0].body == "live"
    assert_stays(lambda: back.count() == 1, 0.3, lambda: back.bodies())


def test_durable_shared_subscription_is_kept_without_members(broker, stomp_client):
    topic, group = fresh("topic"), new_name("group")
    members = [stomp_client(broker) for _ in range(2)]
    for member in members:
        member.subscribe(topic, headers=shared(group, durable=True))
    for member in members:
        member.disconnect()
    stomp_client(broker).send_many(topic, ["kept-1", "kept-2"], headers=PERSISTENT)
    broker.restart()
    back = stomp_client(broker)
    back.subscribe(topic, headers=shared(group, durable=True))
    assert [m.body for m in back.wait_messages(2)] == ["kept-1", "kept-2"]


def test_durable_subscription_keeps_only_what_its_selector_matches(broker, stomp_client):
    topic = fresh("topic")
    spelling = ActiveMQ()
    selector = {"selector": "color = 'red'"}
    subscriber = spelling.connect(stomp_client, broker)
    spelling.subscribe(subscriber, topic, headers=selector)
    subscriber.disconnect()
    producer = stomp_client(broker)
    for color in ["red", "blue", "red"]:
        producer.send(topic, color, headers={"color": color, **PERSISTENT})
    broker.restart()
    back = spelling.connect(stomp_client, broker)
    spelling.subscribe(back, topic, headers=selector)
    assert bodies_of(back.wait_messages(2)) == ["red", "red"]
    assert_stays(lambda: back.count() == 2, 0.3, lambda: back.bodies())


def test_message_expiring_while_the_durable_subscriber_is_away(broker, stomp_client):
    topic = fresh("topic")
    spelling = RabbitMQ()
    subscriber = spelling.connect(stomp_client, broker)
    spelling.subscribe(subscriber, topic)
    subscriber.disconnect()
    soon = now_ms() + 200
    producer = stomp_client(broker)
    producer.send(topic, "perishable", headers={"expires": str(soon)})
    producer.send(topic, "durable")
    wait_clock_past(soon + 20)
    back = spelling.connect(stomp_client, broker)
    spelling.subscribe(back, topic)
    assert bodies_of(back.wait_messages(1)) == ["durable"]
    assert_stays(lambda: back.count() == 1, 0.3, lambda: back.bodies())


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_durable_subscription_with_each_stomp_version(broker, stomp_client, version):
    topic = fresh("topic")
    spelling = ActiveMQ()
    headers = {"client-id": spelling.client_id}
    subscriber = stomp_client(broker, version=version, connect_headers=headers)
    spelling.subscribe(subscriber, topic)
    subscriber.disconnect()
    stomp_client(broker).send(topic, "kept")
    back = stomp_client(broker, version=version, connect_headers=headers)
    spelling.subscribe(back, topic)
    assert bodies_of(back.wait_messages(1)) == ["kept"]


def test_activemq_durable_subscription_needs_a_client_id(broker, stomp_client):
    client = stomp_client(broker)
    client.subscribe(fresh("topic"), headers={"activemq.subscriptionName": "s"}, wait=False)
    client._wait(lambda: client.errors, 5.0, "an ERROR for a durable name without client-id")
    assert "client-id" in (client.errors[0].headers.get("message", "") + client.errors[0].body)


def test_removed_durable_subscription_leaves_the_journal(broker_factory, stomp_client):
    broker = broker_factory(config="[journal]\nsegment_bytes = 16384\nfsync = false\n")
    topic, spelling = fresh("topic"), RabbitMQ()
    subscriber = spelling.connect(stomp_client, broker)
    sub_id = spelling.subscribe(subscriber, topic, ack="client-individual",
                                headers={"activemq.prefetchSize": "1"})
    bodies = [f"{i:04d}-" + "j" * 1000 for i in range(100)]
    stomp_client(broker).send_many(topic, bodies, headers=PERSISTENT)
    segments = broker.segments()
    assert len(segments) >= 2, f"the journal did not roll: {segments}"
    spelling.remove(subscriber, sub_id)
    wait_for(lambda: not any(p.exists() for p in segments[:-1]), 10.0,
             lambda: f"segments of a removed subscription to be reclaimed: {broker.segments()}")
