"""The journal's checkpointed segment indexes against the real binary: a closed segment gets
DATA_DIR/journal/NNNN.idx, a restart applies the indexes instead of reading those segments, and
damaged or missing index files make it read the segments instead (the journal stays the source
of truth) with every message back, in order, and the index files written again."""

from helpers.journal import SMALL_SEGMENTS, drain_in_order, fill_segments
from helpers.wait import wait_for

def index_of(segment):
    return segment.with_suffix(".idx")


def test_restart_applies_the_indexes_of_closed_segments(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    producer = stomp_client(broker)
    sent = fill_segments(producer, broker, queue, 4, tag="idx")
    producer.disconnect()
    broker.kill()
    # A live-set checkpoint written after the last roll would spare the indexes too.
    broker.checkpoint.unlink(missing_ok=True)
    broker.start()
    segments = broker.segments()
    closed = segments[:-1]
    for s in closed:
        assert index_of(s).exists(), f"no index beside closed segment {s.name}"
    wait_for(lambda: "from their index" in broker.log(), 10, "the recovery summary line")
    summary = [line for line in broker.log().splitlines() if "recovered" in line and "from their index" in line]
    assert summary and f"{len(closed)} from their index" in summary[-1], broker.log()
    drain_in_order(stomp_client, broker, queue, sent)


def test_damaged_and_missing_indexes_fall_back_to_the_segments(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    producer = stomp_client(broker)
    sent = fill_segments(producer, broker, queue, 5, tag="idx")
    producer.disconnect()
    assert broker.stop() == 0
    closed = broker.segments()[:-1]
    good = {s: index_of(s).read_bytes() for s in closed}
    damaged, missing, stale = closed[0], closed[1], closed[2]
    data = bytearray(good[damaged])
    data[len(data) // 2] ^= 0x40
    index_of(damaged).write_bytes(bytes(data))
    index_of(missing).unlink()
    index_of(stale).write_bytes(good[closed[3]])  # another segment's index
    (broker.journal_dir / (index_of(damaged).name + ".tmp")).write_bytes(b"left by a crash before the rename")
    broker.checkpoint.unlink()  # with it, no index would be read at all

    broker.start()
    log = broker.log()
    assert f"not using index: {index_of(damaged)}" in log, log
    assert f"not using index: {index_of(stale)}" in log, log
    for s in closed:
        assert index_of(s).read_bytes() == good[s], f"{index_of(s).name} was not rewritten as written at roll"
    assert not (broker.journal_dir / (index_of(damaged).name + ".tmp")).exists()
    drain_in_order(stomp_client, broker, queue, sent)
