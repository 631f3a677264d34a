"""A RECEIPT means durable, whatever the SEND asked for (issue 10, item 1); and client-supplied
times and intervals never wrap around into "now" (item 10).

The restart matrix sends, before one restart per store and signal, persistent messages to every
kind of destination (queue, durable topic subscription, composite of both), each now and later,
each alone and in a transaction, and checks every receipted one arrives afterwards, on time.
"""

import os
import signal
import time
import uuid
from contextlib import closing

import pytest

from helpers import postgres
from helpers import raw_mqtt as raw
from helpers.raw_stomp import RawStomp, assert_broker_works, expect_error_and_close
from helpers.reliable import config, core, fresh, now_ms, policy
from helpers.wait import assert_stays, wait_for

PERSISTENT = {"persistent": "true"}
EARLY_MS = 30  # how early a timer may appear to fire (clock granularity, rounding to ms)
DELAY_MS = 3000  # long enough to be still pending after the restart

INT64_MAX = 2**63 - 1


# --- item 1: receipted scheduled messages survive a restart ---------------------------------

def durable_subscribe(client, topic, name):
    return client.subscribe(topic, headers={"activemq.subscriptionName": name})


class Matrix:
    """Destinations and what each must receive after the restart."""

    def __init__(self):
        tag = uuid.uuid4().hex[:8]
        self.queue = fresh("queue")
        self.composite_queue = fresh("queue")
        self.topic = fresh("topic")
        self.composite_topic = fresh("topic")
        self.client_id = f"c-{tag}"
        self.subs = {self.topic: f"s1-{tag}", self.composite_topic: f"s2-{tag}"}
        self.expected = {d: set() for d in (self.queue, self.composite_queue, self.topic,
                                            self.composite_topic)}
        self.due = {}  # body -> epoch ms before which it must not arrive

    def targets(self, kind):
        if kind == "queue":
            return self.queue, [self.queue]
        if kind == "topic":
            return self.topic, [self.topic]
        parts = [self.composite_queue, self.topic, self.composite_topic]
        return ",".join(parts), parts

    def send_all(self, producer, per_case=3):
        """Every kind x {now, later} x {plain, transaction}; returns once all are receipted."""
        for kind in ("queue", "topic", "composite"):
            destination, reached = self.targets(kind)
            for later in (False, True):
                for in_tx in (False, True):
                    bodies = [f"{kind}-{'later' if later else 'now'}-{'tx' if in_tx else 'plain'}-{i}"
                              for i in range(per_case)]
                    headers = dict(PERSISTENT)
                    if later:
                        # Both spellings: `delay` counts from the broker's arrival, at or after
                        # this `due`.
                        due = now_ms() + DELAY_MS
                        if in_tx:
                            headers["deliver-at"] = str(due)
                        else:
                            headers["delay"] = str(DELAY_MS)
                        for b in bodies:
                            self.due[b] = due
                    if in_tx:
                        tx = f"tx-{uuid.uuid4().hex[:8]}"
                        producer.frame("BEGIN", {"transaction": tx})
                        for b in bodies:
                            producer.send(destination, b, headers={**headers, "transaction": tx},
                                          wait=False)
                        producer.frame("COMMIT", {"transaction": tx})
                    else:
                        producer.send_many(destination, bodies, headers=headers)
                    for d in reached:
                        self.expected[d].update(bodies)


def stamp_arrivals(client):
    """Records on each MESSAGE frame the epoch ms at which it arrived (`arrived_ms`)."""
    original = client.on_message

    def on_message(frame):
        frame.arrived_ms = now_ms()
        original(frame)

    client.on_message = on_message
    return client


