"""The journal's checkpointed segment indexes against the real binary: a closed segment gets
DATA_DIR/journal/NNNN.idx, a restart applies the indexes instead of reading those segments, and
damaged or missing index files make it read the segments instead (the journal stays the source
of truth) with every message back, in order, and the index files written again."""

from helpers.wait import assert_stays, wait_for

PERSISTENT = {"persistent": "true"}
SMALL_SEGMENTS = "[journal]\nsegment_bytes = 16384\n"


def fill_segments(broker, stomp_client, queue, minimum_segments):
    """Sends persistent 1 KiB messages until the journal has at least `minimum_segments`
    segment files; returns the bodies sent."""
    producer = stomp_client(broker)
    sent = []
    while len(broker.segments()) < minimum_segments:
        batch = [f"idx-{len(sent) + i:05d}-" + "i" * 1000 for i in range(20)]
        producer.send_many(queue, batch, headers=PERSISTENT)
        sent += batch
        assert len(sent) < 5000, f"journal never rolled: {broker.segments()}"
    producer.disconnect()
    return sent


def drain(stomp_client, broker, queue, expected):
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    messages = consumer.wait_messages(len(expected), timeout=30)
    assert_stays(lambda: consumer.count() == len(expected), 0.3,
                 lambda: f"expected {len(expected)}, got {consumer.count()}")
    consumer.disconnect()
    assert [m.body for m in messages] == expected, "every message back, once, in order"


def index_of(segment):
    return segment.with_suffix(".idx")


def test_restart_applies_the_indexes_of_closed_segments(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    sent = fill_segments(broker, stomp_client, queue, 4)
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
    drain(stomp_client, broker, queue, sent)


def test_damaged_and_missing_indexes_fall_back_to_the_segments(broker_factory, stomp_client, unique):
    broker = broker_factory(config=SMALL_SEGMENTS)
    queue = unique()
    sent = fill_segments(broker, stomp_client, queue, 5)
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
    drain(stomp_client, broker, queue, sent)
