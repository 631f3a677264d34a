"""[journal] disk_free_limit_bytes (RabbitMQ's disk_free_limit): while the free space on the
store's disk is under it, publishers of persistent messages are held — the broker stops reading
their connection (TCP back-pressure), nothing is refused — and they resume, losing nothing, when
space returns. Non-persistent traffic keeps flowing. The alarm is logged once per transition,
shown in /admin/v1/overview and /metrics, and the limit changes live on SIGHUP.

A limit above any real disk (2^62 bytes) puts the broker in the alarm without filling a disk;
lowering it to 0 by SIGHUP is the space coming back. A second test fills a small tmpfs for real
(skipped, saying why, where the test may not mount one)."""

import json
import os
import shutil
import signal
import subprocess
import uuid

import pytest

from helpers.broker import carrier_bin
from helpers.http import request
from helpers.mqtt_clients import MqttClient
from helpers.raw_stomp import RawStomp
from helpers.wait import assert_stays, wait_for

ABOVE_ANY_DISK = 1 << 62


def overview_disk(b):
    r = request(b.http_port, "GET", "/admin/v1/overview")
    assert r.status == 200, r
    return json.loads(r.body)["disk"]


def metric(b, name):
    r = request(b.http_port, "GET", "/metrics")
    assert r.status == 200, r
    for line in r.body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics:\n{r.body.decode()[:2000]}")


def reload_limit(b, limit, wait_line):
    before = len(b.log())
    b.config_path.write_text(f"[journal]\ndisk_free_limit_bytes = {limit}\n")
    b.send_signal(signal.SIGHUP)
    wait_for(lambda: wait_line in b.log()[before:], 10, lambda: f"{wait_line!r} in:\n{b.log()[before:]}")


def receipts(raw, want, timeout=20.0):
    """Reads frames until every receipt id in `want` came; returns the other frames."""
    pending, others = set(want), []
    while pending:
        frame = raw.read_frame(timeout)
        if frame.command == "RECEIPT":
            pending.discard(frame.header("receipt-id"))
        else:
            others.append(frame)
    return others


def test_persistent_publishers_are_held_and_resume_when_space_returns(broker_factory):
    b = broker_factory(config=f"[journal]\ndisk_free_limit_bytes = {ABOVE_ANY_DISK}\n")
    wait_for(lambda: "disk alarm:" in b.log(), 10, lambda: f"the alarm line in:\n{b.log()}")
    disk = overview_disk(b)
    assert disk["watched"] is True and disk["alarm"] is True, disk
    assert disk["limit_bytes"] == ABOVE_ANY_DISK and disk["free_bytes"] > 0, disk
    assert metric(b, "carrier_disk_alarm") == 1
    assert metric(b, "carrier_disk_alarms_total") == 1

    queue = f"/queue/disk-{uuid.uuid4().hex[:8]}"
    with RawStomp(b.port) as producer, RawStomp(b.port) as other, RawStomp(b.port) as consumer:
        for raw in (producer, other, consumer):
            raw.connect()
        consumer.send_frame("SUBSCRIBE", [("destination", queue), ("id", "s"), ("ack", "auto"),
                                          ("receipt", "sub")])
        assert receipts(consumer, {"sub"}) == []
        # Ten persistent SENDs: none is read while the disk is short, so no receipt comes.
        for i in range(10):
            producer.send_frame("SEND", [("destination", queue), ("persistent", "true"), ("seq", str(i)),
                                         ("receipt", f"p{i}")], f"persistent {i}".encode())
        # Meanwhile a non-persistent message on another connection is served at once.
        other.send_frame("SEND", [("destination", queue), ("receipt", "np")], b"transient")
        assert receipts(other, {"np"}) == []
        got = consumer.read_frame(10)
        assert got.command == "MESSAGE" and got.body == b"transient", got
        assert producer.idle(1.0) == []  # no receipt for a persistent SEND while the alarm is on

        # An HTTP producer of a persistent message is told to come back later; a transient
        # one is taken.
        name = queue.split("/")[-1]
        r = request(b.http_port, "POST", f"/v1/queues/{name}/messages?persistent=true", body=b"h",
                    headers={"Content-Type": "text/plain"})
        assert r.status == 429 and r.headers.get("retry-after") == "1", r
        assert b"disk_free_limit_bytes" in r.body, r

        # Space returns (the limit lowered live): the held SENDs are read, stored, confirmed.
        reload_limit(b, 0, "SIGHUP: journal.disk_free_limit_bytes 0")
        assert receipts(producer, {f"p{i}" for i in range(10)}) == []
        bodies = []
        while len(bodies) < 10:
            frame = consumer.read_frame(10)
            assert frame.command == "MESSAGE", frame
            bodies.append(frame.body)
        assert bodies == [f"persistent {i}".encode() for i in range(10)]  # all, once, in order
    wait_for(lambda: "disk alarm cleared" in b.log(), 10, lambda: f"the cleared line in:\n{b.log()}")
    assert b.log().count("disk alarm:") == 1, b.log()
    assert b.log().count("disk alarm cleared") == 1, b.log()
    assert overview_disk(b)["alarm"] is False
    assert metric(b, "carrier_disk_alarm") == 0


