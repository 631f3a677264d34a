"""A raw-socket MQTT peer for packets real clients will not send (Mosquitto's raw-packet tests):
build bytes by hand (3.1, 3.1.1 and 5.0), read packets back with a timeout, decode the few fields
tests look at, including MQTT 5 properties.
"""

import socket
import struct
import time

from helpers.wait import wait_for

# Packet types
CONNECT, CONNACK, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP = 1, 2, 3, 4, 5, 6, 7
SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, PINGREQ, PINGRESP, DISCONNECT, AUTH = range(8, 16)

# MQTT 5 property ids and their types
PROPS = {
    0x01: ("payload_format_indicator", "byte"), 0x02: ("message_expiry_interval", "u32"),
    0x03: ("content_type", "str"), 0x08: ("response_topic", "str"), 0x09: ("correlation_data", "bin"),
    0x0B: ("subscription_identifier", "varint"), 0x11: ("session_expiry_interval", "u32"),
    0x12: ("assigned_client_identifier", "str"), 0x13: ("server_keep_alive", "u16"),
    0x15: ("authentication_method", "str"), 0x16: ("authentication_data", "bin"),
    0x17: ("request_problem_information", "byte"), 0x18: ("will_delay_interval", "u32"),
    0x19: ("request_response_information", "byte"), 0x1A: ("response_information", "str"),
    0x1C: ("server_reference", "str"), 0x1F: ("reason_string", "str"), 0x21: ("receive_maximum", "u16"),
    0x22: ("topic_alias_maximum", "u16"), 0x23: ("topic_alias", "u16"), 0x24: ("maximum_qos", "byte"),
    0x25: ("retain_available", "byte"), 0x26: ("user_property", "pair"), 0x27: ("maximum_packet_size", "u32"),
    0x28: ("wildcard_subscription_available", "byte"), 0x29: ("subscription_identifier_available", "byte"),
    0x2A: ("shared_subscription_available", "byte"),
}
PROP_IDS = {name: (pid, kind) for pid, (name, kind) in PROPS.items()}


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def string(s):
    b = s.encode() if isinstance(s, str) else bytes(s)
    return struct.pack("!H", len(b)) + b


def properties(props=None):
    """Encodes a property block from {name: value} (user_property: list of (k, v);
    subscription_identifier: int or list)."""
    body = bytearray()
    for name, value in (props or {}).items():
        pid, kind = PROP_IDS[name]
        values = value if (kind == "pair" or (name == "subscription_identifier" and isinstance(value, list))) \
            else [value]
        for v in values:
            body.append(pid)
            if kind == "byte":
                body.append(v)
            elif kind == "u16":
                body += struct.pack("!H", v)
            elif kind == "u32":
                body += struct.pack("!I", v)
            elif kind == "varint":
                body += varint(v)
            elif kind in ("str", "bin"):
                body += string(v)
            elif kind == "pair":
                body += string(v[0]) + string(v[1])
    return varint(len(body)) + bytes(body)


def packet(ptype, flags, body):
    return bytes([(ptype << 4) | flags]) + varint(len(body)) + body


def connect(client_id="raw", version=4, clean=True, keep_alive=60, props=None, will=None, username=None,
            password=None):
    """CONNECT; version 3 (MQIsdp), 4 (3.1.1) or 5. will = (topic, payload, qos, retain[, props])."""
    name = "MQIsdp" if version == 3 else "MQTT"
    flags = 0x02 if clean else 0
    if will:
        flags |= 0x04 | (will[2] << 3) | (0x20 if will[3] else 0)
    if username is not None:
        flags |= 0x80
    if password is not None:
        flags |= 0x40
    body = string(name) + bytes([version, flags]) + struct.pack("!H", keep_alive)
    if version == 5:
        body += properties(props)
    body += string(client_id)
    if will:
        if version == 5:
            body += properties(will[4] if len(will) > 4 else None)
        body += string(will[0]) + string(will[1])
    if username is not None:
        body += string(username)
    if password is not None:
        body += string(password)
    return packet(CONNECT, 0, body)


def publish(topic, payload=b"", qos=0, packet_id=1, retain=False, dup=False, version=4, props=None):
    flags = (qos << 1) | (0x01 if retain else 0) | (0x08 if dup else 0)
    body = string(topic)
    if qos:
        body += struct.pack("!H", packet_id)
    if version == 5:
        body += properties(props)
    body += payload.encode() if isinstance(payload, str) else payload
    return packet(PUBLISH, flags, body)


