"""Segment reclaim: once every message in a segment is acked the segment is deleted, so a long
run of send + ack keeps DATA_DIR/journal/ small."""

import signal

from helpers.wait import assert_stays, wait_for

SEGMENT_BYTES = 16384
CONFIG = f"[journal]\nsegment_bytes = {SEGMENT_BYTES}\nfsync = false\n"
PERSISTENT = {"persistent": "true"}


def journal_bytes(broker):
    return sum(p.stat().st_size for p in broker.segments())


def test_unacked_messages_keep_their_segments(broker_factory, stomp_client, unique):
    broker = broker_factory(config=CONFIG)
    queue = unique()
    producer = stomp_client(broker)
    sent = [f"keep-{i:04d}-" + "k" * 1000 for i in range(100)]  # ~100 KiB: several segments
    producer.send_many(queue, sent, headers=PERSISTENT)
    segments = broker.segments()
    assert len(segments) >= 2, f"the journal did not roll at {SEGMENT_BYTES} bytes: {segments}"
    assert_stays(lambda: all(p.exists() for p in segments), 0.5,
                 "segments holding unacked messages are kept")
    broker.restart(sig=signal.SIGKILL)
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    assert [m.body for m in consumer.wait_messages(len(sent))] == sent


def test_send_and_ack_keeps_the_journal_small(broker_factory, stomp_client, unique):
    broker = broker_factory(config=CONFIG)
    queue = unique()
    producer = stomp_client(broker)
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual")
    rounds, per_round = 20, 50
    for r in range(rounds):
        batch = [f"r{r:02d}-{i:03d}-" + "m" * 1000 for i in range(per_round)]
        producer.send_many(queue, batch, headers=PERSISTENT)
        messages = consumer.wait_messages((r + 1) * per_round)[r * per_round:]
        assert [m.body for m in messages] == batch
        for m in messages[:-1]:
            consumer.ack(m, wait=False)
        consumer.ack(messages[-1])  # with a receipt: everything before it is processed too
    written = rounds * per_round * 1000
    assert written > 40 * SEGMENT_BYTES  # without reclaim there would be 40+ segments
    wait_for(lambda: len(broker.segments()) <= 4, 15,
             lambda: f"journal to shrink to <= 4 segments: {len(broker.segments())} files, "
                     f"{journal_bytes(broker)} bytes")
    assert journal_bytes(broker) <= 8 * SEGMENT_BYTES, journal_bytes(broker)
    # Nothing acked comes back after a restart.
    broker.restart(sig=signal.SIGKILL)
    producer = stomp_client(broker)
    producer.send_many(queue, ["marker"])
    fresh = stomp_client(broker)
    fresh.subscribe(queue)
    assert fresh.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: fresh.bodies() == ["marker"], 0.3, lambda: fresh.bodies()[:5])
