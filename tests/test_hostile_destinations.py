"""Destinations and transactions a client can make the broker hold (issue 10, items 5 and 6).

Empty auto-created queues are freed: a client cycling through fresh queue or topic names, or
draining thousands of queues, leaves the broker's resident memory where it was and its queue
count at 0 (the broker logs its per-shard counts at shutdown), while a queue that still holds
messages is never collected from under them. A STOMP transaction is bounded in bytes, in
messages and in number per connection: past a bound the frame gets an ERROR naming it, the
transaction is aborted (its acks returned) and everyone else is served as before.
"""

import re
import threading

import pytest

from helpers.raw_stomp import RawStomp, assert_broker_works, expect_error_and_close
from helpers.reliable import rss_bytes
from helpers.wait import wait_for

MiB = 1024 * 1024
CHUNK = 500  # frames pipelined before waiting for a receipt
# Resident memory may move by allocator slack and buffers; an empty queue used to cost ~6.7 KiB,
# so the names below would have taken 130 MiB or more.
SLACK = 24 * MiB

SHUTDOWN_COUNTS = re.compile(r"shard (\d+) at shutdown: (\d+) queue\(s\), (\d+) topic subscription\(s\)")
GAUGE_AT_SHUTDOWN = re.compile(r"memory gauge at shutdown: (-?\d+) byte")


def frame_bytes(command, headers, body=b""):
    lines = [command] + [f"{k}:{v}" for k, v in headers]
    return ("\n".join(lines) + "\n\n").encode() + body + b"\x00"


def wait_receipt(raw, receipt, timeout=20.0):
    """Reads frames until RECEIPT `receipt`; returns the MESSAGE frames read on the way."""
    messages = []
    while True:
        frame = raw.read_frame(timeout)
        assert frame.command != "ERROR", frame
        if frame.command == "MESSAGE":
            messages.append(frame)
        elif frame.command == "RECEIPT" and frame.header("receipt-id") == receipt:
            return messages


def shutdown_counts(broker):
    """Stops the broker; returns ({shard: (queues, topic subscriptions)}, memory gauge bytes)
    from the counts it logs at shutdown."""
    assert broker.stop() == 0, broker.log()
    log = broker.log(tail_lines=100)
    counts = {int(s): (int(q), int(t)) for s, q, t in SHUTDOWN_COUNTS.findall(log)}
    gauge = GAUGE_AT_SHUTDOWN.search(log)
    assert counts and gauge, log
    return counts, int(gauge.group(1))


