"""The log store across restarts: persistent messages survive SIGKILL, acked ones stay gone,
delivered-but-unacked ones come back redelivered, a torn tail is tolerated, corruption in the
middle stops start-up unless --recover skip-corrupt. The journal is DATA_DIR/journal/*.log."""

import signal

import pytest

from helpers.journal import PERSISTENT, SMALL_SEGMENTS, fill_segments
from helpers.metrics import metric
from helpers.wait import assert_stays, wait_for


def bodies(n, prefix="p"):
    return [f"{prefix}-{i:04d}-" + "x" * (i % 37) for i in range(n)]


def drain(stomp_client, broker, queue, expected_count, version="1.2", timeout=15.0, receipted_acks=False):
    """Subscribes a fresh consumer (auto ack), returns exactly `expected_count` messages (failing
    if more arrive), then disconnects it so later sends stay in the queue. With `receipted_acks`
    it acknowledges each message with a receipted ACK instead, so the acks are durable when it
    returns (an auto ack is written without being waited for: a SIGKILL could come first)."""
    consumer = stomp_client(broker, version=version)
    consumer.subscribe(queue, ack="client-individual" if receipted_acks else "auto")
    messages = consumer.wait_messages(expected_count, timeout=timeout) if expected_count else []
    assert_stays(lambda: consumer.count() == expected_count, 0.3,
                 lambda: f"expected {expected_count}, got {consumer.count()}")
    if receipted_acks:
        for m in messages:
            consumer.ack(m)
    consumer.disconnect()
    return messages


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def test_persistent_messages_survive_restart(broker, stomp_client, unique, sig):
    queue = unique()
    sent = bodies(200)
    producer = stomp_client(broker)
    producer.send_many(queue, sent, headers=PERSISTENT)
    broker.restart(sig=sig)
    messages = drain(stomp_client, broker, queue, len(sent))
    assert sorted(m.body for m in messages) == sorted(sent)
    assert [m.body for m in messages] == sent, "one producer, one queue: order is kept"
    assert all(m.headers.get("persistent") == "true" for m in messages)


def test_survives_two_restarts_and_new_writes(broker, stomp_client, unique):
    queue = unique()
    stomp_client(broker).send_many(queue, ["first"], headers=PERSISTENT)
    broker.restart(sig=signal.SIGKILL)
    stomp_client(broker).send_many(queue, ["second"], headers=PERSISTENT)
    broker.restart(sig=signal.SIGKILL)
    assert [m.body for m in drain(stomp_client, broker, queue, 2)] == ["first", "second"]


def test_acked_messages_do_not_come_back(broker, stomp_client, unique):
    queue = unique()
    sent = bodies(20)
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual")
    stomp_client(broker).send_many(queue, sent, headers=PERSISTENT)
    messages = consumer.wait_messages(20)
    for m in messages[:10]:
        consumer.ack(m)  # each with a receipt: acked before the kill
    broker.kill()
    broker.start()
    again = drain(stomp_client, broker, queue, 10)
    assert sorted(m.body for m in again) == sorted(sent[10:])


def test_delivered_unacked_messages_come_back_redelivered(broker, stomp_client, unique):
    queue = unique()
    sent = bodies(10)
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client")
    stomp_client(broker).send_many(queue, sent, headers=PERSISTENT)
    messages = consumer.wait_messages(10)
    assert all(m.headers.get("redelivered") in (None, "false") for m in messages)
    consumer.ack(messages[3])  # cumulative: m0..m3 acked, m4..m9 delivered but unacked
    broker.kill()
    broker.start()
    again = drain(stomp_client, broker, queue, 6)
    assert [m.body for m in again] == sent[4:]
    assert all(m.headers.get("redelivered") == "true" for m in again), \
        [m.headers for m in again]


