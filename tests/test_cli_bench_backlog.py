"""`carrier bench backlog` against the real binary: it fills a queue, restarts the broker and
drains the queue, checking every message comes back once and in order. Rates and memory are
never asserted (they are measured in benchmarks, docs/performance.md); what is checked is that
the report is complete, that a backlog survives between runs against a running broker, and that
the drain's check catches a duplicate and a message out of order."""

import json
import subprocess

from helpers.broker import carrier_bin


def bench(*args, timeout=120):
    return subprocess.run([str(carrier_bin()), "bench", "backlog", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def check_memory(sample):
    assert sample["rss_kib"] > 0 and sample["hwm_kib"] >= sample["rss_kib"], sample
    assert sample["processes"] == 1


def test_fill_restart_drain_under_a_small_memory_budget(tmp_path):
    # 3,000 messages of 2 KiB against a 1 MiB budget: most of the backlog is paged out.
    config = tmp_path / "carrier.toml"
    config.write_text("[core]\nmemory_budget_bytes = 1048576\n")
    proc = bench("--count", 3000, "--size", 2048, "--config", config, "--window", 100, "--json", "-q")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["mode"] == "backlog" and report["errors"] == []
    assert report["command"].split()[1] == "serve" and str(config) in report["command"]
    assert [p["name"] for p in report["phases"]] == ["fill", "drain"]
    for phase in report["phases"]:
        assert phase["count"] == 3000 and phase["seconds"] > 0 and phase["rate"] > 0
        check_memory(phase["after"])
    assert 0 < report["restart_listen_ms"] <= report["restart_start_ms"]
    check_memory(report["ready"])
    assert (report["received"], report["duplicates"], report["out_of_order"], report["missing"]) == (3000, 0, 0, 0)
    assert report["restart_by"] == "SIGTERM"


def test_a_crash_between_fill_and_drain_loses_nothing(tmp_path):
    # Every receipted message comes back after a SIGKILL, from the live-set checkpoint and the
    # journal written after it.
    config = tmp_path / "carrier.toml"
    config.write_text("[core]\nmemory_budget_bytes = 1048576\n")
    data = tmp_path / "data"
    proc = bench("--count", 3000, "--size", 512, "--config", config, "--window", 100, "--crash",
                 "--data-dir", data, "--json", "-q")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["errors"] == [] and report["restart_by"] == "SIGKILL"
    assert (report["received"], report["duplicates"], report["out_of_order"], report["missing"]) == (3000, 0, 0, 0)


def test_non_persistent_fill_is_spilled_and_drained_without_a_restart(tmp_path):
    config = tmp_path / "carrier.toml"
    config.write_text("[core]\nmemory_budget_bytes = 1048576\nmemory_limit_bytes = 8388608\n")
    proc = bench("--count", 3000, "--size", 2048, "--config", config, "--window", 100, "--non-persistent",
                 "--no-restart", "--json", "-q")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(proc.stdout)
    assert report["errors"] == [] and report["restart_listen_ms"] is None
    assert (report["received"], report["duplicates"], report["out_of_order"], report["missing"]) == (3000, 0, 0, 0)
    # A restart would drop them: the mode refuses to plan one.
    refused = bench("--count", 10, "--non-persistent")
    assert refused.returncode != 0 and "--no-restart" in refused.stderr, refused.stderr


def test_a_backlog_left_in_a_running_broker_is_drained_by_a_second_run(broker_factory, unique):
    b = broker_factory()
    dest = unique()
    server = f"127.0.0.1:{b.port}"
    filled = bench("--server", server, "--pid", b.proc.pid, "--dest", dest, "--count", 500, "--size", 64,
                   "--no-drain", "--json", "-q")
    assert filled.returncode == 0, filled.stderr + filled.stdout
    report = json.loads(filled.stdout)
    assert [p["name"] for p in report["phases"]] == ["fill"]
    assert report["restart_listen_ms"] is None, "a running broker is not restarted"
    check_memory(report["phases"][0]["after"])

    drained = bench("--server", server, "--dest", dest, "--count", 500, "--no-fill", "--json", "-q")
    assert drained.returncode == 0, drained.stderr + drained.stdout
    report = json.loads(drained.stdout)
    assert [p["name"] for p in report["phases"]] == ["drain"]
    assert report["phases"][0]["after"] is None, "no --pid: no memory reading"
    assert (report["received"], report["missing"]) == (500, 0)


def test_the_drain_reports_duplicates_and_disorder(broker_factory, unique, stomp_client):
    b = broker_factory()
    dest = unique()
    # A stray message claiming to be number 50 queued ahead of the bench's own 0..99.
    c = stomp_client(b)
    c.send(dest, "stray", headers={"bench-seq": "50", "persistent": "true"})
    server = f"127.0.0.1:{b.port}"
    assert bench("--server", server, "--dest", dest, "--count", 100, "--no-drain", "-q").returncode == 0
    proc = bench("--server", server, "--dest", dest, "--count", 100, "--no-fill", "--json", "-q")
    assert proc.returncode == 1, proc.stdout
    report = json.loads(proc.stdout)
    assert report["duplicates"] == 1 and report["out_of_order"] == 50 and report["missing"] == 0, report
    assert any("duplicates" in e for e in report["errors"]), report["errors"]


def test_bad_arguments_are_refused_with_a_reason():
    for args, reason in ((("--count", 0), "--count"), (("--server", "10.1.2.3:61613"), "loopback"),
                         (("--server", "localhost"), "HOST:PORT"), (("--command", "true"), "--server")):
        proc = bench(*args)
        assert proc.returncode == 2, (args, proc.stdout)
        assert reason in proc.stderr, (args, proc.stderr)
