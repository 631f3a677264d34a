"""What the journal's tests share: persistent 1 KiB messages until the journal has rolled to a
given number of segments, and a drain that checks every message comes back once and in order."""

from helpers.wait import assert_stays

PERSISTENT = {"persistent": "true"}
# Small segments: a few dozen 1 KiB messages make several, and closed ones get their index.
SMALL_SEGMENTS = "[journal]\nsegment_bytes = 16384\n"


def fill_segments(producer, broker, queue, minimum_segments, tag="fill"):
    """Sends persistent 1 KiB messages (bodies `TAG-NNNNN-...`) with `producer` until the journal
    has at least `minimum_segments` segment files; returns the bodies sent."""
    sent = []
    while len(broker.segments()) < minimum_segments:
        batch = [f"{tag}-{len(sent) + i:05d}-" + "f" * 1000 for i in range(20)]
        producer.send_many(queue, batch, headers=PERSISTENT)
        sent += batch
        assert len(sent) < 5000, f"journal never rolled: {broker.segments()}"
    return sent


def drain_in_order(stomp_client, broker, queue, expected):
    """A fresh consumer (auto ack) must get exactly the bodies `expected`, once each, in order."""
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    messages = consumer.wait_messages(len(expected), timeout=30) if expected else []
    assert_stays(lambda: consumer.count() == len(expected), 0.3,
                 lambda: f"expected {len(expected)}, got {consumer.count()}")
    consumer.disconnect()
    assert [m.body for m in messages] == expected, "every message back, once, in order"
