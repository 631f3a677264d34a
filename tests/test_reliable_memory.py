"""The global memory limit ([core] memory_limit_bytes): past it the broker stops reading from
producers' sockets (TCP back-pressure) until consumers drain, while consumers keep being served.
A producer pushes far more than the limit at a queue; the broker's resident memory stays bounded,
the producer stalls, a slow consumer still gets served and receives every message, in order."""

import threading
import time

import pytest

from helpers import raw_mqtt
from helpers.raw_mqtt import RawMqtt
from helpers.raw_stomp import RawStomp
from helpers.reliable import config, core, fresh, rss_bytes
from helpers.wait import wait_for, wait_stalled

MiB = 1024 * 1024
LIMIT = 2 * MiB
BODY = 64 * 1024
TOTAL = 1024  # 64 MiB through a 2 MiB broker
RECEIPT_EVERY = 16
# Resident memory may grow past the start by the limit, read/write buffers, allocator slack.
# Generous, yet far below what holding the backlog would take (TOTAL * BODY = 64 MiB).
CEILING = 24 * MiB


class RssSampler(threading.Thread):
    """Samples a process's VmRSS every few milliseconds; `peak` is the highest seen."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = rss_bytes(pid)
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except (OSError, AssertionError):
                return
            self.done.wait(0.005)

    def stop(self):
        self.done.set()
        self.join(5)
        return self.peak


class Producer(threading.Thread):
    """Sends TOTAL non-persistent 64 KiB messages as fast as the socket takes them, a receipt on
    every RECEIPT_EVERY-th and on the last."""

    def __init__(self, client, queue):
        super().__init__(daemon=True)
        self.client, self.queue = client, queue
        self.sent = 0
        self.receipts = []
        self.error = None

    def run(self):
        body = "x" * BODY
        try:
            for seq in range(TOTAL):
                headers = {"seq": str(seq)}
                if seq % RECEIPT_EVERY == RECEIPT_EVERY - 1 or seq == TOTAL - 1:
                    headers["receipt"] = f"p{seq}"
                    self.receipts.append(headers["receipt"])
                self.client.conn.send(self.queue, body, headers=headers)
                self.sent = seq + 1
        except Exception as e:  # reported by the test
            self.error = e


@pytest.mark.timeout(120)
def test_memory_limit_back_pressure(broker_factory, stomp_client):
    broker = broker_factory(config=config(core(memory_limit_bytes=LIMIT)))
    queue = fresh(prefix="flood")
    # A connection first, so the baseline includes an idle session.
    producer_client = stomp_client(broker)
    baseline = rss_bytes(broker.proc.pid)
    sampler = RssSampler(broker.proc.pid)
    sampler.start()
    producer = Producer(producer_client, queue)
    producer.start()

    # No consumer yet: the producer must stall long before 64 MiB are in.
    stalled_at = wait_stalled(lambda: producer.sent, what="the producer to be held back")
    assert producer.error is None, producer.error
    assert stalled_at < TOTAL, "the whole 64 MiB went in: no back-pressure"
    assert sampler.peak - baseline < CEILING, \
        f"RSS grew by {(sampler.peak - baseline) / MiB:.1f} MiB with the limit at 2 MiB"

    # A slow consumer (prefetch 1, one ACK per message) is served while the producer pushes.
    received = 0
    with RawStomp(broker.port, timeout=10.0) as consumer:
        consumer.connect("1.2")
        consumer.send_frame("SUBSCRIBE", [("destination", queue), ("id", "0"),
                                          ("ack", "client-individual"),
                                          ("activemq.prefetchSize", "1")])
        while received < TOTAL:
            frame = consumer.read_frame(timeout=10.0)
            assert frame.command == "MESSAGE", frame
            assert frame.header("seq") == str(received), \
                f"expected seq {received}, got {frame.header('seq')}: lost or reordered"
            assert len(frame.body) == BODY
            received += 1
            consumer.send_frame("ACK", [("id", frame.header("ack"))])
    producer.join(10)
    peak = sampler.stop()
    assert producer.error is None, producer.error
    assert producer.sent == TOTAL
    wanted = set(producer.receipts)
    producer_client._wait(lambda: wanted.issubset(producer_client.receipts), 10.0,
                          lambda: f"{len(wanted - set(producer_client.receipts))} receipts")
    assert peak - baseline < CEILING, \
        f"RSS grew by {(peak - baseline) / MiB:.1f} MiB with the limit at 2 MiB"


def test_consumers_on_other_queues_are_served_at_the_limit(broker_factory, stomp_client):
    broker = broker_factory(config=config(core(memory_limit_bytes=LIMIT)))
    flood, other = fresh(prefix="flood"), fresh(prefix="other")
    # Something already waiting on another queue before the limit is reached.
    stomp_client(broker).send_many(other, [f"o{i}" for i in range(5)])
    producer = Producer(stomp_client(broker), flood)
    producer.start()
    wait_stalled(lambda: producer.sent, what="the producer to be held back")
    consumer = stomp_client(broker)
    consumer.subscribe(other)  # a new connection's frames are read at the limit
    assert [m.body for m in consumer.wait_messages(5)] == [f"o{i}" for i in range(5)]
    # drain the flood so the producer finishes
    with RawStomp(broker.port, timeout=10.0) as drain:
        drain.connect("1.2")
        drain.send_frame("SUBSCRIBE", [("destination", flood), ("id", "0")])
        for _ in range(TOTAL):
            assert drain.read_frame(timeout=10.0).command == "MESSAGE"
    producer.join(10)
    assert producer.sent == TOTAL and producer.error is None


class MqttPublisher(threading.Thread):
    """Publishes TOTAL QoS 0 64 KiB messages over a raw MQTT socket as fast as it takes them;
    each payload starts with its sequence number."""

    def __init__(self, port, topic, keep_alive):
        super().__init__(daemon=True)
        self.client = RawMqtt(port, timeout=60.0)
        self.client.connect("flood-publisher", keep_alive=keep_alive)
        self.topic = topic
        self.sent = 0
        self.error = None

    def run(self):
        filler = b"x" * (BODY - 16)
        try:
            for seq in range(TOTAL):
                self.client.send(raw_mqtt.publish(self.topic, b"%016d" % seq + filler))
                self.sent = seq + 1
        except Exception as e:  # reported by the test
            self.error = e


@pytest.mark.timeout(120)
def test_memory_limit_holds_back_mqtt_publishers(broker_factory):
    broker = broker_factory(config=config(core(memory_limit_bytes=LIMIT)))
    topic = f"flood/{fresh(prefix='m').rsplit('.', 1)[1]}"
    with RawStomp(broker.port, timeout=10.0) as consumer:
        consumer.connect("1.2")
        # A consumer that takes one message and acks nothing yet: the rest queue in the broker.
        consumer.send_frame("SUBSCRIBE", [("destination", "/topic/" + topic.replace("/", ".")), ("id", "0"),
                                          ("ack", "client-individual"), ("activemq.prefetchSize", "1"),
                                          ("receipt", "sub")])
        assert consumer.read_frame(timeout=10.0).command == "RECEIPT"
        baseline = rss_bytes(broker.proc.pid)
        # Keep-alive 1 s: held back longer than 1.5 s, it must not count as a silent client.
        publisher = MqttPublisher(broker.mqtt_port, topic, keep_alive=1)
        publisher.start()
        stalled_at = wait_stalled(lambda: publisher.sent, what="the MQTT publisher to be held back")
        assert publisher.error is None, publisher.error
        assert stalled_at < TOTAL, "the whole 64 MiB went in over MQTT: no back-pressure"
        assert rss_bytes(broker.proc.pid) - baseline < CEILING
        held_since = time.monotonic()
        wait_for(lambda: time.monotonic() - held_since > 2.0, 5.0, "two keep-alive periods to pass")

        for expected in range(TOTAL):
            frame = consumer.read_frame(timeout=10.0)
            assert frame.command == "MESSAGE", frame
            assert frame.body[:16] == b"%016d" % expected, "lost or reordered"
            consumer.send_frame("ACK", [("id", frame.header("ack"))])
        publisher.join(10)
        assert publisher.error is None and publisher.sent == TOTAL
        # Still a working MQTT connection after being paused.
        publisher.client.send(bytes([0xC0, 0]))  # PINGREQ
        assert publisher.client.read(timeout=10.0).type == 13  # PINGRESP
        publisher.client.close()