def churn_subscriptions(raw, kind, prefix, count):
    """SUBSCRIBE then UNSUBSCRIBE `count` fresh names, pipelined by CHUNK, nothing stored."""
    for start in range(0, count, CHUNK):
        data = bytearray()
        for i in range(start, min(start + CHUNK, count)):
            data += frame_bytes("SUBSCRIBE", [("destination", f"/{kind}/{prefix}.{i}"), ("id", str(i))])
            data += frame_bytes("UNSUBSCRIBE", [("id", str(i))])
        # A receipt to pace the pipeline (to a topic nobody reads: it holds nothing).
        data += frame_bytes("SEND", [("destination", f"/topic/{prefix}.mark"), ("receipt", f"c{start}")], b"")
        raw.send(bytes(data))
        wait_receipt(raw, f"c{start}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["queue", "topic"])
def test_subscribe_unsubscribe_of_fresh_names_holds_no_memory(broker_factory, kind):
    broker = broker_factory(store="memory")
    with RawStomp(broker.port, timeout=20) as raw:
        raw.connect("1.2")
        churn_subscriptions(raw, kind, "warm", 2000)  # the allocator's and the maps' first growth
        before = rss_bytes(broker.proc.pid)
        churn_subscriptions(raw, kind, "churn", 30000)
        after = rss_bytes(broker.proc.pid)
    assert after - before < SLACK, f"RSS grew by {(after - before) / MiB:.1f} MiB over 30000 fresh {kind}s"
    assert_broker_works(broker.port)
    counts, gauge = shutdown_counts(broker)
    assert all(q == 0 and t == 0 for q, t in counts.values()), counts
    assert gauge == 0, "every queue's overhead was given back to the memory gauge"


def fill_and_drain(raw, prefix, count):
    """SENDs one message to each of `count` fresh queues (all held at once), then drains them:
    SUBSCRIBE client-individual, receive, ACK, UNSUBSCRIBE. Returns the bodies received."""
    for start in range(0, count, CHUNK):
        data = bytearray()
        for i in range(start, min(start + CHUNK, count)):
            data += frame_bytes("SEND", [("destination", f"/queue/{prefix}.{i}"), ("persistent", "true")],
                                str(i).encode())
        data += frame_bytes("SEND", [("destination", f"/queue/{prefix}.{start}"), ("receipt", f"s{start}"),
                                     ("persistent", "true")], b"extra")
        raw.send(bytes(data))
        wait_receipt(raw, f"s{start}")
    received = []
    for start in range(0, count, CHUNK):
        end = min(start + CHUNK, count)
        data = bytearray()
        for i in range(start, end):
            data += frame_bytes("SUBSCRIBE", [("destination", f"/queue/{prefix}.{i}"), ("id", str(i)),
                                              ("ack", "client-individual")])
        raw.send(bytes(data))
        # The first queue of the chunk holds the "extra" message too.
        messages = []
        while len(messages) < end - start + 1:
            frame = raw.read_frame(20)
            assert frame.command == "MESSAGE", frame
            messages.append(frame)
        data = bytearray()
        for m in messages:
            data += frame_bytes("ACK", [("id", m.header("ack"))])
        for i in range(start, end):
            data += frame_bytes("UNSUBSCRIBE", [("id", str(i))])
        data += frame_bytes("SEND", [("destination", f"/topic/{prefix}.mark"), ("receipt", f"d{start}")], b"")
        raw.send(bytes(data))
        wait_receipt(raw, f"d{start}")
        received += [m.body for m in messages]
    return received


@pytest.mark.timeout(180)
def test_drained_queues_are_freed(broker_factory):
    broker = broker_factory()
    count = 20000
    with RawStomp(broker.port, timeout=20) as raw:
        raw.connect("1.2")
        received = fill_and_drain(raw, "first", count)
        assert sorted(b for b in received if b != b"extra") == sorted(str(i).encode() for i in range(count))
        middle = rss_bytes(broker.proc.pid)
        # The first round's queues are gone: the second's reuse their memory instead of adding to it.
        received = fill_and_drain(raw, "second", count)
        assert len(received) == count + count // CHUNK
        after = rss_bytes(broker.proc.pid)
    assert after - middle < SLACK, f"RSS grew by {(after - middle) / MiB:.1f} MiB over {count} more drained queues"
    counts, gauge = shutdown_counts(broker)
    assert all(q == 0 for q, _ in counts.values()), counts
    assert gauge == 0


@pytest.mark.timeout(90)
def test_a_queue_whose_consumer_leaves_keeps_every_receipted_message(broker_factory, stomp_client):
    """A producer sends to a queue while its only consumer keeps subscribing and unsubscribing:
    the queue is empty and consumer-less again and again, and whatever was receipted is received."""
    broker = broker_factory()
    destination = "/queue/gc-race"
    total = 3000
    producer = stomp_client(broker)
    receipted = []
    failure = []

    def produce():
        try:
            for start in range(0, total, 100):
                producer.send_many(destination, [str(i) for i in range(start, start + 100)],
                                   headers={"persistent": "true"})
                receipted.extend(range(start, start + 100))
        except Exception as e:  # reported below
            failure.append(e)

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    got = set()
    with RawStomp(broker.port, timeout=20) as raw:
        raw.connect("1.2")
        round_ = 0
        while thread.is_alive() or round_ < 3:
            round_ += 1
            raw.send_frame("SUBSCRIBE", [("destination", destination), ("id", str(round_)),
                                         ("ack", "client-individual"), ("activemq.prefetchSize", "5")])
            # Take what arrives right away (maybe nothing), ack some of it, then leave.
            for frame in raw.idle(0.02):
                if frame.command == "MESSAGE" and int(frame.body) % 2 == 0:
                    raw.send_frame("ACK", [("id", frame.header("ack"))])
                    got.add(int(frame.body))
            raw.send_frame("UNSUBSCRIBE", [("id", str(round_)), ("receipt", f"u{round_}")])
            for frame in wait_receipt(raw, f"u{round_}"):
                pass  # unacked: they go back to the queue
        thread.join(30)
        assert not failure, failure
        raw.send_frame("SUBSCRIBE", [("destination", destination), ("id", "last"), ("ack", "client-individual")])
        missing = set(receipted) - got

        def all_arrived():
            for frame in raw.idle(0.05):
                if frame.command == "MESSAGE":
                    raw.send_frame("ACK", [("id", frame.header("ack"))])
                    got.add(int(frame.body))
            return not (set(receipted) - got)

        wait_for(all_arrived, 30, lambda: f"{len(set(receipted) - got)} receipted messages never arrived "
                                          f"(of {len(missing)} still owed after the churn)")
    assert len(receipted) == total


# ------------------------------------------------------------------ transactions are bounded

def tx_config(**keys):
    return "[stomp]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("config, bound", [
    (None, 16 * MiB),  # the default max_transaction_bytes
    ("[core]\nmemory_limit_bytes = 8388608\n", 4 * MiB),  # at most half the memory limit
])
def test_a_transaction_past_its_byte_bound_is_refused_and_aborted(broker_factory, stomp_client, config, bound):
    broker = broker_factory(config=config)
    destination = "/queue/tx-bytes"
    consumer = stomp_client(broker)
    consumer.subscribe(destination)
    start_rss = rss_bytes(broker.proc.pid)
    body = b"x" * (256 * 1024)
    with RawStomp(broker.port, timeout=10) as raw:
        raw.connect("1.2")
        raw.send_frame("BEGIN", [("transaction", "t1")])
        try:
            # 64 MiB offered inside one transaction, far past the bound.
            for i in range(256):
                raw.send(frame_bytes("SEND", [("destination", destination), ("transaction", "t1"),
                                              ("content-length", str(len(body)))], body))
        except OSError:
            pass  # the broker closed the connection after its ERROR
        error = expect_error_and_close(raw)
    assert error.header("message") == "transaction too large", error
    assert f"more than {bound} bytes (stomp.max_transaction_bytes)".encode() in error.body, error
    assert rss_bytes(broker.proc.pid) - start_rss < bound + 24 * MiB
    # Aborted: nothing of it is delivered; the broker serves everyone else.
    consumer.send(destination, "after")
    consumer.wait_messages(1)
    assert consumer.bodies() == ["after"]
    assert_broker_works(broker.port)
    _, gauge = shutdown_counts(broker)
    assert gauge == 0, "the transaction's bytes were given back to the memory gauge"