def test_torn_tail_is_tolerated(broker, stomp_client, unique):
    queue = unique()
    sent = bodies(50)
    stomp_client(broker).send_many(queue, sent, headers=PERSISTENT)
    broker.kill()
    segments = broker.segments()
    assert segments, f"no journal segments in {broker.journal_dir}"
    with open(segments[-1], "ab") as f:
        f.write(b"\x17\x00\x00\x00garbage: a record cut short by a power failure\xff\xfe")
    broker.start()
    # Receipted ACKs: an auto ack is not waited for, and the drain after the SIGKILL wants 1 message.
    messages = drain(stomp_client, broker, queue, len(sent), receipted_acks=True)
    assert [m.body for m in messages] == sent
    # The broker must append after the last good record, not after the garbage: a later
    # restart then still reads a clean journal.
    stomp_client(broker).send_many(queue, ["after the tear"], headers=PERSISTENT)
    broker.restart(sig=signal.SIGKILL)
    assert [m.body for m in drain(stomp_client, broker, queue, 1)] == ["after the tear"]


def test_corruption_in_the_middle_stops_startup(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    sent = fill_segments(stomp_client(broker), broker, queue, 3)
    assert broker.stop() == 0
    segments = broker.segments()
    victim = segments[0]
    data = bytearray(victim.read_bytes())
    middle = len(data) // 2
    data[middle] ^= 0xFF
    victim.write_bytes(bytes(data))
    # A closed segment with a usable index is not read at start-up (its damage shows when a
    # message in it is read back), nor is any segment the live-set checkpoint covers; without
    # either, recovery reads the segment and meets the damage.
    index = victim.with_suffix(".idx")
    assert index.exists(), f"no index beside the closed segment {victim.name}"
    index.unlink()
    assert broker.checkpoint.exists(), "no live-set checkpoint after a clean stop"
    broker.checkpoint.unlink()

    broker.spawn()
    code = broker.wait_exit(timeout=10)
    assert code != 0, f"carrier started on a corrupt journal:\n{broker.log()}"
    assert victim.name in broker.log(), f"stderr does not name {victim.name}:\n{broker.log()}"

    broker.start(extra_args=["--recover", "skip-corrupt"])
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    wait_for(lambda: consumer.count() > 0, 10, "messages from the intact segments")
    wait_for(lambda: sent[-1] in consumer.bodies(), 10, "the last segment's messages")
    assert_stays(lambda: consumer.count() < len(sent), 0.3, "the corrupt record is skipped")
    got = consumer.bodies()
    assert len(got) == len(set(got)), "duplicates after skip-corrupt"
    assert set(got) <= set(sent), "messages that were never sent"


def test_damage_in_an_indexed_segment_shows_when_its_messages_are_read(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    sent = fill_segments(stomp_client(broker), broker, queue, 3)
    assert broker.stop() == 0
    victim = broker.segments()[0]
    assert victim.with_suffix(".idx").exists(), f"no index beside the closed segment {victim.name}"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))

    # Strict recovery starts: the segment's index stands in for it, and the queue's recovered
    # summaries fold into a cold tail (docs/storage.md, "Cold tails: the core"). The damaged
    # frame's messages fail their checksum when the tail is scanned: they are skipped, left
    # stored, counted and logged; everything before and after them is delivered, in order.
    broker.start()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    wait_for(lambda: sent[-1] in consumer.bodies(), 15, "the messages stored after the damage")
    wait_for(lambda: metric(broker, "carrier_page_in_failures_total") >= 1, 10, "the unreadable messages counted")
    assert_stays(lambda: consumer.count() < len(sent), 0.3, "the damaged frame's messages held back")
    got = consumer.bodies()
    assert len(got) == len(set(got)), "duplicates"
    assert got == [m for m in sent if m in set(got)], "delivered out of order"
    assert set(got) <= set(sent), "messages that were never sent"
    assert metric(broker, "carrier_page_in_failures_total") == len(sent) - len(got)
    log = broker.log()
    assert "cannot read back" in log and f"segment {int(victim.stem)}" in log, log