"""WebSocket over TLS (wss) with Carrier's own client (docs/http.md, "WebSocket"): `carrier send`
and `carrier recv --server wss://HOST:PORT/ws` carry STOMP over the --https listener's /ws, and
`carrier bench --protocol ws-stomp | ws-mqtt --tls` runs there without loss. Certificates are
checked as over TCP: a CA that does not sign the broker's certificate fails the handshake."""

import re
import uuid

import pytest

from helpers.broker import free_port, run_cli
from helpers.tls_certs import Certs, tls_config


@pytest.fixture
def wss_broker(broker_factory, tmp_path):
    certs = Certs(tmp_path / "certs")
    cert, key, _ = certs.issue("server", "localhost")
    broker = broker_factory(start=False, config=tls_config(cert, key))
    broker.https = free_port()
    broker.extra_args += ["--https", f"127.0.0.1:{broker.https}"]
    broker.start()
    broker.certs = certs
    return broker


def test_send_and_recv_over_wss(wss_broker):
    b = wss_broker
    queue = f"/queue/wss-{uuid.uuid4().hex[:8]}"
    url = f"wss://localhost:{b.https}/ws"
    sent = run_cli("send", queue, "--server", url, "--ca", b.certs.ca_cert, "--body", "over wss",
                   "--count", "3", "--receipt", "--timeout", "5")
    assert sent.returncode == 0, sent
    got = run_cli("recv", queue, "--server", url, "--ca", b.certs.ca_cert, "--count", "3", "--timeout", "5")
    assert got.returncode == 0, got
    assert got.stdout.split("\n")[:3] == ["over wss"] * 3, got.stdout
    # Plain ws:// against the plain listener: the same client, the same queue.
    sent = run_cli("send", queue, "--server", f"ws://127.0.0.1:{b.http_port}/ws", "--body", "over ws",
                   "--receipt", "--timeout", "5")
    assert sent.returncode == 0, sent
    got = run_cli("recv", queue, "--server", url, "--ca", b.certs.ca_cert, "--count", "1", "--timeout", "5")
    assert got.returncode == 0 and got.stdout.startswith("over ws"), got


def test_wss_checks_the_certificate(wss_broker, tmp_path):
    b = wss_broker
    other = Certs(tmp_path / "other")  # a CA that did not sign the broker's certificate
    sent = run_cli("send", "/queue/wss-refused", "--server", f"wss://localhost:{b.https}/ws", "--ca", other.ca_cert,
                   "--body", "x", "--receipt", "--timeout", "5")
    assert sent.returncode != 0
    assert "TLS handshake" in sent.stderr and "certificate verify failed" in sent.stderr, sent.stderr
    # A wss URL against the plain port is a TLS failure too, not a hang.
    sent = run_cli("send", "/queue/wss-refused", "--server", f"wss://localhost:{b.http_port}/ws",
                   "--ca", b.certs.ca_cert, "--body", "x", "--receipt", "--timeout", "5")
    assert sent.returncode != 0 and "TLS handshake" in sent.stderr, sent
    # The broker is unharmed.
    ok = run_cli("send", "/queue/wss-ok", "--server", f"wss://localhost:{b.https}/ws", "--ca", b.certs.ca_cert,
                 "--body", "fine", "--receipt", "--timeout", "5")
    assert ok.returncode == 0, ok


@pytest.mark.parametrize("protocol", ["ws-stomp", "ws-mqtt"])
def test_bench_over_wss(wss_broker, protocol):
    b = wss_broker
    out = run_cli("bench", "--protocol", protocol, "--server", f"localhost:{b.https}", "--tls", "--ca",
                  b.certs.ca_cert, "--producers", "1", "--consumers", "1", "--duration", "1", "--size", "64", "--quiet",
                  timeout=60)
    assert out.returncode == 0, out
    assert "missing 0  duplicates 0  failed 0" in out.stdout and "result: ok" in out.stdout, out
    assert re.search(r"received\s+[1-9]", out.stdout), out.stdout
