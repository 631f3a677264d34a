"""A raw-socket STOMP peer for frames that real clients will not send (Mosquitto's raw-packet
tests): build bytes by hand, read frames back with a timeout, parse them minimally.
"""

import socket
import time
import uuid

NUL = b"\x00"


class Frame:
    """One frame as read from the wire: headers keep their order and repeats."""

    def __init__(self, command, headers, body, raw=b""):
        self.raw = raw  # the frame's bytes as received, without the trailing NUL
        self.command = command
        self.headers = headers  # list of (name, value)
        self.body = body  # bytes

    def header(self, name, default=None):
        """The first value of `name` (STOMP: the first occurrence wins)."""
        for key, value in self.headers:
            if key == name:
                return value
        return default

    def all(self, name):
        return [value for key, value in self.headers if key == name]

    def __repr__(self):
        return f"Frame({self.command!r}, {self.headers!r}, {self.body[:200]!r})"


def escape(value, version="1.2"):
    if version == "1.0":
        return value
    value = value.replace("\\", "\\\\").replace("\n", "\\n").replace(":", "\\c")
    if version == "1.2":
        value = value.replace("\r", "\\r")
    return value


_UNESCAPES = {"\\\\": "\\", "\\n": "\n", "\\c": ":", "\\r": "\r"}


def unescape(value, version="1.2"):
    if version == "1.0" or "\\" not in value:
        return value
    out, i = [], 0
    while i < len(value):
        pair = value[i:i + 2]
        if value[i] == "\\" and pair in _UNESCAPES and (pair != "\\r" or version == "1.2"):
            out.append(_UNESCAPES[pair])
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def encode_frame(command, headers=(), body=b"", version="1.2", escape_headers=True):
    """Bytes of one frame. `headers` is a list of pairs or a dict; no content-length is added."""
    if isinstance(headers, dict):
        headers = list(headers.items())
    if isinstance(body, str):
        body = body.encode()
    lines = [command.encode()]
    for key, value in headers:
        if escape_headers and command not in ("CONNECT", "STOMP"):
            key, value = escape(str(key), version), escape(str(value), version)
        lines.append(f"{key}:{value}".encode())
    return b"\n".join(lines) + b"\n\n" + body + NUL


def parse_frame(data, version="1.2"):
    """Parses one complete frame (without its trailing NUL) from bytes."""
    head, sep, body = data.partition(b"\n\n")
    if not sep:
        head, sep, body = data.partition(b"\r\n\r\n")
    lines = head.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n")
    command = lines[0]
    headers = []
    for line in lines[1:]:
        key, colon, value = line.partition(":")
        assert colon, f"header line without a colon in {data!r}"
        if command != "CONNECTED":
            key, value = unescape(key, version), unescape(value, version)
        headers.append((key, value))
    return Frame(command, headers, body, data)


