"""A plain topic subscriber that stops acknowledging (issue 10, item 4): its backlog is bounded
by `[core] subscriber_backlog_bytes` (overflow "block", the default), so past the bound the
producers of that topic are held back (TCP back-pressure), and only they. Nothing is dropped,
producers to other topics and queues go on, and once the subscriber acks or leaves, the held
producers resume and every message is delivered. With `memory_limit_bytes` set, the bound is at
most a quarter of it, so one slow subscriber cannot stop the whole broker."""

import threading

import pytest

from helpers import raw_mqtt
from helpers.raw_mqtt import RawMqtt
from helpers.raw_stomp import RawStomp
from helpers.reliable import config, core, fresh, name_of
from helpers.wait import wait_for, wait_stalled

KiB = 1024
BOUND = 256 * KiB
BODY = 4 * KiB
TOTAL = 800  # 3.2 MiB, far past the bound: more than the producers' reads in flight before it holds
OTHERS = 100
# The memory limit test: the default bound is capped at a quarter of the limit (1 MiB); the rest
# is slack for what producers send before the mark reaches them (other shards).
LIMIT = 4 * 1024 * KiB
FLOOD = 1600  # 6.4 MiB: without a per-topic bound the backlog would reach the limit


class StompFlood(threading.Thread):
    """Sends `total` messages of BODY bytes to `destination` as fast as the socket takes them, a
    receipt on each; the body starts with its sequence number."""

    def __init__(self, client, destination, total=TOTAL):
        super().__init__(daemon=True)
        self.client, self.destination, self.total = client, destination, total
        self.error = None

    def run(self):
        filler = "x" * (BODY - 16)
        try:
            for seq in range(self.total):
                self.client.conn.send(self.destination, "%016d" % seq + filler, headers={"receipt": f"a{seq}"})
        except Exception as e:  # reported by the test
            self.error = e

    def confirmed(self):
        with self.client.cond:
            return sum(1 for r in self.client.receipts if r.startswith("a"))


def flood_until_held(producer, topic, total=TOTAL):
    """Starts a StompFlood of `total` to `topic` and waits until its receipts stop coming."""
    flood = StompFlood(producer, topic, total)
    flood.start()
    held = wait_stalled(flood.confirmed, what="the topic's producer to be held back")
    assert flood.error is None, flood.error
    assert held < total, "every SEND was taken: the slow subscriber's backlog is unbounded"
    return flood


def slow_subscriber(port, destination):
    """A client-ack subscriber with a prefetch of one that acks nothing (yet)."""
    slow = RawStomp(port, timeout=10.0)
    slow.connect("1.2")
    slow.send_frame("SUBSCRIBE", [("destination", destination), ("id", "0"), ("ack", "client-individual"),
                                  ("activemq.prefetchSize", "1"), ("receipt", "sub")])
    assert slow.read_frame(timeout=10.0).command == "RECEIPT"
    return slow


def assert_in_order(bodies, count):
    assert len(bodies) == count, f"{len(bodies)} of {count} delivered"
    for seq, body in enumerate(bodies):
        assert body[:16] == "%016d" % seq, f"message {seq}: lost or reordered"


def others_go_on(broker, stomp_client, topic_b, queue):
    """Producers to another topic and to a queue, on new connections, are served meanwhile."""
    sub_b = stomp_client(broker)
    sub_b.subscribe(topic_b)
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    producer.send_many(topic_b, [f"b{i}" for i in range(OTHERS)], timeout=20.0)
    producer.send_many(queue, [f"q{i}" for i in range(OTHERS)], timeout=20.0)
    assert [m.body for m in sub_b.wait_messages(OTHERS, timeout=20.0)] == [f"b{i}" for i in range(OTHERS)]
    assert [m.body for m in consumer.wait_messages(OTHERS, timeout=20.0)] == [f"q{i}" for i in range(OTHERS)]


