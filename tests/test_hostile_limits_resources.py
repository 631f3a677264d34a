"""Limits on what one client may take once connected (issue 16, docs/security.md "Limits"):
failed logins from one address slow that address only (a delay doubling per failure, bounded,
then a refusal without a check), 100,000 new destinations from one client, a subscription
flood over STOMP and MQTT, and an optional message rate that slows a producer without
refusing it. Each refusal is counted in /metrics."""

import re
import time
import uuid

import pytest

from helpers.http import basic, request
from helpers.raw_mqtt import PINGREQ_BYTES, PINGRESP, PUBACK, RawMqtt, publish as mqtt_publish
from helpers.raw_stomp import RawStomp, encode_frame
from helpers.users import passwd_line
from helpers.wait import wait_for


def metric(broker, name, labels="", headers=None):
    text = request(broker.http_port, "GET", "/metrics", headers=headers).body.decode()
    m = re.search(r"^%s%s (\d+)$" % (re.escape(name), re.escape(labels)), text, re.M)
    assert m, (name, labels, text)
    return int(m.group(1))


def refusals(broker, reason, headers=None):
    return metric(broker, "carrier_refusals_total", '{reason="%s"}' % reason, headers)


def timed_login(broker, source, user, password):
    """(seconds until the answer, the frame) for a STOMP CONNECT from `source`."""
    raw = RawStomp(broker.port, source=source, timeout=30)
    try:
        started = time.monotonic()
        raw.send_frame("CONNECT", [("accept-version", "1.2"), ("host", "localhost"),
                                   ("login", user), ("passcode", password)])
        frame = raw.read_frame(timeout=30)
        return time.monotonic() - started, frame
    finally:
        raw.close()


@pytest.mark.timeout(90)
def test_a_login_flood_from_one_address_slows_only_that_address(broker_factory):
    # 100 ms doubling per failure up to 3.2 s; six failures tolerated (a long window, so none
    # drains during the test), then refused without a check.
    broker = broker_factory(store="memory", start=False, config=(
        '[auth]\nusers_file = "users.txt"\nfailure_delay_ms = 100\nfailure_delay_max_ms = 3200\n'
        "source_failure_limit = 6\nfailure_window_ms = 600000\n"))
    (broker.workdir / "users.txt").write_text(passwd_line("alice", "wonderland") + "\n")
    broker.start()

    delays = []
    for _ in range(6):
        took, frame = timed_login(broker, "127.0.0.9", "alice", "guess")
        assert frame.command == "ERROR", frame
        delays.append(took)
    # Each failure waits twice as long as the one before (lower bounds: the load only adds).
    for i, expected in enumerate([0.1, 0.2, 0.4, 0.8, 1.6, 3.2]):
        assert delays[i] >= expected * 0.95, delays
    assert delays[5] > 2 * delays[1], delays

    # Over its budget: answered at once, without a password check.
    took, frame = timed_login(broker, "127.0.0.9", "alice", "wonderland")
    assert frame.command == "ERROR" and "too many failed logins" in frame.header("message"), frame
    assert took < delays[5], (took, delays)

    # Another address is not slowed by the first one's record: its first failure costs the base.
    took, frame = timed_login(broker, "127.0.0.10", "alice", "guess")
    assert frame.command == "ERROR", frame
    assert took < delays[5] / 2, (took, delays)
    took, frame = timed_login(broker, "127.0.0.11", "alice", "wonderland")
    assert frame.command == "CONNECTED", frame

    assert refusals(broker, "login_failures", basic("alice", "wonderland")) >= 1


@pytest.mark.timeout(90)
def test_one_hundred_thousand_destinations_from_one_client_hit_the_cap(broker_factory):
    broker = broker_factory(store="memory", config="[limits]\nmax_destinations = 50\n")
    prefix = f"flood{uuid.uuid4().hex[:6]}"
    flooder = RawStomp(broker.port, source="127.0.0.12", timeout=30)
    flooder.connect()
    frames = b"".join(encode_frame("SEND", [("destination", f"/queue/{prefix}.{i}")], b"x")
                      for i in range(100_000))
    try:
        flooder.send(frames)
    except OSError:
        pass  # closed by the broker while we were still writing: what we expect
    error = flooder.read_frame(timeout=30)
    assert error.command == "ERROR", error
    assert "max_destinations" in error.header("message", "") + error.body.decode(), error

    # The broker holds at most the cap (shards checking at once may pass it by one each).
    held = metric(broker, "carrier_destinations")
    assert 40 <= held <= 52, held
    assert metric(broker, "carrier_destinations_limit") == 50
    assert refusals(broker, "destinations") >= 1

    # Everyone else keeps working on the destinations that exist (which ones were made first
    # depends on which shard got there first: the admin API says).
    listing = request(broker.http_port, "GET", f"/admin/v1/destinations?filter={prefix}&limit=1").json()
    assert listing["total"] == held, listing
    existing = "/queue/" + listing["items"][0]["name"]
    other = RawStomp(broker.port, source="127.0.0.13")
    other.connect()
    other.send_frame("SEND", [("destination", existing), ("receipt", "r1")], b"y")
    answer = other.read_frame()
    assert answer.command == "RECEIPT", answer
    other.send_frame("SUBSCRIBE", [("destination", existing), ("id", "s"), ("ack", "auto")])
    assert other.read_frame().command == "MESSAGE"
    other.close()


