"""Limits per source (issue 16, docs/security.md "Limits"): one address past each cap is refused
in its protocol's words (STOMP ERROR, MQTT CONNACK 0x97 / 0x9F / 3, HTTP 429 / 503 with
Retry-After) while another address still gets in; a connection flood; refusals counted in
/metrics and logged at a bounded rate. 127.0.0.2 and up are loopback too: clients bind to them
to be other sources."""

import http.client
import json
import re
import socket
import time
import uuid

import pytest

from helpers.http import request
from helpers.raw_mqtt import CONNACK, RawMqtt, connect as mqtt_connect
from helpers.raw_stomp import RawStomp
from helpers.wait import wait_for


# Loopback clients are exempt from the per-address limits by default; these tests are the
# machine's "other hosts", so they turn that off.
LIMITED = "[limits]\nexempt_loopback = false\n"


def stomp_from(broker, source, **kw):
    """A STOMP connection from `source`: the CONNECTED or ERROR frame that answers CONNECT."""
    raw = RawStomp(broker.port, source=source, **kw)
    raw.send_frame("CONNECT", [("accept-version", "1.2"), ("host", "localhost")])
    return raw, raw.read_frame()


def mqtt_from(broker, source, version):
    """An MQTT CONNECT from `source`; returns the connection and its CONNACK."""
    raw = RawMqtt(broker.mqtt_port, version=version, source=source)
    raw.send(mqtt_connect(f"c-{uuid.uuid4().hex[:8]}", version=version))
    return raw, raw.expect(CONNACK)


def http_from(broker, source, path="/healthz"):
    c = http.client.HTTPConnection("127.0.0.1", broker.http_port, timeout=10, source_address=(source, 0))
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def refusals(broker, reason):
    text = request(broker.http_port, "GET", "/metrics").body.decode()
    m = re.search(r'^carrier_refusals_total\{reason="%s"\} (\d+)$' % reason, text, re.M)
    assert m, text
    return int(m.group(1))


def closed(raw):
    """Whether the broker closed `raw` (reads until EOF, a bounded wait)."""
    try:
        raw.sock.settimeout(5)
        while raw.sock.recv(65536):
            pass
        return True
    except OSError:
        return True


@pytest.mark.timeout(60)
def test_connections_per_source_refused_in_each_protocol_while_another_address_gets_in(broker_factory):
    broker = broker_factory(store="memory", config=LIMITED + "max_connections_per_source = 3\n")
    held = []
    try:
        for _ in range(3):
            raw, frame = stomp_from(broker, "127.0.0.2")
            assert frame.command == "CONNECTED", frame
            held.append(raw)

        raw, frame = stomp_from(broker, "127.0.0.2")
        assert frame.command == "ERROR", frame
        assert "too many connections" in frame.header("message"), frame
        assert closed(raw)

        v5, ack = mqtt_from(broker, "127.0.0.2", 5)
        assert ack.reason == 0x97, ack  # quota exceeded
        assert "too many connections" in ack.props.get("reason_string", ""), ack
        v4, ack = mqtt_from(broker, "127.0.0.2", 4)
        assert ack.reason == 3, ack  # server unavailable: 3.1.1 has no quota code

        status, headers, body = http_from(broker, "127.0.0.2")
        assert status == 429 and headers["retry-after"] == "1", (status, headers, body)
        assert headers["content-type"] == "application/problem+json"
        assert "too many connections" in json.loads(body)["detail"]

        # Another address is served meanwhile, in every protocol.
        other, frame = stomp_from(broker, "127.0.0.3")
        assert frame.command == "CONNECTED", frame
        other.close()
        m, ack = mqtt_from(broker, "127.0.0.3", 5)
        assert ack.reason == 0, ack
        m.close()
        assert http_from(broker, "127.0.0.3")[0] == 200

        # A place comes free when one of the three closes.
        held.pop().close()
        def admitted():
            raw, frame = stomp_from(broker, "127.0.0.2")
            raw.close()
            return frame.command == "CONNECTED"
        wait_for(admitted, 5, "a fourth connection from 127.0.0.2 once one closed")

        assert refusals(broker, "connections_per_source") >= 4
        assert "refused a connection from 127.0.0.2: connections_per_source limit" in broker.log()
    finally:
        for raw in held:
            raw.close()


