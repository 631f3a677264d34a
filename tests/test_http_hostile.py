"""Hostile HTTP clients: a header trickled byte by byte (closed by the header timeout while
others are served), idle keep-alive connections, many idle connections at once, pipelined
requests, and connections that never finish a request counting against max_connecting."""

import select
import socket
import threading
import time
import uuid

import pytest

from helpers.http import Raw, receive, request, send
from helpers.wait import wait_for


def name():
    return f"x{uuid.uuid4().hex[:10]}"


@pytest.mark.timeout(60)
def test_trickled_header_is_cut_by_the_header_timeout(broker_factory):
    b = broker_factory(config="[http]\nheader_timeout_ms = 1000\n")
    line = b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
    stop = threading.Event()
    outcome = {}

    def trickle():
        with Raw(b.http_port, timeout=30) as raw:
            try:
                for byte in line:
                    # Stop trickling once the broker has answered (or closed).
                    if stop.is_set() or select.select([raw.sock], [], [], 0)[0]:
                        break
                    raw.send(bytes([byte]))
                    time.sleep(0.05)  # the attack itself: one byte at a time
                outcome["response"] = raw.read_response()
            except OSError as e:
                outcome["error"] = e
            outcome["closed"] = raw.closed()

    t = threading.Thread(target=trickle)
    t.start()
    # Meanwhile everyone else is served.
    q = name()
    send(b.http_port, q, b"others go on")
    assert [m["body"] for m in receive(b.http_port, q)] == ["others go on"]
    t.join(30)
    stop.set()
    assert not t.is_alive(), "the trickling connection was never cut"
    assert outcome.get("response") and outcome["response"][0] == 408, outcome
    assert outcome["closed"]


def test_idle_keep_alive_connection_is_closed(broker_factory):
    b = broker_factory(config="[http]\nidle_timeout_ms = 300\n")
    with Raw(b.http_port, timeout=10) as raw:
        raw.send(b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
        assert raw.read_response()[0] == 200
        assert raw.closed(), "an idle keep-alive connection must be closed after idle_timeout_ms"


@pytest.mark.timeout(60)
def test_many_idle_connections_do_not_stop_others(broker_factory):
    b = broker_factory(config="max_connecting = 5000\n")
    idle = [socket.create_connection(("127.0.0.1", b.http_port), timeout=10) for _ in range(500)]
    try:
        q = name()
        send(b.http_port, q, b"still served")
        assert [m["body"] for m in receive(b.http_port, q)] == ["still served"]
    finally:
        for s in idle:
            s.close()


def test_unfinished_requests_count_against_max_connecting(broker_factory):
    b = broker_factory(config="max_connecting = 3\n")
    held = [socket.create_connection(("127.0.0.1", b.http_port), timeout=10) for _ in range(3)]
    try:
        with Raw(b.http_port) as raw:
            status, headers, _ = raw.read_response()
            assert status == 503 and headers["retry-after"] == "1"
        # One finished request lets its connection out of the count.
        held[0].sendall(b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
        wait_for(lambda: request(b.http_port, "GET", "/v1/openapi.json").status == 200, 10,
                 "a slot once a held connection completed a request")
    finally:
        for s in held:
            s.close()


def test_pipelined_requests_are_answered_in_order(broker):
    q = name()
    reqs = b""
    for i in range(3):
        body = f"p{i}".encode()
        reqs += (f"POST /v1/queues/{q}/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
                 .encode() + body)
    reqs += f"GET /v1/queues/{q}/messages?max=10&wait=5s HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    reqs += b"GET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n"
    with Raw(broker.http_port) as raw:
        raw.send(reqs)
        statuses = [raw.read_response() for _ in range(5)]
    assert [s[0] for s in statuses] == [201, 201, 201, 200, 404]
    import json
    assert [m["body"] for m in json.loads(statuses[3][2])] == ["p0", "p1", "p2"]


def test_http_1_0_without_keep_alive_is_closed_after_the_response(broker):
    with Raw(broker.http_port) as raw:
        raw.send(b"GET /v1/openapi.json HTTP/1.0\r\n\r\n")
        status, headers, _ = raw.read_response()
        assert status == 200 and headers["connection"] == "close"
        assert raw.closed()
