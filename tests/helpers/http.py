"""A few calls to the broker's HTTP API (docs/http.md) with python's http.client, and a raw
socket for requests http.client will not send (malformed, trickled, pipelined)."""

import base64
import http.client
import json
import socket
import subprocess

import pytest

from helpers.broker import carrier_bin

from helpers.wait import wait_for


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case names
        self.body = body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"<{self.status} {self.headers} {self.body[:300]!r}>"


def request(port, method, path, body=None, headers=None, timeout=10.0, conn=None):
    """One request; returns a Response. Reuses `conn` (keep-alive) when given."""
    own = conn is None
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        if own:
            c.close()


def assert_problem(r, status):
    """`r` is an RFC 9457 problem-details answer with this status and a detail."""
    assert r.status == status, r
    assert r.headers["content-type"] == "application/problem+json", r
    assert r.json()["status"] == status and r.json()["detail"], r


def send(port, name, body, kind="queues", headers=None, query="", **kw):
    r = request(port, "POST", f"/v1/{kind}/{name}/messages{query}", body=body, headers=headers, **kw)
    assert r.status == 201, r
    return r.json()["ids"]


def receive(port, name, query="max=10&wait=5s", **kw):
    """GET messages: the decoded list ([] on 204)."""
    r = request(port, "GET", f"/v1/queues/{name}/messages?{query}", **kw)
    assert r.status in (200, 204), r
    return [] if r.status == 204 else r.json()


def body_of(message):
    if "body_base64" in message:
        return base64.b64decode(message["body_base64"])
    return message["body"].encode()


@pytest.fixture(scope="module")
def alice_line():
    """The users-file line of user alice, password wonderland (`carrier passwd`: slow, once a module)."""
    result = subprocess.run([str(carrier_bin()), "passwd", "alice"], input="wonderland\n",
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


class Raw:
    """A plain socket to the HTTP port: send bytes, read responses as they come."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read_response(self):
        """(status, headers dict, body) of the next response; None if the connection closed first."""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self.buf) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.buf += chunk
        body, self.buf = self.buf[:length], self.buf[length:]
        return status, headers, body

    def closed(self):
        """True once the peer has closed (reads EOF), waiting up to the socket timeout."""
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def wait_http_ready(port):
    wait_for(lambda: request(port, "GET", "/v1/openapi.json").status == 200, 5.0, "the HTTP listener")
