"""A Server-Sent Events reader for GET .../events (docs/http.md): a raw socket, the response
head, then events parsed as EventSource parses them (id, event, data lines; comments kept
apart so tests can see keep-alives)."""

import socket
import time


class EventStream:
    def __init__(self, port, path, headers=None, timeout=10.0, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf is not None:  # before connect: bounds what the kernel reads for a client that does not
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{extra}\r\n".encode())
        self.buf = b""
        self.comments = []
        self.status = None
        self.headers = {}

    def _fill(self, deadline):
        self.sock.settimeout(max(0.05, deadline - time.monotonic()))
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("the event stream closed")
        self.buf += chunk

    def head(self, timeout=10.0):
        """Reads the response head: (status, headers), and the body if it is not a stream."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buf:
            self._fill(deadline)
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        for line in lines[1:]:
            k, _, v = line.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        return self.status, self.headers

    def next_event(self, timeout=10.0):
        """The next event as a dict: id, event ("message" if absent), data (lines joined by LF)."""
        deadline = time.monotonic() + timeout
        event = {"event": "message", "data": []}
        while True:
            while b"\n" not in self.buf:
                self._fill(deadline)
            line, self.buf = self.buf.split(b"\n", 1)
            text = line.decode("utf-8")
            if text == "":
                if event["data"] or "id" in event:
                    event["data"] = "\n".join(event["data"])
                    return event
                continue
            if text.startswith(":"):
                self.comments.append(text[1:].strip())
                continue
            field, _, value = text.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "data":
                event["data"].append(value)
            else:
                event[field] = value

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def wait_comment(stream, text, timeout=10.0):
    """Reads the stream until a comment line `: text` has come (events meanwhile are dropped)."""
    deadline = time.monotonic() + timeout
    while text not in stream.comments:
        while b"\n" not in stream.buf:
            stream._fill(deadline)
        line, stream.buf = stream.buf.split(b"\n", 1)
        if line.startswith(b":"):
            stream.comments.append(line[1:].decode().strip())
