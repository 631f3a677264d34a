"""A federation peer speaking the link protocol over a raw socket (docs/federation.md, "Frames"):
it dials a node, negotiates, establishes with the demand it is given, records the pushes it
receives (answering each "ok"), and sends control requests."""

import os
import socket
import struct
import threading
import time

NEGOTIATE, ESTABLISH, PUSH, SENDBACK = 1, 2, 3, 4
STOP_FORWARDING, RESTART_FORWARDING, SET_MAX_RATE = 5, 6, 7
RESULT = 0x80000000
MESSAGES_PER_SECOND = 1


def pstring(text):
    return text.encode() + b"\x00"


def node_property(entries):
    strings = []
    for key, values in entries:
        strings += [key, str(len(values)), *values]
    data = b"".join(pstring(s) for s in strings)
    return struct.pack(">ii", len(strings), len(data)) + data


def varint(n):
    out = b""
    while n >= 0x80:
        out += bytes([(n & 0x7F) | 0x80])
        n >>= 7
    return out + bytes([n])


def vstring(data):
    data = data.encode() if isinstance(data, str) else data
    return varint(len(data)) + data


def message_payload(msg_id, queue, body, persistent=True, reply_to=""):
    """Carrier's message in the store's encoding, version 1 (docs/storage.md): a queue message.
    `msg_id` is 16 bytes, hi then lo, big-endian (as the BasicMessage carries it)."""
    hi, lo = struct.unpack(">QQ", msg_id)
    flags = (1 if persistent else 0) | 2  # persistent, has body
    return (b"\x01" + struct.pack("<QQ", hi, lo) + b"\x00" + vstring(queue) + b"\x04" +
            struct.pack("<qq", int(time.time() * 1000), 0) + bytes([flags]) +
            vstring("") + vstring(reply_to) + vstring("") + vstring("") + varint(0) + vstring(body))


def push_body(msg_id, queue, body, persistent=True, ttl=5, session=1, origin=None):
    """A push request's body: BasicMessage, ForwarderImpl, session id."""
    payload = message_payload(msg_id, queue, body, persistent)
    basic = (struct.pack(">iiII", ttl, 0, len(payload), 0) + pstring(queue) + b"\x00" * 16 +
             (origin or b"\x00" * 16) + b"\x00" * 16 + msg_id + payload)
    forwarder = struct.pack(">i", 0) + pstring("") + pstring("")
    return basic + forwarder + struct.pack(">i", session)


def frame(operation, request_id, body=b""):
    return struct.pack(">III", len(body), operation, request_id) + body


class RawPeer:
    def __init__(self, port, demand=(), node_id=None, timeout=5.0, host="127.0.0.1"):
        self.node_id = node_id or os.urandom(16)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.cond = threading.Condition()
        self.send_lock = threading.Lock()  # the reader answers pushes while the test sends
        self.answers = {}
        self.pushes = []  # (monotonic time, BasicMessage selector) per push received
        self.closed = False
        self.next_rid = 1
        self.reader = threading.Thread(target=self._read_loop, daemon=True)
        self.reader.start()
        op, _ = self.request(NEGOTIATE, struct.pack(">Iii", 1, 1, -1) + b"\x00")
        assert op == RESULT | NEGOTIATE, op
        prop = node_property([("selectors", [k for k, _ in demand]),
                              ("distances", [str(d) for _, d in demand])])
        op, body = self.request(ESTABLISH, self.node_id + prop + struct.pack(">i", 1))
        assert op == RESULT | ESTABLISH, (op, body)
        self.far_id = body[:16]

    def _recv_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def _read_loop(self):
        try:
            while True:
                length, op, rid = struct.unpack(">III", self._recv_exact(12))
                body = self._recv_exact(length)
                if op & RESULT:
                    with self.cond:
                        self.answers[rid] = (op, body)
                        self.cond.notify_all()
                elif op == PUSH:
                    # BasicMessage: ttl, hops, payload length, stack size, then the selector.
                    selector = body[16:body.index(b"\x00", 16)].decode()
                    with self.cond:
                        self.pushes.append((time.monotonic(), selector))
                        self.cond.notify_all()
                    self._send(frame(RESULT, rid, b"ok\r\n"))
                elif op == ESTABLISH:
                    # The node's demand changed: it says so again; this peer's stays none.
                    self._send(frame(RESULT | ESTABLISH, rid, self.node_id + node_property([])))
                else:
                    self._send(frame(RESULT, rid, b"error: not here\r\n"))
        except (EOFError, OSError):
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def _send(self, data):
        with self.send_lock:
            self.sock.sendall(data)

    def send_frame(self, operation, body):
        rid = self.next_rid
        self.next_rid += 1
        self._send(frame(operation, rid, body))
        return rid

    def request(self, operation, body, timeout=5.0):
        """Sends a request and returns its answer (operation, body)."""
        rid = self.send_frame(operation, body)
        with self.cond:
            ok = self.cond.wait_for(lambda: rid in self.answers or self.closed, timeout)
        assert ok and rid in self.answers, f"no answer to operation {operation}"
        return self.answers.pop(rid)

    def control(self, operation, selector, target=None):
        """stopForwarding / restartForwarding of `selector` to `target` (default: this peer)."""
        return self.request(operation, (target or self.node_id) + pstring(selector))

    def push(self, msg_id, queue, body, **kwargs):
        """Pushes one queue message; returns the answer's text."""
        op, answer = self.request(PUSH, push_body(msg_id, queue, body, **kwargs))
        assert op == RESULT, op
        return answer.decode().rstrip("\r\n")

    def set_max_rate(self, rate, unit=MESSAGES_PER_SECOND):
        return self.request(SET_MAX_RATE, struct.pack(">II", rate, unit))

    def push_count(self):
        with self.cond:
            return len(self.pushes)

    def close(self):
        self.sock.close()