def test_mqtt_qos1_is_held_and_qos0_flows(broker_factory):
    b = broker_factory(config=f"[journal]\ndisk_free_limit_bytes = {ABOVE_ANY_DISK}\n")
    wait_for(lambda: overview_disk(b)["alarm"], 10, "the disk alarm")
    topic = f"disk/{uuid.uuid4().hex[:8]}"
    sub = MqttClient(b.mqtt_port)
    pub = MqttClient(b.mqtt_port)
    try:
        sub.connect()
        sub.subscribe(topic, qos=1)
        pub.connect()
        pub.publish(topic, b"qos0", qos=0, wait=False)
        sub.wait_messages(1)
        held = pub.publish(topic, b"qos1", qos=1, wait=False)
        assert_stays(lambda: not held.is_published(), duration=1.0,
                     message="a PUBACK for a QoS 1 PUBLISH while the disk alarm is on")
        assert sub.count() == 1
        b.config_path.write_text("[journal]\ndisk_free_limit_bytes = 0\n")
        b.send_signal(signal.SIGHUP)
        wait_for(held.is_published, 10, "the PUBACK once the limit is lowered")
        sub.wait_messages(2)
        assert sub.payloads() == [b"qos0", b"qos1"]
    finally:
        pub.close_quietly()
        sub.close_quietly()


def test_memory_store_watches_no_disk(broker_factory):
    b = broker_factory(store="memory", config=f"[journal]\ndisk_free_limit_bytes = {ABOVE_ANY_DISK}\n")
    assert overview_disk(b) == {"watched": False}
    with RawStomp(b.port) as raw:
        raw.connect()
        raw.send_frame("SEND", [("destination", "/queue/m"), ("persistent", "true"), ("receipt", "r")], b"x")
        assert receipts(raw, {"r"}) == []


def test_a_full_small_disk_holds_and_freeing_space_resumes(broker_factory, tmp_path):
    """A real disk filling: a 16 MiB tmpfs holds the data dir, a filler file takes it under the
    limit, deleting the filler gives the space back."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        limit = 4 << 20
        b = broker_factory(start=False, config=f"[journal]\ndisk_free_limit_bytes = {limit}\n"
                                                "segment_bytes = 65536\n",
                           data_dir=mnt / "data")
        b.start()
        assert overview_disk(b)["alarm"] is False
        queue = f"/queue/full-{uuid.uuid4().hex[:8]}"
        filler = mnt / "filler"
        free = shutil.disk_usage(mnt).free
        with open(filler, "wb") as f:
            f.write(b"\0" * (free - limit // 2))  # leaves 2 MiB: under the limit
        wait_for(lambda: overview_disk(b)["alarm"], 10, "the disk alarm after the filler")
        with RawStomp(b.port) as producer, RawStomp(b.port) as consumer:
            producer.connect()
            consumer.connect()
            for i in range(5):
                producer.send_frame("SEND", [("destination", queue), ("persistent", "true"),
                                             ("receipt", f"p{i}")], b"y" * 1000)
            assert producer.idle(1.0) == []  # no receipt while the disk is full
            filler.unlink()
            assert receipts(producer, {f"p{i}" for i in range(5)}) == []
            consumer.send_frame("SUBSCRIBE", [("destination", queue), ("id", "s"), ("ack", "auto")])
            for i in range(5):
                frame = consumer.read_frame(10)
                assert frame.command == "MESSAGE" and frame.body == b"y" * 1000, frame
        b.stop()
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
