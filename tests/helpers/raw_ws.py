"""A hand-made WebSocket client (RFC 6455) for GET /ws: the handshake, masked frames of any
shape (including ones a real client will not send: unmasked, 2^63 long), and the broker's frames
read back. `WsStomp` and `WsMqtt` are helpers.raw_stomp's RawStomp and helpers.raw_mqtt's
RawMqtt carried over it: the same frame and packet code, over a WebSocket instead of TCP.
"""

import base64
import hashlib
import os
import socket
import struct
import time

from helpers.raw_mqtt import RawMqtt
from helpers.raw_stomp import RawStomp

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def frame(opcode, payload=b"", fin=True, mask=True, length=None, rsv=0):
    """One client frame; `length` overrides the length field (a lie about the payload)."""
    n = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | rsv | opcode])
    mask_bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([mask_bit | 127]) + struct.pack(">Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def upgrade_request(port, protocols="v12.stomp", path="/ws", key=None, extra=""):
    key = key or base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if protocols is not None:
        lines.append(f"Sec-WebSocket-Protocol: {protocols}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode(), key


def read_http_response(sock, timeout=5.0):
    """Status, lower-case headers and body (by Content-Length) of one HTTP response; the bytes
    after it are returned too (WebSocket frames that followed a 101)."""
    deadline = time.monotonic() + timeout
    buf = b""
    while b"\r\n\r\n" not in buf:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        assert chunk, f"closed before a response; got {buf!r}"
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    length = int(headers.get("content-length", "0")) if status != 101 else 0
    while len(rest) < length:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        assert chunk, "closed inside a response body"
        rest += chunk
    return status, headers, rest[:length], rest[length:]


class WsConnection:
    """One upgraded connection: send frames, read the broker's frames."""

    def __init__(self, port, protocols="v12.stomp", timeout=5.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        request, key = upgrade_request(port, protocols)
        self.sock.sendall(request)
        status, headers, body, self.buf = read_http_response(self.sock, timeout)
        assert status == 101, f"upgrade refused: {status} {headers} {body!r}"
        expected = base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()
        assert headers.get("sec-websocket-accept") == expected, headers
        self.protocol = headers.get("sec-websocket-protocol")
        self.closed = False
        self.close_frame = None  # (code, reason) of the broker's close frame

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, payload, opcode=BINARY, **kwargs):
        self.sock.sendall(frame(opcode, payload, **kwargs))

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout()
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            chunk = b""
        if not chunk:
            self.closed = True
            raise ConnectionError("the broker closed the TCP connection")
        self.buf += chunk

    def read_frame(self, timeout=5.0):
        """(opcode, payload) of the broker's next frame. Server frames are never masked."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 2:
                b0, b1 = self.buf[0], self.buf[1]
                assert b1 & 0x80 == 0, "a server frame must not be masked"
                n, pos = b1 & 0x7F, 2
                if n == 126 and len(self.buf) >= 4:
                    n, pos = struct.unpack(">H", self.buf[2:4])[0], 4
                elif n == 127 and len(self.buf) >= 10:
                    n, pos = struct.unpack(">Q", self.buf[2:10])[0], 10
                if (b1 & 0x7F) < 126 or pos > 2:
                    if len(self.buf) >= pos + n:
                        payload = self.buf[pos:pos + n]
                        self.buf = self.buf[pos + n:]
                        opcode = b0 & 0x0F
                        if opcode == CLOSE:
                            code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                            self.close_frame = (code, payload[2:].decode("utf-8", "replace"))
                        return opcode, payload
            self._fill(deadline)

    def expect_close(self, code, timeout=5.0):
        """Reads until the broker's close frame (which must carry `code`), then its TCP close."""
        deadline = time.monotonic() + timeout
        while self.close_frame is None:
            self.read_frame(max(0.01, deadline - time.monotonic()))
        assert self.close_frame[0] == code, f"expected close code {code}, got {self.close_frame}"
        while not self.closed:
            try:
                self._fill(deadline)
            except ConnectionError:
                break
            except socket.timeout:
                raise AssertionError("the broker sent a close frame but kept the connection open") from None
        return self.close_frame

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class WsStomp(RawStomp):
    """RawStomp over a WebSocket: each send() is one frame (`opcode`), and what the broker's
    frames carry is read as the STOMP byte stream."""

    def __init__(self, port, protocols="v12.stomp", opcode=TEXT, timeout=5.0):
        self.ws = WsConnection(port, protocols, timeout)
        self.sock = self.ws.sock
        self.buf = b""
        self.version = "1.2"
        self.heartbeats = []
        self.closed = False
        self.opcode = opcode

    def send(self, data):
        self.ws.send(data, self.opcode)

    def _recv(self, deadline):
        try:
            opcode, payload = self.ws.read_frame(max(0.0, deadline - time.monotonic()))
        except ConnectionError:
            self.closed = True
            return b""
        if opcode == CLOSE:
            self.closed = True
            return b""
        return payload if opcode in (TEXT, BINARY, CONT) else b""


class WsMqtt(RawMqtt):
    """RawMqtt over a WebSocket (sub-protocol mqtt, binary frames)."""

    def __init__(self, port, version=4, timeout=5.0):
        self.version = version
        self.ws = WsConnection(port, "mqtt", timeout)
        self.sock = self.ws.sock
        self.buffer = b""
        self.closed = False

    def send(self, data):
        self.ws.send(data, BINARY)

    def _fill(self, deadline):
        if deadline - time.monotonic() <= 0:
            raise TimeoutError("no packet from the broker in time")
        try:
            opcode, payload = self.ws.read_frame(deadline - time.monotonic())
        except socket.timeout:
            raise TimeoutError("no packet from the broker in time") from None
        except ConnectionError:
            self.closed = True
            raise
        if opcode == CLOSE:
            self.closed = True
            raise ConnectionError("the broker closed the WebSocket")
        if opcode in (BINARY, CONT):
            self.buffer += payload
