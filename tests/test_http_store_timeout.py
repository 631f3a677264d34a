"""A persistent HTTP send whose store does not answer: 504 after http.send_timeout_ms (the
outcome is unknown: the message may still be stored), and the broker keeps serving. PostgreSQL
is the store that can be made to hang: its processes are stopped (SIGSTOP), not killed, so the
broker's write waits instead of failing. Skipped only without the PostgreSQL server binaries."""

import os
import signal
import subprocess
import uuid

import pytest

from helpers import postgres
from helpers.http import receive, request
from helpers.wait import wait_for


def cluster_pids(pg):
    with open(f"{pg.dir}/data/postmaster.pid") as f:
        postmaster = int(f.readline())
    children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True).stdout.split()
    return [postmaster, *map(int, children)]


@pytest.mark.timeout(90)
def test_persistent_send_is_504_when_the_store_does_not_answer(postgres_server, broker_factory):
    pg = postgres_server
    b = broker_factory(store="postgres", config=postgres.broker_config(postgres.unique_schema(),
                                                                        "[http]\nsend_timeout_ms = 500\n"),
                       extra_args=["--postgres", pg.url])
    q = f"w{uuid.uuid4().hex[:10]}"
    path = f"/v1/queues/{q}/messages?persistent=true"
    assert request(b.http_port, "POST", path, body=b"before").status == 201
    pids = cluster_pids(pg)
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        r = request(b.http_port, "POST", path, body=b"while it hangs", timeout=30)
        assert r.status == 504 and r.headers["content-type"] == "application/problem+json", r
        assert "send_timeout_ms" in r.json()["detail"]
        # Non-persistent sends and other requests do not wait for the store.
        assert request(b.http_port, "POST", f"/v1/queues/{q}-other/messages", body=b"x").status == 201
        assert b.running(), b.log()
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    wait_for(lambda: request(b.http_port, "POST", path, body=b"after", timeout=30).status == 201, 30,
             lambda: f"persistent sends not confirmed after the store answered again:\n{b.log()}", interval=0.2)
    bodies = [m["body"] for m in receive(b.http_port, q, "max=100&wait=1s")]
    # The 504's message was written, only late: it is there (the 504 said "may still be stored").
    assert bodies[0] == "before" and "after" in bodies, bodies