def ack(ptype, packet_id, version=4, reason=None, props=None):
    """PUBACK / PUBREC / PUBREL / PUBCOMP."""
    body = struct.pack("!H", packet_id)
    if version == 5 and (reason is not None or props):
        body += bytes([reason or 0]) + (properties(props) if props else b"")
    return packet(ptype, 0x02 if ptype == PUBREL else 0, body)


def subscribe(filters, packet_id=1, version=4, props=None):
    """filters: list of (filter, options byte) or filter strings (QoS 0)."""
    body = struct.pack("!H", packet_id)
    if version == 5:
        body += properties(props)
    for f in filters:
        if isinstance(f, str):
            f = (f, 0)
        body += string(f[0]) + bytes([f[1]])
    return packet(SUBSCRIBE, 0x02, body)


def unsubscribe(filters, packet_id=1, version=4):
    body = struct.pack("!H", packet_id)
    if version == 5:
        body += properties()
    for f in filters:
        body += string(f)
    return packet(UNSUBSCRIBE, 0x02, body)


def disconnect(version=4, reason=0, props=None):
    if version != 5 or (reason == 0 and not props):
        return packet(DISCONNECT, 0, b"")
    return packet(DISCONNECT, 0, bytes([reason]) + (properties(props) if props else b""))


PINGREQ_BYTES = packet(PINGREQ, 0, b"")


class Packet:
    """One packet as read: type, flags, the raw body, and decoded fields where known."""

    def __init__(self, ptype, flags, body, version):
        self.type = ptype
        self.flags = flags
        self.body = body
        self.props = {}
        self.reason = None
        self.packet_id = None
        self.reasons = []
        self.session_present = None
        self.topic = None
        self.payload = None
        self.qos = (flags >> 1) & 3
        self.retain = bool(flags & 1)
        self.dup = bool(flags & 8)
        pos = 0
        if ptype == CONNACK:
            self.session_present = bool(body[0] & 1)
            self.reason = body[1]
            if version == 5 and len(body) > 2:
                self.props, pos = parse_properties(body, 2)
        elif ptype == PUBLISH:
            n = struct.unpack_from("!H", body, 0)[0]
            self.topic = body[2:2 + n].decode()
            pos = 2 + n
            if self.qos:
                self.packet_id = struct.unpack_from("!H", body, pos)[0]
                pos += 2
            if version == 5:
                self.props, pos = parse_properties(body, pos)
            self.payload = body[pos:]
        elif ptype in (PUBACK, PUBREC, PUBREL, PUBCOMP):
            self.packet_id = struct.unpack_from("!H", body, 0)[0]
            self.reason = body[2] if len(body) > 2 else 0
            if len(body) > 3:
                self.props, pos = parse_properties(body, 3)
        elif ptype in (SUBACK, UNSUBACK):
            self.packet_id = struct.unpack_from("!H", body, 0)[0]
            pos = 2
            if version == 5:
                self.props, pos = parse_properties(body, pos)
            self.reasons = list(body[pos:])
        elif ptype in (DISCONNECT, AUTH):
            self.reason = body[0] if body else 0
            if len(body) > 1:
                self.props, pos = parse_properties(body, 1)

    def __repr__(self):
        return (f"Packet(type={self.type}, flags={self.flags:#x}, reason={self.reason}, topic={self.topic!r}, "
                f"payload={self.payload!r}, props={self.props}, reasons={self.reasons})")


def read_varint(data, pos):
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def parse_properties(data, pos):
    length, pos = read_varint(data, pos)
    end = pos + length
    out = {}
    while pos < end:
        pid = data[pos]
        pos += 1
        name, kind = PROPS[pid]
        if kind == "byte":
            value = data[pos]
            pos += 1
        elif kind == "u16":
            value = struct.unpack_from("!H", data, pos)[0]
            pos += 2
        elif kind == "u32":
            value = struct.unpack_from("!I", data, pos)[0]
            pos += 4
        elif kind == "varint":
            value, pos = read_varint(data, pos)
        elif kind in ("str", "bin"):
            n = struct.unpack_from("!H", data, pos)[0]
            value = bytes(data[pos + 2:pos + 2 + n])
            if kind == "str":
                value = value.decode()
            pos += 2 + n
        else:
            n = struct.unpack_from("!H", data, pos)[0]
            k = data[pos + 2:pos + 2 + n].decode()
            pos += 2 + n
            n = struct.unpack_from("!H", data, pos)[0]
            v = data[pos + 2:pos + 2 + n].decode()
            pos += 2 + n
            value = (k, v)
        if kind == "pair" or name == "subscription_identifier":
            out.setdefault(name, []).append(value)
        else:
            out[name] = value
    return out, end