@pytest.mark.timeout(60)
def test_a_transaction_past_its_message_bound_returns_its_acks(broker_factory, stomp_client):
    broker = broker_factory(config=tx_config(max_transaction_messages=3))
    destination = "/queue/tx-acks"
    producer = stomp_client(broker)
    producer.send_many(destination, [f"m{i}" for i in range(5)])
    with RawStomp(broker.port, timeout=10) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", destination), ("id", "s"), ("ack", "client-individual")])
        messages = [raw.read_frame() for _ in range(5)]
        assert all(m.command == "MESSAGE" for m in messages), messages
        raw.send_frame("BEGIN", [("transaction", "t1")])
        for m in messages[:4]:
            raw.send_frame("ACK", [("id", m.header("ack")), ("transaction", "t1")])
        error = expect_error_and_close(raw)
    assert error.header("message") == "transaction too large", error
    assert b"max_transaction_messages" in error.body, error
    # The acks were never committed: all five come back.
    consumer = stomp_client(broker)
    consumer.subscribe(destination)
    consumer.wait_messages(5)
    assert sorted(consumer.bodies()) == [f"m{i}" for i in range(5)]


@pytest.mark.timeout(60)
def test_open_transactions_per_connection_are_capped(broker):
    with RawStomp(broker.port, timeout=10) as raw:
        raw.connect("1.2")
        for i in range(16):  # the default stomp.max_transactions
            raw.send_frame("BEGIN", [("transaction", f"t{i}"), ("receipt", f"b{i}")])
            assert raw.read_frame().header("receipt-id") == f"b{i}"
        raw.send_frame("BEGIN", [("transaction", "t16")])
        error = expect_error_and_close(raw)
    assert error.header("message") == "too many open transactions", error
    assert b"at most 16 transactions open (stomp.max_transactions)" in error.body, error
    assert_broker_works(broker.port)