class RawStomp:
    """One TCP connection speaking hand-made STOMP. Counts heart-beats (bare EOLs) it reads."""

    def __init__(self, port, host="127.0.0.1", timeout=5.0, source=None):
        """`source`: the local address to connect from (127.0.0.2 is another loopback client)."""
        self.sock = socket.create_connection((host, port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.buf = b""
        self.version = "1.2"
        self.heartbeats = []  # monotonic times at which a bare EOL arrived
        self.closed = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def send_frame(self, command, headers=(), body=b"", **kwargs):
        kwargs.setdefault("version", self.version)
        self.send(encode_frame(command, headers, body, **kwargs))

    def _recv(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout()
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.closed = True
        return chunk

    def _take_frame(self):
        """A complete frame from the buffer, or None. Skips and records heart-beat EOLs."""
        while self.buf[:1] in (b"\n", b"\r"):
            if self.buf.startswith(b"\r\n"):
                self.buf = self.buf[2:]
            elif self.buf.startswith(b"\n"):
                self.buf = self.buf[1:]
            else:
                return None  # a lone \r: wait for its \n
            self.heartbeats.append(time.monotonic())
        end_of_head = self.buf.find(b"\n\n")
        if end_of_head < 0:
            return None
        head = self.buf[:end_of_head]
        length = None
        for line in head.split(b"\n")[1:]:
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1].strip())
                break
        body_start = end_of_head + 2
        if length is not None:
            if len(self.buf) < body_start + length + 1:
                return None
            assert self.buf[body_start + length:body_start + length + 1] == NUL, \
                f"frame from the broker has no NUL after content-length bytes: {self.buf!r}"
            end = body_start + length
        else:
            end = self.buf.find(NUL, body_start)
            if end < 0:
                return None
        frame = parse_frame(self.buf[:end], self.version)
        self.buf = self.buf[end + 1:]
        return frame

    def read_frame(self, timeout=5.0):
        """The next frame; fails on timeout or if the broker closes first."""
        deadline = time.monotonic() + timeout
        while True:
            frame = self._take_frame()
            if frame is not None:
                return frame
            if self.closed:
                raise AssertionError(f"connection closed before a complete frame; got {self.buf!r}")
            try:
                self.buf += self._recv(deadline)
            except socket.timeout:
                raise AssertionError(f"no frame within {timeout}s; buffered {self.buf!r}") from None

    def wait_heartbeats(self, count, timeout):
        """Reads until `count` heart-beats have arrived in total; fails on a frame or timeout."""
        deadline = time.monotonic() + timeout
        while len(self.heartbeats) < count:
            frame = self._take_frame()
            assert frame is None, f"expected heart-beats, got {frame!r}"
            if self.closed:
                raise AssertionError(f"closed after {len(self.heartbeats)} heart-beats")
            try:
                self.buf += self._recv(deadline)
            except socket.timeout:
                raise AssertionError(
                    f"only {len(self.heartbeats)} of {count} heart-beats in {timeout}s") from None
        return self.heartbeats

    def idle(self, duration):
        """Reads for `duration` seconds (a negative check); returns the frames that arrived.
        Heart-beats land in self.heartbeats, a close in self.closed."""
        deadline = time.monotonic() + duration
        frames = []
        while not self.closed:
            frame = self._take_frame()
            if frame is not None:
                frames.append(frame)
                continue
            try:
                self.buf += self._recv(deadline)
            except socket.timeout:
                break
        return frames

    def wait_closed(self, timeout=5.0):
        """Waits until the broker closes the connection, discarding what arrives. Returns the
        frames that arrived before the close."""
        deadline = time.monotonic() + timeout
        frames = []
        while True:
            frame = self._take_frame()
            if frame is not None:
                frames.append(frame)
                continue
            if self.closed:
                return frames
            try:
                self.buf += self._recv(deadline)
            except socket.timeout:
                raise AssertionError(f"broker did not close the connection within {timeout}s; "
                                     f"frames {frames!r}, buffered {self.buf!r}") from None

    def connect(self, version="1.2", heartbeat=None, command="CONNECT", headers=()):
        """Sends CONNECT (or STOMP) and returns the CONNECTED frame."""
        hdrs = [("accept-version", version), ("host", "localhost")]
        if heartbeat is not None:
            hdrs.append(("heart-beat", heartbeat))
        hdrs.extend(headers)
        self.send_frame(command, hdrs)
        frame = self.read_frame()
        assert frame.command == "CONNECTED", f"expected CONNECTED, got {frame!r}"
        self.version = frame.header("version", "1.0")
        return frame


def expect_error_and_close(raw, timeout=5.0):
    """The next frame must be ERROR with a `message` header and a body, then the broker must
    close the connection (STOMP 1.2: it MUST close just after an ERROR). Returns the ERROR."""
    frame = raw.read_frame(timeout)
    assert frame.command == "ERROR", f"expected ERROR, got {frame!r}"
    assert frame.header("message"), f"ERROR without a message header: {frame!r}"
    assert frame.body.strip(b"\x00\n "), f"ERROR without a body: {frame!r}"
    raw.wait_closed(timeout)
    return frame


def assert_broker_works(port, timeout=5.0):
    """A fresh, well-behaved connection can still send and receive on this broker."""
    dest = f"/queue/health-{uuid.uuid4().hex[:8]}"
    with RawStomp(port, timeout=timeout) as raw:
        raw.connect("1.2")
        raw.send_frame("SUBSCRIBE", [("destination", dest), ("id", "0"), ("receipt", "sub")])
        receipt = raw.read_frame(timeout)
        assert (receipt.command, receipt.header("receipt-id")) == ("RECEIPT", "sub"), receipt
        raw.send_frame("SEND", [("destination", dest), ("content-length", "6")], b"health")
        message = raw.read_frame(timeout)
        assert message.command == "MESSAGE", message
        assert message.body == b"health", message
        assert message.header("destination") == dest, message