class RawMqtt:
    """A socket that speaks MQTT byte by byte; `version` decides how replies are decoded."""

    def __init__(self, port, version=4, timeout=5.0, source=None):
        """`source`: the local address to connect from (127.0.0.2 is another loopback client)."""
        self.version = version
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.buffer = b""
        self.closed = False

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no packet from the broker in time")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.closed = True
                raise ConnectionError("the broker closed the connection")
            self.buffer += chunk
            return

    def read(self, timeout=5.0):
        """The next packet; ConnectionError if the broker closed first, TimeoutError if none came."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buffer) >= 2:
                try:
                    length, pos = read_varint(self.buffer, 1)
                except IndexError:
                    length, pos = None, None
                if length is not None and len(self.buffer) >= pos + length:
                    first = self.buffer[0]
                    body = self.buffer[pos:pos + length]
                    self.buffer = self.buffer[pos + length:]
                    return Packet(first >> 4, first & 0x0F, body, self.version)
            self._fill(deadline)

    def expect(self, ptype, timeout=5.0):
        p = self.read(timeout)
        assert p.type == ptype, f"expected packet type {ptype}, got {p}"
        return p

    def connect(self, client_id="raw", **kwargs):
        kwargs.setdefault("version", self.version)
        self.send(connect(client_id, **kwargs))
        ack = self.expect(CONNACK)
        assert ack.reason == 0, f"CONNACK refused: {ack}"
        return ack

    def subscribe(self, filters, packet_id=1, props=None):
        self.send(subscribe(filters, packet_id, self.version, props))
        return self.expect(SUBACK)

    def read_until_closed(self, timeout=5.0):
        """Packets the broker sends before closing; fails if it does not close in time."""
        packets = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                packets.append(self.read(max(0.01, deadline - time.monotonic())))
            except ConnectionError:
                return packets
            except TimeoutError:
                raise AssertionError(f"the broker did not close the connection; got {packets}") from None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def expect_disconnect_and_close(port, data, version=5, reason=None, connect_first=True, timeout=5.0):
    """Connects (unless told not to), sends `data`, and checks the broker answers with a
    DISCONNECT carrying `reason` (MQTT 5) or just closes (3.x); returns what it sent."""
    c = RawMqtt(port, version)
    try:
        if connect_first:
            c.connect(f"bad-{time.monotonic_ns()}")
        c.send(data)
        packets = c.read_until_closed(timeout)
        if reason is not None:
            assert packets and packets[-1].type in (DISCONNECT, CONNACK), packets
            assert packets[-1].reason == reason, f"expected reason {reason:#x}, got {packets}"
        return packets
    finally:
        c.close()


def assert_broker_works(port, version=4):
    """A fresh connection can still subscribe and receive its own QoS 1 message."""
    c = RawMqtt(port, version)
    try:
        c.connect(f"check-{time.monotonic_ns()}")
        c.subscribe([("works/check", 1)])
        c.send(publish("works/check", b"ok", qos=1, packet_id=7, version=version))
        got = {}
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not ("ack" in got and "msg" in got):
            p = c.read(5)
            if p.type == PUBACK:
                got["ack"] = p
            elif p.type == PUBLISH:
                got["msg"] = p
                if p.qos:
                    c.send(ack(PUBACK, p.packet_id))
        assert got.get("msg") is not None and got["msg"].payload == b"ok", got
    finally:
        c.close()


def wait_closed(c, timeout=5.0):
    """Waits for the broker to close `c` (reading and dropping anything else)."""
    def closed():
        try:
            c.read(0.05)
        except TimeoutError:
            return False
        except ConnectionError:
            return True
        return False
    wait_for(closed, timeout, "the broker to close the connection")