@pytest.mark.timeout(60)
def test_the_total_cap_answers_503_and_stomp_error(broker_factory):
    # Loopback exempt (the default): its connections still count in the total.
    broker = broker_factory(store="memory", config="[limits]\nmax_connections = 3\n")
    held = []
    try:
        for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
            raw, frame = stomp_from(broker, source)
            assert frame.command == "CONNECTED", frame
            held.append(raw)
        raw, frame = stomp_from(broker, "127.0.0.5")
        assert frame.command == "ERROR" and frame.header("message") == "too many connections", frame
        assert "connections limit" in frame.body.decode(), frame
        status, headers, body = http_from(broker, "127.0.0.5")
        assert status == 503 and headers["retry-after"] == "1", (status, body)
        m, ack = mqtt_from(broker, "127.0.0.5", 5)
        assert ack.reason == 0x97, ack
        held.pop().close()
        wait_for(lambda: http_from(broker, "127.0.0.6")[0] == 200, 5, "a place once one closed")
    finally:
        for raw in held:
            raw.close()
    wait_for(lambda: request(broker.http_port, "GET", "/metrics").status == 200, 5, "metrics reachable")
    assert refusals(broker, "connections") >= 3


@pytest.mark.timeout(60)
def test_a_connection_flood_from_one_address_is_held_to_its_rate(broker_factory):
    broker = broker_factory(store="memory",
                            config=LIMITED + "connection_rate_per_source = 5\nconnection_burst_per_source = 5\n")
    admitted = refused = 0
    started = time.monotonic()
    for _ in range(40):
        raw, frame = stomp_from(broker, "127.0.0.7")
        if frame.command == "CONNECTED":
            admitted += 1
        else:
            assert frame.command == "ERROR" and frame.header("message") == "connection rate exceeded", frame
            refused += 1
        raw.close()
    elapsed = time.monotonic() - started
    # The burst, plus what the bucket refilled while the flood ran (5 a second).
    assert admitted <= 5 + 5 * elapsed + 1, (admitted, elapsed)
    assert refused >= 40 - (5 + 5 * elapsed + 1), (refused, elapsed)
    v5, ack = mqtt_from(broker, "127.0.0.7", 5)
    if ack.reason != 0:
        assert ack.reason == 0x9F, ack  # connection rate exceeded

    # Another address is not affected; the flooder gets in again at the rate.
    raw, frame = stomp_from(broker, "127.0.0.8")
    assert frame.command == "CONNECTED", frame
    raw.close()
    def flooder_admitted():
        raw, frame = stomp_from(broker, "127.0.0.7")
        raw.close()
        return frame.command == "CONNECTED"
    wait_for(flooder_admitted, 5, "127.0.0.7 admitted again once its bucket refilled", interval=0.25)

    assert refusals(broker, "connection_rate") >= refused
    log = broker.log()
    # Logged at a bounded rate: a line per 5 s per listener (STOMP's, MQTT's), not one per refusal.
    assert 1 <= log.count("refused a connection from 127.0.0.7") <= 2 * (2 + elapsed / 5), log


@pytest.mark.timeout(60)
def test_by_default_loopback_clients_are_not_limited_per_address(broker_factory):
    broker = broker_factory(store="memory", config="[limits]\nmax_connections_per_source = 5\n"
                                                   "connection_rate_per_source = 1\nconnection_burst_per_source = 1\n")
    held = []
    try:
        for _ in range(20):  # past both the cap and the rate, from one loopback address
            raw, frame = stomp_from(broker, "127.0.0.20")
            assert frame.command == "CONNECTED", frame
            held.append(raw)
    finally:
        for raw in held:
            raw.close()
    assert refusals(broker, "connections_per_source") == 0
    assert refusals(broker, "connection_rate") == 0


@pytest.mark.timeout(60)
def test_many_addresses_each_once_are_all_admitted_by_a_bounded_table(broker_factory):
    broker = broker_factory(store="memory", config=LIMITED + "max_sources = 10\nconnection_burst_per_source = 1\n"
                                                            "connection_rate_per_source = 1\n")
    # 200 addresses, one connection each: the table forgets the oldest, none is refused.
    for i in range(200):
        raw, frame = stomp_from(broker, f"127.1.{i // 250}.{i % 250 + 1}")
        assert frame.command == "CONNECTED", (i, frame)
        raw.close()
    assert refusals(broker, "connection_rate") == 0
    # An address seen again at once is still held to its rate (it is remembered while it is
    # among the most recent).
    raw, frame = stomp_from(broker, "127.1.0.200")
    raw.close()
    assert frame.command == "ERROR" and frame.header("message") == "connection rate exceeded", frame
