"""The journal's live-set checkpoint against the real binary (docs/storage.md, "Live-set
checkpoint"): a restart starts from DATA_DIR/journal/live.ckpt and replays only what was written
after it, the backlog it covers coming back as cold tails without a segment read; a crash replays
the journal's tail after the last checkpoint; a damaged or outdated checkpoint is not trusted
over the journal. In every case each message comes back once, in order, and none that was
acknowledged."""

import re
import shutil

from helpers.journal import PERSISTENT, SMALL_SEGMENTS, drain_in_order, fill_segments
from helpers.wait import wait_for

SUMMARY = re.compile(r"recovered (\d+) live messages \([^)]*\) and (\d+) in (\d+) tails( \(from the live-set "
                     r"checkpoint\))? from (\d+) segments \((\d+) from their index, (\d+) read")


def summary(broker):
    found = SUMMARY.findall(broker.log())
    assert found, f"no recovery summary:\n{broker.log()}"
    live, tail_messages, tails, from_checkpoint, segments, indexed, read = found[-1]
    return {"live": int(live), "tail_messages": int(tail_messages), "tails": int(tails),
            "from_checkpoint": bool(from_checkpoint), "segments": int(segments), "indexed": int(indexed),
            "read": int(read)}


def test_a_clean_restart_reads_no_segment(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    producer = stomp_client(broker)
    sent = fill_segments(producer, broker, queue, 5, tag="clean")
    producer.disconnect()
    assert broker.stop() == 0
    assert broker.checkpoint.exists(), "no live-set checkpoint after a clean stop"

    broker.start()
    s = summary(broker)
    assert s["from_checkpoint"], broker.log()
    assert s["segments"] == 0 and s["read"] == 0 and s["indexed"] == 0, broker.log()
    assert s["tail_messages"] == len(sent) and s["live"] == 0, broker.log()
    drain_in_order(stomp_client, broker, queue, sent)

    # What was acknowledged stays gone across the next restart too.
    assert broker.stop() == 0
    broker.start()
    s = summary(broker)
    assert s["from_checkpoint"] and s["tail_messages"] == 0 and s["live"] == 0, broker.log()
    drain_in_order(stomp_client, broker, queue, [])


def test_a_crash_replays_only_what_followed_the_checkpoint(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    producer = stomp_client(broker)
    first = fill_segments(producer, broker, queue, 4, tag="before")
    # A checkpoint is written by the journal's writer, at most once a second, when a batch comes
    # after what it would hold changed: send until one covering the fill is on disk.
    before = broker.checkpoint.stat().st_mtime_ns
    extra = []

    def checkpointed():
        extra.append(f"nudge-{len(extra):05d}")
        producer.send(queue, extra[-1], headers=PERSISTENT)
        return broker.checkpoint.stat().st_mtime_ns != before
    wait_for(checkpointed, timeout=30, message="a live-set checkpoint after the fill", interval=0.05)

    # After it: acknowledgements of part of what it holds, and new messages.
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "10"})
    taken = consumer.wait_messages(10, timeout=10)[:10]
    for m in taken:
        consumer.ack(m)
    consumer.disconnect()
    later = [f"after-{i:05d}" for i in range(50)]
    producer.send_many(queue, later, headers=PERSISTENT)

    broker.kill()
    broker.start()
    s = summary(broker)
    assert s["from_checkpoint"], broker.log()
    assert s["read"] < len(broker.segments()), f"every segment was read:\n{broker.log()}"
    acked = {m.body for m in taken}
    assert acked == set(first[:10])
    drain_in_order(stomp_client, broker, queue, first[10:] + extra + later)


def test_a_damaged_checkpoint_is_replaced_by_a_full_replay(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    producer = stomp_client(broker)
    sent = fill_segments(producer, broker, queue, 4, tag="damaged")
    producer.disconnect()
    assert broker.stop() == 0
    data = bytearray(broker.checkpoint.read_bytes())
    data[len(data) // 2] ^= 0x20
    broker.checkpoint.write_bytes(bytes(data))

    broker.start()
    assert "not using the live-set checkpoint" in broker.log(), broker.log()
    s = summary(broker)
    assert not s["from_checkpoint"] and s["live"] + s["tail_messages"] == len(sent), broker.log()
    drain_in_order(stomp_client, broker, queue, sent)
    # The replay wrote a sound checkpoint again.
    assert broker.stop() == 0
    broker.start()
    assert summary(broker)["from_checkpoint"], broker.log()
    drain_in_order(stomp_client, broker, queue, [])


def test_an_outdated_checkpoint_does_not_bring_back_acknowledged_messages(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    producer = stomp_client(broker)
    sent = fill_segments(producer, broker, queue, 4, tag="old")
    producer.disconnect()
    assert broker.stop() == 0
    outdated = broker.workdir / "live.ckpt.outdated"
    shutil.copyfile(broker.checkpoint, outdated)

    # Half is consumed and more is sent; then the checkpoint of before is put back.
    broker.start()
    consumer = stomp_client(broker)
    consumer.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "1"})
    half = len(sent) // 2
    for n in range(half):
        wait_for(lambda: consumer.count() > n, timeout=10, message=f"message {n}")
        consumer.ack(consumer.messages[n])
    consumer.disconnect()
    producer = stomp_client(broker)
    later = [f"later-{i:05d}" for i in range(30)]
    producer.send_many(queue, later, headers=PERSISTENT)
    producer.disconnect()
    assert broker.stop() == 0
    shutil.copyfile(outdated, broker.checkpoint)

    broker.start()
    # Used with the journal written after it, or refused for the segments gone since: either
    # way the acknowledged half stays gone.
    drain_in_order(stomp_client, broker, queue, sent[half:] + later)