def test_subscriptions_per_connection_are_capped(broker_factory):
    b = broker_factory(config="[stomp]\nmax_subscriptions = 50\n")
    with RawStomp(b.port, timeout=10) as raw:
        raw.connect("1.2")
        frames = [("SUBSCRIBE", [("id", f"s{i}"), ("destination", f"/topic/cap.t{i}")]) for i in range(49)]
        for command, headers in frames:
            raw.send_frame(command, headers)
        raw.send_frame("SUBSCRIBE", [("id", "last"), ("destination", "/queue/cap.q"), ("receipt", "r")])
        assert raw.read_frame().header("receipt-id") == "r"  # the 50th is still taken
        raw.send_frame("SUBSCRIBE", [("id", "one-more"), ("destination", "/topic/cap.more")])
        error = expect_error_and_close(raw)
    assert error.header("message") == "too many subscriptions", error
    assert b"at most 50 subscriptions (stomp.max_subscriptions)" in error.body, error
    assert_broker_works(b.port)


def test_destination_levels_are_capped(broker):
    # One SUBSCRIBE of ~30k levels made a node per level on every shard.
    with RawStomp(broker.port, timeout=10) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("id", "deep"), ("destination", "/topic/" + ".".join(["a"] * 30000))])
        error = expect_error_and_close(raw)
    assert error.header("message") == "invalid destination", error
    assert b"at most 128 are allowed (stomp.max_destination_levels)" in error.body, error
    with RawStomp(broker.port, timeout=10) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("id", "ok"), ("destination", "/topic/" + ".".join(["a"] * 128)),
                                     ("receipt", "r")])
        assert raw.read_frame().header("receipt-id") == "r"
    assert_broker_works(broker.port)


def read_receipts_until_quiet(raw, receipts, quiet=0.5, timeout=20.0):
    """Collects RECEIPT ids into `receipts` until none has come for `quiet` seconds."""
    def stalled():
        before = len(receipts)
        for frame in raw.idle(quiet):
            assert frame.command == "RECEIPT", frame
            receipts.append(frame.header("receipt-id"))
        return len(receipts) == before

    wait_for(stalled, timeout, "the transaction's receipts to stop coming")


@pytest.mark.timeout(60)
def test_a_transaction_counts_towards_the_memory_limit(broker_factory, stomp_client):
    """6 MiB wait in a queue under an 8 MiB limit; a transaction's SENDs take the rest, so the
    broker stops reading them at the limit (no ERROR: the transaction is under its own bound of
    4 MiB), and reads on once a consumer drains the backlog; the COMMIT then delivers it all."""
    broker = broker_factory(config="[core]\nmemory_limit_bytes = 8388608\n")
    body = "x" * (256 * 1024)
    backlog, target = "/queue/tx-mem-backlog", "/queue/tx-mem-target"
    stomp_client(broker).send_many(backlog, [body] * 24)
    receiver = stomp_client(broker)
    receiver.subscribe(target)
    with RawStomp(broker.port, timeout=10) as raw:
        raw.connect("1.2")
        raw.send_frame("BEGIN", [("transaction", "t1")])
        data = bytearray()
        for i in range(12):  # 3 MiB
            data += frame_bytes("SEND", [("destination", target), ("transaction", "t1"), ("receipt", f"t{i}"),
                                         ("content-length", str(len(body)))], body.encode())
        raw.send(bytes(data))
        receipts = []
        read_receipts_until_quiet(raw, receipts)
        assert len(receipts) < 12, "every transactional SEND was read past the memory limit: not counted"
        drain = stomp_client(broker)
        drain.subscribe(backlog)
        drain.wait_messages(24)

        def all_read():
            receipts.extend(frame.header("receipt-id") for frame in raw.idle(0.05))
            return len(receipts) == 12

        wait_for(all_read, 20, lambda: f"the rest of the transaction to be read ({len(receipts)} of 12 receipts)")
        raw.send_frame("COMMIT", [("transaction", "t1"), ("receipt", "commit")])
        assert raw.read_frame().header("receipt-id") == "commit"
    receiver.wait_messages(12)
    assert receiver.count() == 12
