"""Bad input on GET /ws: refused upgrades get a status and a problem document; a bad frame
closes that WebSocket with the right close code (1002 protocol error, 1009 too big) and a
reason; everyone else, over TCP and over WebSocket, is unaffected."""

import json
import socket
import struct

import pytest

from helpers.raw_mqtt import assert_broker_works as assert_mqtt_works
from helpers.raw_stomp import assert_broker_works as assert_stomp_works
from helpers.raw_ws import BINARY, CLOSE, CONT, PING, TEXT, WsConnection, WsStomp, frame, read_http_response, \
    upgrade_request


def assert_ws_stomp_works(port):
    c = WsStomp(port)
    try:
        c.connect("1.2")
        c.send_frame("SUBSCRIBE", [("destination", "/queue/ws-health"), ("id", "0")])
        c.send_frame("SEND", [("destination", "/queue/ws-health")], b"ok")
        m = c.read_frame()
        assert m.command == "MESSAGE" and m.body == b"ok", m
    finally:
        c.close()


def assert_everyone_unaffected(broker):
    assert_stomp_works(broker.port)
    assert_mqtt_works(broker.mqtt_port)
    assert_ws_stomp_works(broker.http_port)


def upgrade(port, request):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        status, headers, body, _ = read_http_response(s)
    return status, headers, body


@pytest.mark.parametrize("protocols", ["chat, superchat", None, ""])
def test_unknown_or_missing_sub_protocol_is_400(broker, protocols):
    request, _ = upgrade_request(broker.http_port, protocols)
    status, headers, body = upgrade(broker.http_port, request)
    assert status == 400
    assert headers["content-type"] == "application/problem+json"
    assert "v12.stomp" in json.loads(body)["detail"]
    assert_everyone_unaffected(broker)


def test_get_ws_without_upgrade_is_426(broker):
    status, headers, body = upgrade(broker.http_port, b"GET /ws HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 426 and headers["upgrade"] == "websocket"
    assert "WebSocket" in json.loads(body)["detail"]


def test_post_ws_is_405(broker):
    status, headers, _ = upgrade(broker.http_port, b"POST /ws HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
    assert status == 405 and headers["allow"] == "GET"


def test_other_websocket_version_is_426(broker):
    request, _ = upgrade_request(broker.http_port)
    request = request.replace(b"Sec-WebSocket-Version: 13", b"Sec-WebSocket-Version: 8")
    status, headers, _ = upgrade(broker.http_port, request)
    assert status == 426 and headers["sec-websocket-version"] == "13"


def test_bad_key_is_400(broker):
    request, _ = upgrade_request(broker.http_port, key="c2hvcnQ=")
    status, _, body = upgrade(broker.http_port, request)
    assert status == 400 and "Sec-WebSocket-Key" in json.loads(body)["detail"]


def test_unmasked_frame_closes_with_1002(broker):
    c = WsConnection(broker.http_port)
    try:
        c.send(b"CONNECT\naccept-version:1.2\n\n\x00", TEXT, mask=False)
        code, reason = c.expect_close(1002)
        assert "masked" in reason
    finally:
        c.close()
    assert_everyone_unaffected(broker)


def test_length_2_63_closes_with_1009(broker):
    c = WsConnection(broker.http_port)
    try:
        c.send_raw(bytes([0x82, 0xFF]) + struct.pack(">Q", 1 << 63) + b"\x01\x02\x03\x04")
        code, reason = c.expect_close(1009)
        assert "exceeds" in reason
    finally:
        c.close()
    assert_everyone_unaffected(broker)


def test_frame_past_the_stomp_frame_limit_closes_with_1009(broker_factory):
    broker = broker_factory(config="[stomp]\nmax_frame_bytes = 4096\n")
    c = WsConnection(broker.http_port)
    try:
        # Only the header is sent: the length alone is refused, nothing is buffered first.
        c.send_raw(frame(BINARY, b"", length=4097)[:8])
        c.expect_close(1009)
    finally:
        c.close()
    assert_everyone_unaffected(broker)


@pytest.mark.parametrize("wire, why", [
    (frame(CONT, b"x"), "continuation"),
    (frame(BINARY, b"a", fin=False) + frame(BINARY, b"b"), "new message"),
    (frame(PING, b"p", fin=False), "fragmented"),
    (frame(PING, b"p" * 126), "125"),
    (frame(BINARY, b"x", rsv=0x40), "RSV"),
    (frame(0x3, b"x"), "opcode"),
])
def test_frames_rfc6455_forbids_close_with_1002(broker, wire, why):
    c = WsConnection(broker.http_port)
    try:
        c.send_raw(wire)
        code, reason = c.expect_close(1002)
        assert why in reason
    finally:
        c.close()
    assert_everyone_unaffected(broker)


def test_stomp_error_over_websocket_is_an_error_frame_then_close(broker):
    c = WsStomp(broker.http_port)
    try:
        c.send(b"NOT-A-COMMAND\n\n\x00")
        f = c.read_frame()
        assert f.command == "ERROR" and f.header("message")
        c.ws.expect_close(1000)
    finally:
        c.close()
    assert_everyone_unaffected(broker)


def test_a_peer_that_vanishes_mid_frame_leaves_no_trace(broker):
    c = WsConnection(broker.http_port)
    c.send_raw(frame(TEXT, b"CONNECT\naccept-version:1.2\n\n\x00" * 10)[:30])
    c.sock.shutdown(socket.SHUT_RDWR)
    c.close()
    assert_everyone_unaffected(broker)


def test_close_with_a_pending_ping_answer(broker):
    """A ping, then a close at once: the pong and the close both come, in order."""
    c = WsConnection(broker.http_port)
    try:
        c.send_raw(frame(PING, b"1") + frame(CLOSE, b"\x03\xe8"))
        opcode, payload = c.read_frame()
        assert (opcode, payload) == (0xA, b"1")
        c.expect_close(1000)
    finally:
        c.close()
