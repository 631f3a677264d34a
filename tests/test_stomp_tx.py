"""Transactions: BEGIN/SEND/COMMIT delivers, ABORT discards, ACK inside an aborted transaction
leaves the message unacked, a transaction left open at disconnect is aborted."""

import pytest

from helpers import STOMP_VERSIONS
from helpers.wait import assert_stays


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_commit_delivers_sends(broker, stomp_client, unique, version):
    queue = unique()
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue)
    producer = stomp_client(broker, version=version)
    producer.frame("BEGIN", {"transaction": "tx1"})
    for i in range(3):
        producer.send(queue, f"tx{i}", headers={"transaction": "tx1"})
    assert_stays(lambda: consumer.count() == 0, 0.3, "sends stay invisible until COMMIT")
    producer.frame("COMMIT", {"transaction": "tx1"})
    assert [m.body for m in consumer.wait_messages(3)] == ["tx0", "tx1", "tx2"]


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_abort_discards_sends(broker, stomp_client, unique, version):
    queue = unique()
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue)
    producer = stomp_client(broker, version=version)
    producer.frame("BEGIN", {"transaction": "tx1"})
    producer.send(queue, "discarded", headers={"transaction": "tx1"})
    producer.frame("ABORT", {"transaction": "tx1"})
    producer.send(queue, "marker")
    assert consumer.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: consumer.bodies() == ["marker"], 0.3, lambda: consumer.bodies())


def test_transaction_mixes_with_plain_sends(broker, stomp_client, unique):
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    producer.frame("BEGIN", {"transaction": "t"})
    producer.send(queue, "in tx", headers={"transaction": "t"})
    producer.send(queue, "plain")
    assert consumer.wait_messages(1)[0].body == "plain"
    producer.frame("COMMIT", {"transaction": "t"})
    assert [m.body for m in consumer.wait_messages(2)] == ["plain", "in tx"]


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_ack_in_aborted_transaction_is_undone(broker, stomp_client, unique, version):
    queue = unique()
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue, ack="client")
    stomp_client(broker).send(queue, "keep me")
    [m] = consumer.wait_messages(1)
    consumer.frame("BEGIN", {"transaction": "tx"})
    consumer.ack(m, transaction="tx")
    consumer.frame("ABORT", {"transaction": "tx"})
    other = stomp_client(broker, version=version)
    other.subscribe(queue)
    consumer.disconnect()
    [again] = other.wait_messages(1)
    assert again.body == "keep me"
    assert again.headers.get("redelivered") == "true", again.headers


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_ack_in_committed_transaction_sticks(broker, stomp_client, unique, version):
    queue = unique()
    producer = stomp_client(broker)
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue, ack="client")
    producer.send(queue, "acked")
    [m] = consumer.wait_messages(1)
    consumer.frame("BEGIN", {"transaction": "tx"})
    consumer.ack(m, transaction="tx")
    consumer.frame("COMMIT", {"transaction": "tx"})
    other = stomp_client(broker, version=version)
    other.subscribe(queue)
    consumer.disconnect()
    producer.send(queue, "marker")
    assert other.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: other.bodies() == ["marker"], 0.3, lambda: other.bodies())


@pytest.mark.parametrize("how", ["disconnect", "drop"])
def test_open_transaction_is_aborted_at_disconnect(broker, stomp_client, unique, how):
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    producer.frame("BEGIN", {"transaction": "left-open"})
    producer.send(queue, "never", headers={"transaction": "left-open"})
    producer.disconnect() if how == "disconnect" else producer.drop()
    stomp_client(broker).send(queue, "marker")
    assert consumer.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: consumer.bodies() == ["marker"], 0.3, lambda: consumer.bodies())


def test_open_transaction_ack_is_undone_at_disconnect(broker, stomp_client, unique):
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual")
    stomp_client(broker).send(queue, "keep me")
    [m] = consumer.wait_messages(1)
    consumer.frame("BEGIN", {"transaction": "tx"})
    consumer.ack(m, transaction="tx")
    other = stomp_client(broker)
    other.subscribe(queue)
    consumer.disconnect()
    [again] = other.wait_messages(1)
    assert again.body == "keep me" and again.headers.get("redelivered") == "true", again.headers
