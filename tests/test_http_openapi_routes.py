"""The OpenAPI document (/v1/openapi.json, docs/http-openapi.json) describes every route the HTTP
listener serves, and serves nothing it does not describe.

The route list is not copied from the document: the words the router compares path segments
with are read from its source (src/http/routes.cpp and the handlers it calls), every path made
of them (and of a placeholder for names) is requested from a running broker, and each one the
router does not answer with its "no resource" 404 is a served route; each method it does not
answer 405 is a served method. Each of those must match a path and operation of the document.
"""

import json
import re
import socket
import uuid
from itertools import product
from pathlib import Path

import pytest

from helpers.http import request

SRC = Path(__file__).resolve().parent.parent / "src"
ROUTER_FILES = ["http/routes.cpp", "http/handle_subscription.cpp", "http/handle_admin.cpp",
                "http/handle_admin_api.cpp", "http/handle_federation_admin.cpp", "http/websocket_upgrade.cpp"]
MAX_SEGMENTS = 5
PLACEHOLDER = "x" + uuid.uuid4().hex[:6]  # a name no route spells
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"]


def router_vocabulary():
    """{position: words} the router compares segment `position` with, and words compared with
    a segment whose position the source does not say (those may stand anywhere past the second)."""
    at = {i: set() for i in range(MAX_SEGMENTS)}
    loose = set()
    for name in ROUTER_FILES:
        text = (SRC / name).read_text()
        alias = {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+)\s*=\s*parts\[(\d)\]", text)}
        for m in re.finditer(r'parts\[(\d)\]\s*[!=]=\s*"([^"]*)"', text):
            at[int(m.group(1))].add(m.group(2))
        for m in re.finditer(r'\b(\w+)\s*[!=]=\s*"([^"]*)"', text):
            var, word = m.groups()
            if var in alias:
                at[alias[var]].add(word)
            elif var == "resource":
                loose.add(word)
        for m in re.finditer(r'parts\.back\(\)\s*[!=]=\s*"([^"]*)"', text):
            loose.add(m.group(1))
        for m in re.finditer(r'(?:path|target)\s*==\s*"/([^"/?]+)"', text):
            at[0].add(m.group(1))
    for i in range(2, MAX_SEGMENTS):
        at[i] |= loose
    for i in range(1, MAX_SEGMENTS):
        at[i].add(PLACEHOLDER)
    return at


def relay_paths():
    """The relay's paths (relay/codec): its fixed one and its prefix, with a peer id after it."""
    text = (SRC / "relay/codec/relay_target.cpp").read_text() + (SRC / "relay/codec/relay_target.hpp").read_text()
    fixed = re.findall(r'kUnknownPeer\s*=\s*"([^"]+)"', text)
    prefixes = re.findall(r'starts_with\("(/[^"]+)"\)', text)
    assert fixed and prefixes, "the relay's paths are no longer where this test reads them"
    # A well-formed relay request (a peer id asked for), so that a method it does not take is
    # answered 405 rather than 400 for the query.
    return [f + "?0,false,relay/pid" for f in fixed] + [p + "00ff" for p in prefixes]


def candidate_paths():
    at = router_vocabulary()
    out = []
    for n in range(1, MAX_SEGMENTS + 1):
        for combo in product(*(sorted(at[i]) for i in range(n))):
            out.append("/" + "/".join(combo))
    return out + relay_paths()


def is_stream(path):
    return path.endswith("/events")


def unrouted(status, body):
    """The router's answer for a path it has no route for."""
    if status != 404:
        return False
    try:
        detail = json.loads(body).get("detail", "")
    except ValueError:
        return False
    return detail.startswith(("no resource at", "no admin resource at", "the admin API is under"))


def pipelined(port, method, paths, batch=256):
    """{path: (status, body)} for `method` on each path, many requests per connection."""
    out = {}
    for start in range(0, len(paths), batch):
        chunk = paths[start:start + batch]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"".join(f"{method} {p} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n".encode() for p in chunk))
            buf = b""
            for p in chunk:
                while b"\r\n\r\n" not in buf:
                    data = s.recv(65536)
                    assert data, f"connection closed before the answer to {method} {p}"
                    buf += data
                head, buf = buf.split(b"\r\n\r\n", 1)
                lines = head.decode("latin-1").split("\r\n")
                status = int(lines[0].split(" ")[1])
                length = 0
                for line in lines[1:]:
                    k, _, v = line.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v.strip())
                if method == "HEAD":
                    length = 0
                while len(buf) < length:
                    data = s.recv(65536)
                    assert data, f"connection closed in the body of {method} {p}"
                    buf += data
                out[p] = (status, buf[:length])
                buf = buf[length:]
    return out


def one(port, method, path):
    """A single request whose response may never end (an event stream): the status and, for a
    problem, the body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = s.recv(65536)
            if not data:
                break
            buf += data
        head, _, body = buf.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        if b"text/event-stream" in head or method == "HEAD":
            return status, b""
        while True:
            data = s.recv(65536)
            if not data:
                break
            body += data
        return status, body


def answers(port, method, paths):
    plain = [p for p in paths if not is_stream(p)]
    out = pipelined(port, method, plain)
    for p in paths:
        if is_stream(p):
            out[p] = one(port, method, p)
    return out


def template_matches(template, path):
    pattern = "[^/]+".join(re.escape(part) for part in re.split(r"\{[^}]+\}", template))
    return re.fullmatch(pattern, path.split("?")[0]) is not None


def documented(doc, path, method):
    for template, item in doc["paths"].items():
        if template_matches(template, path):
            ops = {k.upper() for k in item if k != "parameters"}
            if method in ops or (method == "HEAD" and "GET" in ops):
                return True
    return False


@pytest.mark.timeout(240)
def test_every_served_route_is_in_the_openapi_document(broker):
    port = broker.http_port
    r = request(port, "GET", "/v1/openapi.json")
    assert r.status == 200, r
    doc = r.json()
    paths = candidate_paths()
    served = [p for p, (status, body) in answers(port, "GET", paths).items() if not unrouted(status, body)]
    # The routes known today must be among them, else the crawl itself is broken.
    for expected in ("/v1/openapi.json", f"/v1/queues/{PLACEHOLDER}/messages", "/ws", "/healthz",
                     f"/admin/v1/queues/{PLACEHOLDER}/move", f"/v1/subscriptions/{PLACEHOLDER}/events"):
        assert expected in served, (expected, sorted(served))
    missing = []
    for method in METHODS:
        for p, (status, body) in answers(port, method, served).items():
            if status == 405 or unrouted(status, body):
                continue
            if not documented(doc, p, method):
                missing.append(f"{method} {p} -> {status}")
    assert not missing, "served but not in the OpenAPI document:\n" + "\n".join(sorted(missing))


def test_every_documented_route_is_served(broker):
    port = broker.http_port
    doc = request(port, "GET", "/v1/openapi.json").json()
    for template, item in doc["paths"].items():
        path = re.sub(r"\{[^}]+\}", "00ff" if "uuid-" in template else PLACEHOLDER, template)
        for method in (k.upper() for k in item if k != "parameters"):
            status, body = one(port, method, path) if is_stream(path) else pipelined(port, method, [path])[path]
            assert not unrouted(status, body) and status != 405, (method, template, status, body)

