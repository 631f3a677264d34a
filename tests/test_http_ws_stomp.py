"""STOMP over WebSocket on the HTTP listener's GET /ws (docs/http.md, "WebSocket"): the same
STOMP session as over TCP, carried in text or binary frames, a STOMP frame spanning WebSocket
messages and several frames sharing one; ping/pong and the close handshake; cross-protocol with
MQTT over TCP."""

import uuid

import websocket  # Debian's python3-websocket (websocket-client)

from helpers.mqtt_clients import MqttClient
from helpers.raw_stomp import encode_frame, parse_frame
from helpers.raw_ws import BINARY, CLOSE, PING, PONG, TEXT, WsStomp, frame


def dest(kind="queue"):
    return f"/{kind}/ws-{uuid.uuid4().hex[:8]}"


def subscribe(c, destination, sub_id="0"):
    c.send_frame("SUBSCRIBE", [("destination", destination), ("id", sub_id), ("receipt", "s" + sub_id)])
    r = c.read_frame()
    assert (r.command, r.header("receipt-id")) == ("RECEIPT", "s" + sub_id), r


def test_stomp_over_websocket_sends_and_receives(broker):
    c = WsStomp(broker.http_port, "v12.stomp")
    try:
        assert c.ws.protocol == "v12.stomp"
        connected = c.connect("1.2")
        assert connected.header("version") == "1.2"
        q = dest()
        subscribe(c, q)
        c.send_frame("SEND", [("destination", q), ("receipt", "r1")], b"hello over ws")
        got = {}
        for _ in range(2):
            f = c.read_frame()
            got[f.command] = f
        assert got["RECEIPT"].header("receipt-id") == "r1"
        assert got["MESSAGE"].body == b"hello over ws"
        assert got["MESSAGE"].header("destination") == q
    finally:
        c.close()


def test_the_client_order_of_sub_protocols_decides(broker):
    c = WsStomp(broker.http_port, "v11.stomp, v12.stomp")
    try:
        assert c.ws.protocol == "v11.stomp"
        c.connect("1.1")
    finally:
        c.close()


def test_binary_frames_and_a_binary_body(broker):
    body = bytes(range(256)) * 4
    c = WsStomp(broker.http_port, "v12.stomp", opcode=BINARY)
    try:
        c.connect("1.2")
        q = dest()
        subscribe(c, q)
        c.send_frame("SEND", [("destination", q), ("content-length", str(len(body)))], body)
        m = c.read_frame()
        assert m.command == "MESSAGE" and m.body == body
    finally:
        c.close()


def test_a_frame_may_span_messages_and_messages_may_share_a_frame(broker):
    c = WsStomp(broker.http_port, "v12.stomp")
    try:
        c.connect("1.2")
        q = dest()
        subscribe(c, q)
        first = encode_frame("SEND", [("destination", q)], b"one")
        # One STOMP frame in three WebSocket messages (the middle one fragmented in two frames).
        c.ws.send(first[:5], TEXT)
        c.ws.send(first[5:9], TEXT, fin=False)
        c.ws.send(first[9:12], 0x0)
        c.ws.send(first[12:], TEXT)
        # Two STOMP frames in one WebSocket message.
        both = encode_frame("SEND", [("destination", q)], b"two") + encode_frame("SEND", [("destination", q)], b"three")
        c.ws.send(both, TEXT)
        bodies = [c.read_frame().body for _ in range(3)]
        assert bodies == [b"one", b"two", b"three"]
    finally:
        c.close()


def test_ping_gets_pong_and_close_gets_close(broker):
    c = WsStomp(broker.http_port, "v12.stomp")
    try:
        c.connect("1.2")
        c.ws.send(b"are you there", PING)
        opcode, payload = c.ws.read_frame()
        assert (opcode, payload) == (PONG, b"are you there")
        c.ws.send(b"\x03\xe8", CLOSE)
        assert c.ws.expect_close(1000)[0] == 1000
    finally:
        c.close()


def test_websocket_client_library_speaks_stomp(broker):
    """A third-party client (websocket-client), text frames as stomp.js sends them."""
    ws = websocket.create_connection(f"ws://127.0.0.1:{broker.http_port}/ws", subprotocols=["v12.stomp"],
                                     timeout=5)
    try:
        ws.send(encode_frame("CONNECT", [("accept-version", "1.2"), ("host", "/")]).decode())
        connected = parse_frame(_read_stomp(ws))
        assert connected.command == "CONNECTED"
        q = dest()
        ws.send(encode_frame("SUBSCRIBE", [("destination", q), ("id", "a")]).decode())
        ws.send(encode_frame("SEND", [("destination", q)], b"via websocket-client").decode())
        message = parse_frame(_read_stomp(ws))
        assert message.command == "MESSAGE" and message.body == b"via websocket-client"
    finally:
        ws.close()


def _read_stomp(ws):
    data = b""
    while b"\x00" not in data:
        chunk = ws.recv()
        data += chunk if isinstance(chunk, bytes) else chunk.encode()
    return data[:data.index(b"\x00")]


def test_websocket_stomp_to_tcp_mqtt_and_back(broker):
    level = uuid.uuid4().hex[:8]
    mqtt = MqttClient(broker.mqtt_port)
    c = WsStomp(broker.http_port, "v12.stomp")
    try:
        mqtt.connect()
        mqtt.subscribe(f"wsx/{level}/out", qos=1)
        c.connect("1.2")
        subscribe(c, f"/topic/wsx.{level}.back")
        c.send_frame("SEND", [("destination", f"/topic/wsx.{level}.out"), ("receipt", "r")], b"from ws stomp")
        assert c.read_frame().command == "RECEIPT"
        mqtt.wait_messages(1)
        assert mqtt.payloads() == [b"from ws stomp"]
        mqtt.publish(f"wsx/{level}/back", b"from tcp mqtt", qos=1)
        m = c.read_frame()
        assert m.command == "MESSAGE" and m.body == b"from tcp mqtt"
    finally:
        c.close()
        mqtt.close_quietly()