def broker_on(request, broker_factory, store):
    """A broker on `store`; PostgreSQL in a throwaway cluster (skipped without its binaries)."""
    if store != "postgres":
        return broker_factory(store=store)
    server = request.getfixturevalue("postgres_server")
    return broker_factory(store=store, config=postgres.broker_config(postgres.unique_schema()),
                          extra_args=["--postgres", server.url])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("store", ["log", "sqlite", "postgres"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_every_receipted_message_survives_a_restart(request, broker_factory, stomp_client, store, sig):
    broker = broker_on(request, broker_factory, store)
    m = Matrix()
    subscriber = stomp_client(broker, connect_headers={"client-id": m.client_id})
    for topic, name in m.subs.items():
        durable_subscribe(subscriber, topic, name)
    subscriber.disconnect()  # the durable subscriber leaves; its subscriptions stay

    m.send_all(stomp_client(broker))
    assert now_ms() < min(m.due.values()), "sending took longer than the delay: proves nothing"
    broker.restart(sig=sig)

    # One connection for both durable subscriptions (they belong to its client-id), one per
    # queue; MESSAGE frames say their destination.
    consumers = [stamp_arrivals(stomp_client(broker, connect_headers={"client-id": m.client_id}))]
    for topic, name in m.subs.items():
        durable_subscribe(consumers[0], topic, name)
    for q in (m.queue, m.composite_queue):
        consumers.append(stamp_arrivals(stomp_client(broker)))
        consumers[-1].subscribe(q)

    def received():
        out = {d: [] for d in m.expected}
        for c in consumers:
            with c.cond:
                for frame in c.messages:
                    out[frame.headers["destination"]].append(frame)
        return out

    def missing():
        got = received()
        return {d: sorted(m.expected[d] - {f.body for f in got[d]}) for d in m.expected}

    wait_for(lambda: not any(missing().values()), timeout=DELAY_MS / 1000 + 15, message=missing)
    for d, frames in received().items():
        bodies = [f.body for f in frames]
        assert sorted(bodies) == sorted(m.expected[d]), (d, bodies)  # each exactly once
        for f in frames:
            if f.body in m.due:
                assert f.arrived_ms >= m.due[f.body] - EARLY_MS, \
                    f"{f.body} on {d}: {m.due[f.body] - f.arrived_ms} ms early"


@pytest.mark.parametrize("store", ["log", "sqlite"])
def test_scheduled_topic_message_is_delivered_once_across_a_restart(broker_factory, stomp_client,
                                                                   store):
    """Delivered and acked before the restart: its stored schedule is gone with it."""
    broker = broker_factory(store=store)
    topic, client_id, name = fresh("topic"), f"c-{uuid.uuid4().hex[:8]}", "once"
    subscriber = stomp_client(broker, connect_headers={"client-id": client_id})
    durable_subscribe(subscriber, topic, name)
    stomp_client(broker).send(topic, "scheduled", headers={"delay": "300", **PERSISTENT})
    assert [f.body for f in subscriber.wait_messages(1)] == ["scheduled"]
    subscriber.disconnect()
    broker.restart(sig=signal.SIGTERM)
    again = stomp_client(broker, connect_headers={"client-id": client_id})
    durable_subscribe(again, topic, name)
    stomp_client(broker).send(topic, "marker", headers=PERSISTENT)
    assert [f.body for f in again.wait_messages(1)] == ["marker"]
    assert_stays(lambda: again.count() == 1, 0.3, lambda: again.bodies())


def test_transacted_scheduled_topic_message_waits_for_its_time(broker, stomp_client):
    """COMMIT used to route a transaction's topic sends at once, schedule or not."""
    topic = fresh("topic")
    subscriber = stomp_client(broker)
    subscriber.subscribe(topic)
    producer = stomp_client(broker)
    producer.frame("BEGIN", {"transaction": "t1"})
    start = time.monotonic()
    producer.send(topic, "later", headers={"delay": "500", "transaction": "t1"}, wait=False)
    producer.frame("COMMIT", {"transaction": "t1"})
    [message] = subscriber.wait_messages(1, timeout=5.0)
    elapsed = time.monotonic() - start
    assert message.body == "later"
    assert elapsed >= 0.5 - EARLY_MS / 1000, f"delivered after {elapsed:.3f}s"


# --- item 10: times from client input ---------------------------------------------------------

def send_expecting_error(broker, headers, expected):
    """A SEND with `headers` gets an ERROR naming `expected`; the broker keeps serving."""
    with RawStomp(broker.port) as raw:
        raw.connect()
        raw.send_frame("SEND", [("destination", fresh()), ("receipt", "r1"), *headers.items()], b"x")
        frame = raw.read_frame()
        assert frame.command == "ERROR", frame
        text = (frame.header("message", "") + frame.body.decode()).replace("\n", " ")
        assert expected in text, frame
    assert_broker_works(broker.port)


OUT_OF_RANGE = ["9223372036854775000", str(INT64_MAX), str(2**63), str(2**64), "-1"]


@pytest.mark.parametrize("header", ["delay", "AMQ_SCHEDULED_DELAY"])
@pytest.mark.parametrize("value", OUT_OF_RANGE)
def test_huge_or_negative_delay_is_refused(broker, header, value):
    send_expecting_error(broker, {header: value}, header)


@pytest.mark.parametrize("value", ["9223372036854775000", str(INT64_MAX), str(2**63), str(2**64),
                                   "-1"])
def test_deliver_at_beyond_the_limit_is_refused(broker, value):
    send_expecting_error(broker, {"deliver-at": value}, "deliver-at")


def test_delay_limit_is_configurable(broker_factory, stomp_client):
    broker = broker_factory(config=config(core(max_schedule_delay_ms=1000)))
    send_expecting_error(broker, {"delay": "1001"}, "at most 1000 ms")
    send_expecting_error(broker, {"deliver-at": str(now_ms() + 60_000)}, "at most 1000 ms")
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    producer.send(queue, "at the limit", headers={"delay": "1000"})
    producer.send(queue, "in the past", headers={"deliver-at": "1"})
    assert [m.body for m in consumer.wait_messages(2, timeout=5.0)] == ["in the past",
                                                                       "at the limit"]


def test_far_deliver_at_is_held_without_spinning(broker, stomp_client):
    """A schedule a year ahead is kept (not delivered now) and its wake-up does not busy-loop."""
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    producer = stomp_client(broker)
    producer.send(queue, "next year", headers={"deliver-at": str(now_ms() + 364 * 86_400_000)})
    producer.send(queue, "now")
    assert consumer.wait_messages(1)[0].body == "now"
    before = broker_cpu_seconds(broker)
    assert_stays(lambda: consumer.count() == 1, 1.0, lambda: consumer.bodies())
    used = broker_cpu_seconds(broker) - before
    assert used < 0.5, f"the broker burnt {used:.2f}s of CPU in 1s holding one scheduled message"


def broker_cpu_seconds(broker):
    fields = open(f"/proc/{broker.proc.pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime + stime
    return ticks / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("value", [str(INT64_MAX), "9223372036854775000"])
def test_far_expires_means_never(broker, stomp_client, value):
    queue = fresh()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    stomp_client(broker).send(queue, "keeps", headers={"expires": value})
    message = consumer.wait_messages(1)[0]
    assert message.body == "keeps"
    assert message.headers.get("expires") == value


@pytest.mark.parametrize("value", [str(2**63), str(2**64), "-1"])
def test_expires_out_of_range_is_refused(broker, value):
    send_expecting_error(broker, {"expires": value}, "expires")


@pytest.mark.parametrize("timestamp", [str(INT64_MAX), "9223372036854775000"])
def test_policy_ttl_from_a_huge_timestamp_does_not_wrap(broker_factory, stomp_client, timestamp):
    """expires = timestamp + ttl_ms used to wrap negative: the message expired on arrival."""
    broker = broker_factory(config=config(policy("queue:ttl.>", ttl_ms=60_000)))
    queue = fresh("queue", "ttl")
    stomp_client(broker).send(queue, "kept", headers={"timestamp": timestamp, **PERSISTENT})
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    assert consumer.wait_messages(1, timeout=5.0)[0].body == "kept"


def test_huge_client_heart_beat_does_not_time_out_at_once(broker_factory):
    """2 x 2^31 ms wrapped to 0 in 32 bits: the broker closed the connection at its first tick."""
    broker = broker_factory(config="[stomp]\nheartbeat_ms = 200\n")
    with RawStomp(broker.port) as raw:
        # The client will send every 2^31 ms and wants the broker's beats every 100 ms.
        raw.connect(heartbeat="2147483648,100")
        frames = raw.idle(1.0)
        assert not raw.closed and not frames, frames
        assert raw.heartbeats, "the broker sent no heart-beat"
    assert_broker_works(broker.port)


@pytest.mark.parametrize("value", [str(2**32), "-1", str(2**64)])
def test_heart_beat_out_of_range_is_refused(broker, value):
    with RawStomp(broker.port) as raw:
        raw.send_frame("CONNECT", [("accept-version", "1.2"), ("host", "localhost"),
                                   ("heart-beat", f"{value},0")])
        frame = expect_error_and_close(raw)
        assert "heart-beat" in frame.header("message"), frame
    assert_broker_works(broker.port)


# MQTT's intervals are 32-bit seconds (keep-alive 16-bit): at their largest they must still mean
# "a long time", not wrap into "now", and a STOMP `expires` far past 2^32 s maps onto the largest
# MQTT 5 message expiry interval.
U32_MAX = 2**32 - 1


def test_mqtt_intervals_at_their_largest(broker, stomp_client):
    topic = f"hostile/{uuid.uuid4().hex[:8]}"
    with closing(raw.RawMqtt(broker.mqtt_port, version=5)) as sub, \
            closing(raw.RawMqtt(broker.mqtt_port, version=5)) as pub:
        sub.connect(f"sub-{uuid.uuid4().hex[:8]}", clean=False, keep_alive=65535,
                    props={"session_expiry_interval": U32_MAX})
        assert sub.subscribe([(topic, 1)]).reasons == [1]
        pub.connect(f"pub-{uuid.uuid4().hex[:8]}", keep_alive=65535,
                    will=(topic, "will", 0, False, {"will_delay_interval": U32_MAX}))
        pub.send(raw.publish(topic, "longest", qos=1, version=5,
                             props={"message_expiry_interval": U32_MAX}))
        assert pub.expect(raw.PUBACK).reason == 0
        got = sub.expect(raw.PUBLISH)
        assert got.payload == b"longest"
        assert U32_MAX - 5 <= got.props["message_expiry_interval"] <= U32_MAX, got.props
        sub.send(raw.ack(raw.PUBACK, got.packet_id, version=5))

        stomp_client(broker).send("/topic/" + topic.replace("/", "."), "from stomp",
                                  headers={"expires": str(INT64_MAX)})
        got = sub.expect(raw.PUBLISH)
        assert got.payload == b"from stomp"
        assert got.props["message_expiry_interval"] == U32_MAX, got.props
        # Neither the keep-alive nor the will delay fired: both connections still work.
        pub.send(raw.packet(raw.PINGREQ, 0, b""))
        pub.expect(raw.PINGRESP)
        sub.send(raw.packet(raw.PINGREQ, 0, b""))
        sub.expect(raw.PINGRESP)
