"""Per-destination limits (policy max_messages / max_bytes) with overflow "reject" (the SEND gets
an ERROR, with receipt-id when it asked for a receipt, saying the destination is full; nothing
accepted is dropped) or "drop-oldest"; and the policy/limit keys in the TOML file: every key at
its default is accepted, bad ones are refused by name."""

import pytest

from helpers.broker import port_accepts
from helpers.raw_stomp import RawStomp
from helpers.reliable import config, core, fresh, policy
from helpers.wait import assert_stays


def send_until_refused(port, destination, bodies):
    """SENDs `bodies` one by one with receipts on one raw connection; stops at the first ERROR.
    Returns (accepted bodies, the ERROR frame or None)."""
    accepted = []
    with RawStomp(port) as raw:
        raw.connect("1.2")
        for n, body in enumerate(bodies):
            raw.send_frame("SEND", [("destination", destination), ("receipt", f"r{n}"),
                                    ("content-length", str(len(body)))], body.encode())
            frame = raw.read_frame()
            if frame.command == "ERROR":
                assert frame.header("receipt-id") == f"r{n}", \
                    f"the ERROR for a SEND with a receipt lacks its receipt-id: {frame!r}"
                return accepted, frame
            assert (frame.command, frame.header("receipt-id")) == ("RECEIPT", f"r{n}"), frame
            accepted.append(body)
    return accepted, None


def says_full(frame):
    """An ERROR (raw Frame or python3-stomp frame) whose message or body says "full"."""
    if isinstance(frame.headers, dict):
        message, body = frame.headers.get("message", ""), frame.body
    else:
        message, body = frame.header("message", ""), frame.body
    if isinstance(body, bytes):
        body = body.decode(errors="replace")
    return "full" in f"{message} {body}".lower()


def drain(stomp_client, broker, destination, count):
    consumer = stomp_client(broker)
    consumer.subscribe(destination)
    got = [m.body for m in consumer.wait_messages(count)] if count else []
    assert_stays(lambda: consumer.count() == count, 0.3,
                 lambda: f"expected {count}, got {consumer.bodies()}")
    return got


def test_max_messages_reject(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:capped.>", max_messages=3)))
    queue = fresh(prefix="capped")
    bodies = [f"m{i}" for i in range(5)]
    accepted, error = send_until_refused(broker.port, queue, bodies)
    assert accepted == bodies[:3]
    assert error is not None, "the 4th SEND to a queue of max 3 was accepted"
    assert says_full(error), f"the ERROR does not say the destination is full: {error!r}"
    assert drain(stomp_client, broker, queue, 3) == bodies[:3]
    # consumed: room again
    accepted, error = send_until_refused(broker.port, queue, ["again"])
    assert (accepted, error) == (["again"], None)


def test_reject_without_receipt_still_gets_an_error(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:capped.>", max_messages=1)))
    queue = fresh(prefix="capped")
    producer = stomp_client(broker)
    producer.send(queue, "fits")
    producer.send(queue, "overflows", wait=False)
    producer._wait(lambda: producer.errors, 5.0, "an ERROR for a SEND to a full queue")
    assert says_full(producer.errors[0]), producer.errors[0].headers
    assert drain(stomp_client, broker, queue, 1) == ["fits"]


def test_max_bytes_reject(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:capped.>", max_bytes=10_000)))
    queue = fresh(prefix="capped")
    bodies = [f"{i}" * 3000 for i in range(6)]
    accepted, error = send_until_refused(broker.port, queue, bodies)
    assert error is not None, "18 KB accepted into a queue of max_bytes 10000"
    assert says_full(error), error
    # three 3000-byte bodies fit in 10000 bytes (two if per-message overhead is counted)
    assert 2 <= len(accepted) <= 3, f"{len(accepted)} accepted"
    assert drain(stomp_client, broker, queue, len(accepted)) == accepted


def test_limit_is_per_destination(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:capped.>", max_messages=1)))
    full, other = fresh(prefix="capped"), fresh(prefix="capped")
    assert send_until_refused(broker.port, full, ["a", "b"])[0] == ["a"]
    accepted, error = send_until_refused(broker.port, other, ["c"])
    assert (accepted, error) == (["c"], None)


def test_drop_oldest_by_count(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:ring.>", max_messages=3,
                                                 overflow="drop-oldest")))
    queue = fresh(prefix="ring")
    bodies = [f"m{i}" for i in range(6)]
    stomp_client(broker).send_many(queue, bodies)  # every SEND confirmed
    assert drain(stomp_client, broker, queue, 3) == bodies[-3:]


def test_drop_oldest_by_bytes(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:ring.>", max_bytes=10_000,
                                                 overflow="drop-oldest")))
    queue = fresh(prefix="ring")
    bodies = [f"{i}" * 3000 for i in range(6)]
    stomp_client(broker).send_many(queue, bodies, headers={"persistent": "true"})
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    consumer.wait_messages(2)
    assert_stays(lambda: consumer.count() <= 3, 0.3, lambda: f"{consumer.count()} kept")
    kept = consumer.bodies()
    assert kept == bodies[-len(kept):], "the newest are kept, oldest dropped, order unchanged"


