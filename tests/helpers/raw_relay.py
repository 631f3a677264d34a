"""Seed 000's relay by hand (docs/relay.md): the JXME binary message format written and read
byte by byte, and a thin peer that asks for an id, connects and polls with http.client, as a
J2ME device would."""

import struct

from helpers.http import request

MEDIA_TYPE = "application/x-jxta-msg"
RELAY_URL = "EndpointService:jxta-NetGroup/uuid-DEADBEEFDEAFBABAFEEDBABE0000000F05"


def encode(elements, namespaces=("proxy",)):
    """elements: (namespace, name, content) or (namespace, name, content, mime); namespace ""
    is id 0, "jxta" 1, the declared ones 2.. in order."""
    namespaces = list(namespaces)
    ids = {"": 0, "jxta": 1}
    for i, ns in enumerate(namespaces):
        ids[ns] = i + 2
    out = b"jxmg\x00" + struct.pack(">H", len(namespaces))
    for ns in namespaces:
        out += struct.pack(">H", len(ns)) + ns.encode()
    out += struct.pack(">H", len(elements))
    for e in elements:
        ns, name, content = e[:3]
        mime = e[3] if len(e) > 3 else None
        content = content.encode() if isinstance(content, str) else content
        out += b"jxel" + bytes([ids[ns], 1 if mime else 0]) + struct.pack(">H", len(name)) + name.encode()
        if mime:
            out += struct.pack(">H", len(mime)) + mime.encode()
        out += struct.pack(">I", len(content)) + content
    return out


class Message:
    def __init__(self, elements):
        self.elements = elements  # (namespace, name, content bytes, mime or None)

    def get(self, name, ns="proxy"):
        for e in self.elements:
            if e[0] == ns and e[1] == name:
                return e[2].decode()
        return None

    def __repr__(self):
        return f"<jxmg {[(e[0], e[1], e[2][:60]) for e in self.elements]}>"


def decode(data):
    """Every message in a response body."""
    out = []
    at = 0
    while at < len(data):
        assert data[at:at + 4] == b"jxmg" and data[at + 4] == 0, data[at:at + 16]
        at += 5
        (count,) = struct.unpack_from(">H", data, at)
        at += 2
        names = ["", "jxta"]
        for _ in range(count):
            (n,) = struct.unpack_from(">H", data, at)
            names.append(data[at + 2:at + 2 + n].decode())
            at += 2 + n
        (count,) = struct.unpack_from(">H", data, at)
        at += 2
        elements = []
        for _ in range(count):
            assert data[at:at + 4] == b"jxel"
            ns, flags = data[at + 4], data[at + 5]
            (n,) = struct.unpack_from(">H", data, at + 6)
            name = data[at + 8:at + 8 + n].decode()
            at += 8 + n
            mime = None
            if flags & 1:
                (m,) = struct.unpack_from(">H", data, at)
                mime = data[at + 2:at + 2 + m].decode()
                at += 2 + m
            if flags & 2:
                (m,) = struct.unpack_from(">H", data, at)
                at += 2 + m
            (c,) = struct.unpack_from(">I", data, at)
            elements.append((names[ns], name, data[at + 4:at + 4 + c], mime))
            at += 4 + c
        out.append(Message(elements))
    return out


def request_message(kind, request_id, fields=(), extra=(), namespaces=("proxy",)):
    """A proxy-namespace request: request, requestId, the fields, application elements."""
    elements = [("proxy", "request", kind), ("proxy", "requestId", str(request_id))]
    elements += [("proxy", k, v) for k, v in fields]
    elements += list(extra)
    return encode(elements, namespaces)


class Peer:
    """A thin client: pid, connect, then POSTs that carry requests and collect what waits."""

    def __init__(self, port, lease_ms=60000, headers=None):
        self.port = port
        self.headers = dict(headers or {})  # on every request (HTTP Basic where users are configured)
        self.base = f"http://127.0.0.1:{port}/{RELAY_URL}"
        r = request(port, "GET", f"/unknown-unknown?0,-1,{self.base}/pid", headers=self.headers)
        assert r.status == 200, r
        [m] = decode(r.body)
        assert m.get("response", "relay") == "pid", m
        self.id = m.get("peerid", "relay")
        self.lease = self.connect(lease_ms)
        self.next_id = 0

    def connect(self, lease_ms):
        r = request(self.port, "GET", f"/{self.id}?0,-1,{self.base}/connect,{lease_ms},keep,other",
                    headers=self.headers)
        assert r.status == 200, r
        [m] = decode(r.body)
        assert m.get("response", "relay") == "connected", m
        return int(m.get("lease", "relay"))

    def post(self, body=b"", wait_ms=0, max_messages=1, expect=200):
        headers = {"Content-Type": MEDIA_TYPE, **self.headers}
        if max_messages != 1:
            headers["Carrier-Relay-Max"] = str(max_messages)
        r = request(self.port, "POST", f"/{self.id}?{wait_ms},-1,{self.base}", body=body, headers=headers)
        assert r.status == expect, r
        return decode(r.body) if r.status == 200 else r

    def ask(self, kind, fields=(), extra=(), namespaces=("proxy",)):
        """Sends one request; returns its request id (its responses come in later polls)."""
        self.next_id += 1
        self.pending = self.post(request_message(kind, self.next_id, fields, extra, namespaces), max_messages=100)
        return str(self.next_id)

    def collect(self, request_id, count=1, timeout=10.0):
        """Polls until `count` messages answering `request_id` came (those already collected by
        ask() included); returns them. Other messages are kept in self.inbox."""
        import time
        got = [m for m in self.pending if m.get("requestId") == request_id]
        self.inbox = getattr(self, "inbox", []) + [m for m in self.pending if m.get("requestId") != request_id]
        self.pending = []
        deadline = time.monotonic() + timeout
        while len(got) < count:
            assert time.monotonic() < deadline, f"timed out waiting for {count} answers to {request_id}: {got}"
            for m in self.post(wait_ms=1000, max_messages=100):
                (got if m.get("requestId") == request_id else self.inbox).append(m)
        return got

    def call(self, kind, fields=(), extra=(), namespaces=("proxy",)):
        """A request and its one response."""
        [m] = self.collect(self.ask(kind, fields, extra, namespaces))
        return m
