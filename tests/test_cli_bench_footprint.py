"""`carrier bench footprint` against the real binary: it starts its own broker, opens the idle
connections and reports what it read. Speed and memory are never asserted (they are measured
in benchmarks); what is checked is that the report is complete and consistent."""

import json
import os
import subprocess

from helpers.broker import carrier_bin


def run_footprint(*args, timeout=120):
    proc = subprocess.run([str(carrier_bin()), "bench", "footprint", *args], capture_output=True, text=True,
                          timeout=timeout)
    return proc


def check_sample(sample):
    for field in ("rss_kib", "hwm_kib", "anon_kib", "file_kib", "shmem_kib", "threads", "processes"):
        assert isinstance(sample[field], int), (field, sample)
    assert sample["rss_kib"] > 0
    assert sample["hwm_kib"] >= sample["rss_kib"]
    assert sample["processes"] == 1
    assert sample["threads"] >= 1


def test_json_reports_every_reading_for_200_connections():
    proc = run_footprint("--connections", "200", "--settle", "0.2", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["mode"] == "footprint"
    assert report["protocol"] == "stomp"
    assert report["ok"] is True
    assert report["errors"] == []
    assert report["connections_requested"] == 200
    assert report["connections"] == 200
    assert report["pid"] > 0
    assert report["command"].split()[1] == "serve"
    assert 0 < report["listen_ms"] <= report["start_ms"]
    for name in ("idle", "loaded", "closed"):
        check_sample(report[name])
    assert isinstance(report["bytes_per_connection"], int)
    targets = report["targets"]
    assert targets["connections_for_target"] == 10000
    for name, limit in (("idle_rss_mib", 10), ("start_ms", 50), ("connections_rss_mib", 100)):
        assert targets[name]["limit"] == limit
        assert targets[name]["measured"] is not None
        assert targets[name]["met"] == (targets[name]["measured"] <= limit)
    assert targets["connections_rss_mib"]["extrapolated"] is True
    assert targets["idle_rss_mib"]["measured"] == report["idle"]["rss_kib"] / 1024
    assert not os.path.exists(f"/proc/{report['pid']}")  # the broker it started is stopped


def test_mqtt_connections():
    proc = run_footprint("--protocol", "mqtt", "--connections", "50", "--settle", "0.1", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["protocol"] == "mqtt"
    assert report["connections"] == 50
    assert report["ok"] is True


def test_pid_of_a_running_broker(broker):
    proc = run_footprint("--pid", str(broker.proc.pid), "--server", f"127.0.0.1:{broker.port}", "--connections", "20",
                         "--settle", "0.1", "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["pid"] == broker.proc.pid
    assert report["command"] is None
    assert report["start_ms"] is None
    assert report["targets"]["start_ms"]["met"] is None
    assert report["connections"] == 20
    assert broker.running()  # measured, not stopped


def test_text_report():
    proc = run_footprint("--connections", "10", "--settle", "0.1", "--quiet")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "carrier bench footprint: stomp, 10 idle connection(s)" in proc.stdout
    for line in ("start ", "idle ", "10 conn", "closed ", "result: "):
        assert line in proc.stdout, proc.stdout


def test_broker_that_is_not_there_fails():
    proc = run_footprint("--command", "sleep 30", "--server", "127.0.0.1:1", "--start-timeout", "0.3",
                         "--connections", "1", "--json", "--quiet")
    assert proc.returncode == 1, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["ok"] is False
    assert "not accepting" in report["errors"][0]


def test_usage_errors():
    assert run_footprint("--pid", "1").returncode == 2  # no --server
    assert run_footprint("--protocol", "amqp").returncode == 2
    assert run_footprint("--connections", "0").returncode == 2