@pytest.mark.timeout(60)
def test_a_stomp_subscription_flood_is_refused_past_the_cap(broker_factory):
    broker = broker_factory(store="memory", config="[stomp]\nmax_subscriptions = 50\n")
    raw = RawStomp(broker.port, source="127.0.0.14")
    raw.connect()
    try:
        raw.send(b"".join(encode_frame("SUBSCRIBE", [("destination", f"/topic/t.{i}"), ("id", f"s{i}")])
                          for i in range(1000)))
    except OSError:
        pass
    error = raw.read_frame(timeout=10)
    assert error.command == "ERROR" and "subscriptions" in error.header("message"), error
    assert "at most 50 subscriptions" in error.body.decode() + error.header("message"), error
    assert refusals(broker, "subscriptions") >= 1
    assert "SUBSCRIBE refused: 50 subscriptions held" in broker.log()
    other = RawStomp(broker.port, source="127.0.0.15")
    other.connect()
    other.send_frame("SUBSCRIBE", [("destination", "/topic/t.1"), ("id", "s"), ("receipt", "r")])
    assert other.read_frame().command == "RECEIPT"
    other.close()


@pytest.mark.timeout(60)
def test_an_mqtt_subscription_flood_gets_quota_exceeded_and_keeps_the_connection(broker_factory):
    broker = broker_factory(store="memory", config="[mqtt]\nmax_subscriptions_per_session = 50\n")
    raw = RawMqtt(broker.mqtt_port, version=5, source="127.0.0.16")
    raw.connect("flood")
    ack = raw.subscribe([f"t/{i}" for i in range(60)])
    assert ack.reasons[:50] == [0] * 50 and ack.reasons[50:] == [0x97] * 10, ack.reasons
    raw.send(PINGREQ_BYTES)
    assert raw.expect(PINGRESP)
    v4 = RawMqtt(broker.mqtt_port, version=4, source="127.0.0.16")
    v4.connect("flood4")
    ack = v4.subscribe([f"t/{i}" for i in range(51)])
    assert ack.reasons[-1] == 0x80 and ack.reasons[:50] == [0] * 50, ack.reasons
    assert refusals(broker, "subscriptions") >= 11
    raw.close()
    v4.close()


@pytest.mark.timeout(60)
def test_the_message_rate_slows_a_producer_without_refusing_it(broker_factory):
    broker = broker_factory(store="memory", config="[limits]\nmax_messages_per_second = 20\nmessage_burst = 20\n")
    name = f"/queue/rate{uuid.uuid4().hex[:6]}"
    producer = RawStomp(broker.port, source="127.0.0.17", timeout=30)
    producer.connect()
    started = time.monotonic()
    producer.send(b"".join(encode_frame("SEND", [("destination", name)], b"x") for _ in range(99)) +
                  encode_frame("SEND", [("destination", name), ("receipt", "last")], b"x"))
    # Meanwhile another connection sends at once: the limit is per connection.
    other = RawStomp(broker.port, source="127.0.0.18", timeout=30)
    other.connect()
    other_started = time.monotonic()
    other.send_frame("SEND", [("destination", name + ".other"), ("receipt", "o")], b"y")
    assert other.read_frame(timeout=30).command == "RECEIPT"
    other_took = time.monotonic() - other_started
    receipt = producer.read_frame(timeout=30)
    took = time.monotonic() - started
    assert receipt.command == "RECEIPT" and receipt.header("receipt-id") == "last", receipt
    # 20 at once, then 20 a second: the other 80 take at least 4 s.
    assert took >= 3.9, took
    assert other_took < took, (other_took, took)
    consumer = RawStomp(broker.port, source="127.0.0.19")
    consumer.connect()
    consumer.send_frame("SUBSCRIBE", [("destination", name), ("id", "s"), ("ack", "auto")])
    for _ in range(100):  # nothing was dropped
        assert consumer.read_frame(timeout=10).command == "MESSAGE"
    consumer.close()
    producer.close()
    other.close()


@pytest.mark.timeout(60)
def test_the_message_rate_holds_back_mqtt_publishes_too(broker_factory):
    broker = broker_factory(store="memory", config="[limits]\nmax_messages_per_second = 10\nmessage_burst = 5\n")
    raw = RawMqtt(broker.mqtt_port, version=5, source="127.0.0.21", timeout=30)
    raw.connect("rate")
    started = time.monotonic()
    raw.send(b"".join(mqtt_publish("r/t", b"x", qos=1, packet_id=i, version=5) for i in range(1, 26)))
    acks = [raw.expect(PUBACK, timeout=30) for _ in range(25)]
    took = time.monotonic() - started
    assert all(a.reason < 0x80 for a in acks), acks  # none refused (0x10: no subscriber, a success)
    assert took >= 1.9, took  # 5 at once, then 10 a second: the other 20 take 2 s
    raw.close()
