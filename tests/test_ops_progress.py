"""Progress on long work (docs/admin.md): purge and move of large queues run in chunks of 10000
on the queue's shard, log their progress and total, and answer how many; recovery at start-up
logs a progress line once a second (messages, segments) beside its final summary."""

import re
import signal
import time
import uuid

from helpers.broker import run_cli
from helpers.http import request
from helpers.wait import wait_for

N = 25000  # three chunks


def fill(broker, queue, count, persistent=False):
    args = ["send", f"/queue/{queue}", "--body", "x" * 20, "--count", str(count), "--receipt",
            "--server", f"127.0.0.1:{broker.port}", "--timeout", "60"]
    if persistent:
        args.append("--persistent")
    r = run_cli(*args, timeout=300)
    assert r.returncode == 0, r.stderr


def depth(broker, queue):
    items = request(broker.http_port, "GET", f"/admin/v1/destinations?filter={queue}").json()["items"]
    return {d["name"]: d["depth"] for d in items}.get(queue, 0)


def test_purge_of_a_large_queue_reports_how_many(broker_factory):
    b = broker_factory(store="memory")
    q = f"big{uuid.uuid4().hex[:8]}"
    fill(b, q, N)
    wait_for(lambda: depth(b, q) == N, timeout=30, message="the queue filled")
    r = request(b.http_port, "DELETE", f"/admin/v1/queues/{q}/messages", timeout=120)
    assert r.status == 200 and r.json() == {"purged": N}, r
    assert depth(b, q) == 0
    wait_for(lambda: re.search(rf"purge of queue:{q}: {N} message\(s\) in [\d.]+ s", b.log()),
             message="the purge's last log line")


def test_move_of_a_large_queue_reports_how_many_and_a_limit_stops_it(broker_factory):
    b = broker_factory(store="memory")
    src, dst = f"dlq{uuid.uuid4().hex[:8]}", f"back{uuid.uuid4().hex[:8]}"
    fill(b, src, N)
    wait_for(lambda: depth(b, src) == N, timeout=30, message="the queue filled")
    r = request(b.http_port, "POST", f"/admin/v1/queues/{src}/move?to={dst}&limit=15000", timeout=120)
    assert r.status == 200 and r.json() == {"moved": 15000}, r
    assert depth(b, src) == N - 15000 and depth(b, dst) == 15000
    r = request(b.http_port, "POST", f"/admin/v1/queues/{src}/move?to={dst}", timeout=120)
    assert r.status == 200 and r.json() == {"moved": N - 15000}, r
    assert depth(b, dst) == N
    wait_for(lambda: f"move of queue:{src} to queue:{dst}: {N - 15000} message(s)" in b.log(),
             message="the move's last log line")
    # A copy is one piece (its messages stay, so a second chunk would copy them again).
    r = request(b.http_port, "POST", f"/admin/v1/queues/{dst}/move?to={src}&copy=true", timeout=120)
    assert r.status == 200 and r.json() == {"copied": N}, r
    assert depth(b, dst) == N and depth(b, src) == N


def test_recovery_logs_progress_once_a_second(broker_factory):
    b = broker_factory(config="[journal]\nsegment_bytes = 1048576\n", shards=1)
    q = f"rec{uuid.uuid4().hex[:8]}"
    fill(b, q, 60000, persistent=True)
    b.stop()
    # The live-set checkpoint would spare the replay (and its progress) altogether.
    b.checkpoint.unlink()
    b.spawn()
    # Held still for over a second in the middle of recovery: the next check logs progress.
    wait_for(lambda: "recovering the log store" in b.log(), timeout=30, interval=0.001,
             message="recovery begins")
    b.send_signal(signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        wait_for(lambda: time.monotonic() - stopped > 1.3, timeout=5, interval=0.05, message="a pause")
    finally:
        b.send_signal(signal.SIGCONT)
    b.wait_ready()
    log = b.log()
    summary = re.search(r"recovered (\d+) live messages(?: \([^)]*\))?(?: and \d+ in \d+ tails)? from (\d+) segments",
                        log)
    assert summary and int(summary.group(1)) == 60000, log
    segments = int(summary.group(2))
    assert segments > 1
    journal_progress = r"journal recovery: segment (\d+) of (\d+): (\d+) from their index, (\d+) read"
    progress = re.findall(journal_progress, log) + \
        re.findall(r"recovery: (\d+) message\(s\) put back in their queues so far", log)
    assert progress, f"no progress line after a pause mid-recovery:\n{log}"
    for p in re.findall(journal_progress, log):
        assert int(p[1]) == segments and int(p[2]) + int(p[3]) <= int(p[0]) <= segments
    for p in re.findall(r"recovery: (\d+) message\(s\) put back", log):
        assert 0 < int(p) <= 60000
