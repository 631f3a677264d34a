"""Acknowledgement: ack modes auto / client (cumulative) / client-individual, NACK, prefetch
windows (activemq.prefetchSize, prefetch-count), redelivery of unacked messages when their
consumer unsubscribes or goes away."""

import pytest

from helpers import STOMP_VERSIONS
from helpers.wait import assert_stays


def send_all(client, queue, bodies, headers=None):
    for body in bodies:
        client.send(queue, body, headers=headers)


@pytest.mark.parametrize("header", ["activemq.prefetchSize", "prefetch-count"])
def test_prefetch_limits_unacked_deliveries(broker, stomp_client, unique, header):
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client", headers={header: "2"})
    send_all(stomp_client(broker), queue, [f"m{i}" for i in range(5)])
    first = consumer.wait_messages(2)
    assert_stays(lambda: consumer.count() == 2, 0.5,
                 lambda: f"prefetch 2 but got {consumer.bodies()}")
    consumer.ack(first[1])  # cumulative: acks m0 and m1, opening the window by two
    second = consumer.wait_messages(4)
    assert_stays(lambda: consumer.count() == 4, 0.3,
                 lambda: f"prefetch 2 but got {consumer.bodies()}")
    consumer.ack(second[3])
    assert [m.body for m in consumer.wait_messages(5)] == [f"m{i}" for i in range(5)]


def test_prefetch_with_client_individual(broker, stomp_client, unique):
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    send_all(stomp_client(broker), queue, [f"m{i}" for i in range(4)])
    [m0] = consumer.wait_messages(1)
    assert_stays(lambda: consumer.count() == 1, 0.3, lambda: consumer.bodies())
    consumer.ack(m0)
    assert [m.body for m in consumer.wait_messages(2)] == ["m0", "m1"]


def test_prefetch_one_spreads_work_across_consumers(broker, stomp_client, unique):
    queue = unique()
    a, b = stomp_client(broker), stomp_client(broker)
    a.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    b.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    send_all(stomp_client(broker), queue, ["m0", "m1", "m2"])
    [from_a] = a.wait_messages(1)
    [from_b] = b.wait_messages(1)
    assert {from_a.body, from_b.body} == {"m0", "m1"}
    assert_stays(lambda: a.count() == 1 and b.count() == 1, 0.3, "m2 waits for an ack")
    a.ack(from_a)
    assert a.wait_messages(2)[1].body == "m2"


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_client_ack_is_cumulative(broker, stomp_client, unique, version):
    queue = unique()
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue, ack="client")
    send_all(stomp_client(broker), queue, [f"m{i}" for i in range(5)])
    messages = consumer.wait_messages(5)
    consumer.ack(messages[2])  # acks m0, m1, m2
    other = stomp_client(broker, version=version)
    other.subscribe(queue)  # gets nothing yet: all five are in flight to `consumer`
    consumer.disconnect()
    again = other.wait_messages(2)
    assert [m.body for m in again] == ["m3", "m4"]
    assert all(m.headers.get("redelivered") == "true" for m in again), [m.headers for m in again]
    assert_stays(lambda: other.count() == 2, 0.3, lambda: f"acked came back: {other.bodies()}")


@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_client_individual_acks_one(broker, stomp_client, unique, version):
    queue = unique()
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue, ack="client-individual")
    send_all(stomp_client(broker), queue, [f"m{i}" for i in range(5)])
    messages = consumer.wait_messages(5)
    consumer.ack(messages[2])  # only m2
    other = stomp_client(broker, version=version)
    other.subscribe(queue)
    consumer.disconnect()
    again = other.wait_messages(4)
    assert sorted(m.body for m in again) == ["m0", "m1", "m3", "m4"]
    assert all(m.headers.get("redelivered") == "true" for m in again), [m.headers for m in again]
    assert_stays(lambda: other.count() == 4, 0.3, lambda: f"m2 came back: {other.bodies()}")


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_auto_ack_messages_do_not_come_back(broker, stomp_client, unique, version):
    queue = unique()
    producer = stomp_client(broker)
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue)
    send_all(producer, queue, ["a0", "a1", "a2"])
    assert [m.body for m in consumer.wait_messages(3)] == ["a0", "a1", "a2"]
    assert all(m.headers.get("redelivered") in (None, "false") for m in consumer.messages)
    other = stomp_client(broker, version=version)
    other.subscribe(queue)
    consumer.disconnect()
    producer.send(queue, "marker")
    assert other.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: other.bodies() == ["marker"], 0.3, lambda: other.bodies())


@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_nack_redelivers(broker, stomp_client, unique, version):
    queue = unique()
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue, ack="client-individual")
    send_all(stomp_client(broker), queue, ["a", "b"])
    a, b = consumer.wait_messages(2)
    assert (a.body, b.body) == ("a", "b")
    consumer.nack(a)
    again = consumer.wait_messages(3)[2]
    assert again.body == "a"
    assert again.headers.get("redelivered") == "true", again.headers
    consumer.ack(b)
    consumer.ack(again)
    other = stomp_client(broker)
    other.subscribe(queue)
    consumer.disconnect()
    stomp_client(broker).send(queue, "marker")
    assert other.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: other.bodies() == ["marker"], 0.3, lambda: other.bodies())


@pytest.mark.parametrize("how", ["unsubscribe", "disconnect", "drop"])
@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_unacked_messages_go_to_another_consumer(broker, stomp_client, unique, how, version):
    queue = unique()
    first = stomp_client(broker, version=version)
    sub = first.subscribe(queue, ack="client")
    send_all(stomp_client(broker), queue, ["u0", "u1", "u2"])
    assert [m.body for m in first.wait_messages(3)] == ["u0", "u1", "u2"]
    second = stomp_client(broker, version=version)
    second.subscribe(queue, ack="client")
    assert second.count() == 0, "all three are in flight to the first consumer"
    if how == "unsubscribe":
        first.unsubscribe(sub, destination=queue)
    elif how == "disconnect":
        first.disconnect()
    else:
        first.drop()
    again = second.wait_messages(3)
    assert sorted(m.body for m in again) == ["u0", "u1", "u2"]
    assert all(m.headers.get("redelivered") == "true" for m in again), [m.headers for m in again]
    assert_stays(lambda: second.count() == 3, 0.2, "no duplicates")


def test_unacked_after_unsubscribe_do_not_reach_old_subscription(broker, stomp_client, unique):
    queue = unique()
    client = stomp_client(broker)
    sub = client.subscribe(queue, ack="client-individual")
    stomp_client(broker).send(queue, "once")
    [m] = client.wait_messages(1)
    client.unsubscribe(sub)
    new_sub = client.subscribe(queue, ack="client-individual")
    [_, again] = client.wait_messages(2)
    assert again.body == "once" and again.headers.get("subscription") == new_sub, again.headers
    assert again.headers.get("redelivered") == "true", again.headers
