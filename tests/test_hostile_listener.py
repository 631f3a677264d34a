"""The listener out of file descriptors (issue 12): accept fails with EMFILE while the pending
connection stays queued, so an accept loop that retries at once spins shard 0 and floods the log.
It must back off (10 ms doubling to 1 s), log at a bounded rate, and accept again once
descriptors are free."""

import os
import resource
import socket
import time

import pytest

from helpers.raw_stomp import RawStomp, assert_broker_works
from helpers.wait import wait_for

# The broker needs about 20 descriptors idle (journal, epoll, eventfds, listeners, log); this
# leaves room for a few connections only.
NOFILE = 40


def low_nofile():
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def cpu_seconds(pid):
    """utime + stime of /proc/PID/stat, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # Fields after "(comm)" start at 3 (state): utime is 14, stime 15 (man 5 proc).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def accept_failures(broker):
    return broker.log(tail_lines=100000).count("accept failed")


@pytest.mark.timeout(60)
def test_out_of_descriptors_backs_off_and_recovers(broker_factory):
    broker = broker_factory(preexec_fn=low_nofile, store="memory")
    clients = []
    try:
        # Log in until the broker has no descriptor left for the next connection: the kernel
        # still completes the TCP handshake (backlog), but accept fails and CONNECT goes unanswered.
        for _ in range(NOFILE):
            raw = RawStomp(broker.port, timeout=2.0)
            clients.append(raw)
            raw.send_frame("CONNECT", [("accept-version", "1.2"), ("host", "localhost")])
            try:
                frame = raw.read_frame(timeout=2.0)
            except (AssertionError, socket.timeout, TimeoutError):
                break
            assert frame.command == "CONNECTED", frame
        else:
            pytest.fail(f"{NOFILE} connections accepted with RLIMIT_NOFILE={NOFILE}")
        wait_for(lambda: accept_failures(broker) >= 1, 5, lambda: f"an accept failure:\n{broker.log()}")

        # Out of descriptors for a while: the accept loop sleeps instead of spinning.
        pid = broker.proc.pid
        before_cpu, before_logs, started = cpu_seconds(pid), accept_failures(broker), time.monotonic()
        wait_for(lambda: time.monotonic() - started >= 3.0, 5, "3 s to pass", interval=0.1)
        used = cpu_seconds(pid) - before_cpu
        logged = accept_failures(broker) - before_logs
        assert used < 0.2, f"broker used {used:.2f} s of CPU in 3 s while out of descriptors"
        assert logged <= 1, f"{logged} accept warnings in 3 s:\n{broker.log(20)}"

        # Descriptors free again: the queued connection is accepted and served.
        waiting = clients.pop()
        for raw in clients:
            raw.close()
        clients = [waiting]
        frame = waiting.read_frame(timeout=5.0)
        assert frame.command == "CONNECTED", frame
        assert_broker_works(broker.port)
        wait_for(lambda: "accepting again" in broker.log(tail_lines=100000), 5,
                 lambda: f"the recovery logged:\n{broker.log(20)}")
    finally:
        for raw in clients:
            raw.close()