@pytest.mark.timeout(90)
def test_slow_subscriber_holds_back_only_its_topics_producer_until_it_acks(broker_factory, stomp_client):
    broker = broker_factory(config=config(core(subscriber_backlog_bytes=BOUND)))
    topic_a, topic_b, queue = fresh("topic", "a"), fresh("topic", "b"), fresh("queue", "q")
    slow = slow_subscriber(broker.port, topic_a)
    fast = stomp_client(broker)
    fast.subscribe(topic_a)
    flood = flood_until_held(stomp_client(broker), topic_a)
    others_go_on(broker, stomp_client, topic_b, queue)
    assert flood.confirmed() < TOTAL, "the topic's producer was let go with its subscriber still stuck"

    # The slow subscriber catches up, acking each: the producer resumes, nothing was dropped.
    bodies = []
    for _ in range(TOTAL):
        frame = slow.read_frame(timeout=10.0)
        assert frame.command == "MESSAGE", frame
        bodies.append(frame.body.decode())
        slow.send_frame("ACK", [("id", frame.header("ack"))])
    assert_in_order(bodies, TOTAL)
    flood.join(10)
    wait_for(lambda: flood.confirmed() == TOTAL, 20.0, "every receipt")
    assert_in_order([m.body for m in fast.wait_messages(TOTAL, timeout=20.0)], TOTAL)
    slow.close()


@pytest.mark.timeout(90)
def test_mqtt_publisher_is_held_back_until_the_slow_subscriber_leaves(broker_factory, stomp_client):
    broker = broker_factory(config=config(core(subscriber_backlog_bytes=BOUND)))
    topic_a = fresh("topic", "m")
    mqtt_topic = name_of(topic_a).replace(".", "/")
    slow = slow_subscriber(broker.port, topic_a)
    fast = stomp_client(broker)
    fast.subscribe(topic_a)

    publisher = RawMqtt(broker.mqtt_port, timeout=30.0)
    publisher.connect("held-publisher")
    acked = []

    def read_acks():
        try:
            while len(acked) < TOTAL:
                p = publisher.read(timeout=60.0)
                if p.type == raw_mqtt.PUBACK:
                    acked.append(p.packet_id)
        except Exception:  # closed at the end of the test
            pass

    reader = threading.Thread(target=read_acks, daemon=True)
    reader.start()
    filler = b"x" * (BODY - 16)

    def publish_all():
        for seq in range(TOTAL):
            publisher.send(raw_mqtt.publish(mqtt_topic, b"%016d" % seq + filler, qos=1, packet_id=seq + 1))

    sender = threading.Thread(target=publish_all, daemon=True)
    sender.start()

    held = wait_stalled(lambda: len(acked), what="the MQTT publisher to be held back")
    assert held < TOTAL, "every PUBLISH was acknowledged: the slow subscriber's backlog is unbounded"
    # Another MQTT publisher, to another topic, is served meanwhile.
    other = RawMqtt(broker.mqtt_port, timeout=10.0)
    other.connect("free-publisher")
    other.send(raw_mqtt.publish(mqtt_topic + "-other", b"free", qos=1, packet_id=1))
    assert other.expect(raw_mqtt.PUBACK, timeout=10.0).packet_id == 1
    other.close()
    assert len(acked) < TOTAL

    slow.close()  # the stuck subscriber leaves: its marks go with it
    wait_for(lambda: len(acked) == TOTAL, 20.0, lambda: f"every PUBACK (have {len(acked)})")
    sender.join(10)
    assert_in_order([m.body for m in fast.wait_messages(TOTAL, timeout=20.0)], TOTAL)
    publisher.close()


@pytest.mark.timeout(90)
def test_slow_subscriber_alone_does_not_stop_the_broker_at_its_memory_limit(broker_factory, stomp_client):
    # No subscriber_backlog_bytes: the default bound, capped at a quarter of the limit.
    broker = broker_factory(config=config(core(memory_limit_bytes=LIMIT)))
    topic_a, topic_b, queue = fresh("topic", "a"), fresh("topic", "b"), fresh("queue", "q")
    slow = slow_subscriber(broker.port, topic_a)
    flood = flood_until_held(stomp_client(broker), topic_a, FLOOD)
    # Without a per-topic bound the backlog would reach the limit and pause every producer.
    others_go_on(broker, stomp_client, topic_b, queue)

    slow.close()
    wait_for(lambda: flood.confirmed() == FLOOD, 30.0, "every receipt once the slow subscriber left")
    flood.join(10)
    assert flood.error is None, flood.error