def test_drop_oldest_survives_restart_without_the_dropped(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:ring.>", max_messages=2,
                                                 overflow="drop-oldest")))
    queue = fresh(prefix="ring")
    bodies = [f"m{i}" for i in range(5)]
    stomp_client(broker).send_many(queue, bodies, headers={"persistent": "true"})
    broker.restart()
    assert drain(stomp_client, broker, queue, 2) == bodies[-2:]


def test_messages_delivered_to_a_consumer_make_room(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:capped.>", max_messages=2)))
    queue = fresh(prefix="capped")
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    for n in range(6):  # consumed as fast as sent: never more than 2 waiting
        producer.send(queue, f"m{n}")
        consumer.wait_messages(n + 1)
    assert consumer.bodies() == [f"m{n}" for n in range(6)]


def test_transactional_send_to_a_full_queue_is_refused_at_commit(broker_factory, stomp_client):
    broker = broker_factory(config=config(policy("queue:capped.>", max_messages=1)))
    queue = fresh(prefix="capped")
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame("SEND", [("destination", queue), ("receipt", "r0")], b"fits")
        assert raw.read_frame().command == "RECEIPT"
        raw.send_frame("BEGIN", [("transaction", "tx")])
        raw.send_frame("SEND", [("destination", queue), ("transaction", "tx")], b"overflows")
        raw.send_frame("COMMIT", [("transaction", "tx"), ("receipt", "commit")])
        answer = raw.read_frame()
    # Confirming the COMMIT while dropping its SEND would lose a message silently.
    assert answer.command == "ERROR" and says_full(answer), \
        f"COMMIT of a SEND to a full queue was not refused: {answer!r}"
    assert answer.header("receipt-id") == "commit", answer
    assert drain(stomp_client, broker, queue, 1) == ["fits"]


# --- configuration --------------------------------------------------------------------------

EVERY_KEY_AT_DEFAULT = config(
    core(sweep_interval_ms=1000, memory_limit_bytes=0),
    policy("queue:orders.>", redelivery_delay_ms=0, redelivery_multiplier=2.0,
           redelivery_max_delay_ms=60000, redelivery_jitter=0.2, max_deliveries=0,
           dead_letter_queue="DLQ.{name}", expired_to_dlq=False, ttl_ms=0, max_messages=0,
           max_bytes=0, overflow="reject", idle_expiry_ms=0),
    policy("topic:>", overflow="drop-oldest"))


def test_every_policy_key_is_accepted(broker_factory, stomp_client):
    broker = broker_factory(config=EVERY_KEY_AT_DEFAULT)
    client = stomp_client(broker)
    queue = fresh(prefix="orders")
    client.subscribe(queue)
    client.send(queue, "ok")
    assert client.wait_messages(1)[0].body == "ok"


def refused(broker_factory, text):
    broker = broker_factory(start=False, config=text)
    broker.spawn()
    code = broker.wait_exit(timeout=10)
    assert code != 0, f"carrier accepted a bad config:\n{text}\n{broker.log()}"
    assert not port_accepts(broker.port)
    return broker.log()


@pytest.mark.parametrize("text, key", [
    (policy("queue:a", overflow="explode"), "overflow"),
    (policy("queue:a", max_delivery=3), "max_delivery"),
    (policy("queue:a", redelivery_multiplier="fast"), "redelivery_multiplier"),
    (policy("queue:a", max_messages=-1), "max_messages"),
    (policy("queue:a", ttl_ms="soon"), "ttl_ms"),
    (policy("queue:a", expired_to_dlq="yes"), "expired_to_dlq"),
    (policy("mailbox:orders"), "match"),
    ("[[policy]]\nmax_deliveries = 3\n", "match"),
    (core(memory_limit_bytes="lots"), "memory_limit_bytes"),
    (core(sweep_interval_ms="often"), "sweep_interval_ms"),
], ids=["overflow", "unknown-key", "multiplier", "negative-max", "ttl", "dlq-flag",
        "match-bad-kind", "match-missing", "memory-limit", "sweep"])
def test_bad_policy_config_is_refused_by_name(broker_factory, text, key):
    assert key in refused(broker_factory, text)
