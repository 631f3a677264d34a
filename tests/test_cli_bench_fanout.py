"""`carrier bench fanout` against the real binary: every subscriber gets every message, over STOMP
and MQTT, paced or not, and the broker's CPU (user and system apart) and page faults are read when its pid is given. Rates are never
asserted (docs/performance.md measures them); what is checked is that the count is exact and
the report complete."""

import json
import subprocess

import pytest

from helpers.broker import carrier_bin


def fanout(*args, timeout=120):
    return subprocess.run([str(carrier_bin()), "bench", "fanout", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.parametrize("protocol", ["stomp", "mqtt"])
def test_every_subscriber_gets_every_message(broker_factory, unique, protocol):
    b = broker_factory()
    port = b.port if protocol == "stomp" else b.mqtt_port
    proc = fanout("--protocol", protocol, "--server", f"127.0.0.1:{port}", "--subscribers", 50, "--count", 40,
                  "--topic", unique(), "--pid", b.proc.pid, "--json", "-q")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["ok"] and report["errors"] == []
    assert (report["published"], report["expected"], report["received"]) == (40, 2000, 2000)
    assert report["broker_cpu_s"] is not None and report["broker_cpu_s"] >= 0
    # CPU is reported split, user and system (the kernel's share is what grows with subscribers).
    user, system = report["broker_user_ns_per_delivery"], report["broker_system_ns_per_delivery"]
    assert user >= 0 and system >= 0
    assert user + system == pytest.approx(report["broker_cpu_ns_per_delivery"])
    assert isinstance(report["broker_page_faults"], int) and report["broker_page_faults"] >= 0


def test_a_paced_publisher_sends_at_its_rate(broker_factory, unique):
    b = broker_factory()
    proc = fanout("--protocol", "mqtt", "--server", f"127.0.0.1:{b.mqtt_port}", "--subscribers", 10, "--count", 50,
                  "--rate", 100, "--topic", unique(), "--json", "-q")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["received"] == 500
    # The last batch is not sent before its time: 49 messages after the first at 100/s.
    assert report["publish_s"] >= 0.49, report


def test_a_rate_out_of_range_is_refused():
    for rate in (-1, 2e9):
        proc = fanout("--rate", rate, "--subscribers", 1)
        assert proc.returncode != 0 and "--rate" in proc.stderr, proc.stderr
