"""TLS on the listeners (issue 16): STOMP (--stomp-tls), MQTT (--mqtt-tls) and HTTP (--https)
carry the same sessions over TLS, for python3-stomp, paho, `openssl s_client` and `carrier
send/recv --tls`. Handshake failures (wrong CA, expired certificate, wrong host name, plain TCP
on a TLS port, TLS on a plain port, a client that never finishes) end cleanly, are logged, and
the broker keeps serving everyone else. Certificates are made here with the openssl CLI."""

import http.client
import socket
import ssl
import subprocess
import uuid

import paho.mqtt.client as paho
import pytest

from helpers.broker import free_port, run_cli
from helpers.tls_certs import Certs, tls_config
from helpers.wait import wait_for

CONNECT = b"CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00"


@pytest.fixture
def certs(tmp_path):
    return Certs(tmp_path / "certs")


@pytest.fixture
def tls_broker(broker_factory, certs):
    """Factory: a broker with STOMP, MQTT and HTTP over TLS on free ports (attributes
    stomp_tls, mqtt_tls, https), its server certificate issued by `certs`' CA."""
    def make(server=None, extra="", start=True):
        cert, key, _ = server or certs.issue("server", "localhost")
        broker = broker_factory(start=False, config=tls_config(cert, key, extra=extra))
        broker.stomp_tls, broker.mqtt_tls, broker.https = free_port(), free_port(), free_port()
        broker.extra_args += ["--stomp-tls", f"127.0.0.1:{broker.stomp_tls}",
                              "--mqtt-tls", f"127.0.0.1:{broker.mqtt_tls}",
                              "--https", f"127.0.0.1:{broker.https}"]
        if start:
            broker.start()
        return broker
    return make


def tls_stomp(stomp_client, port, ca, cert=None, key=None, connect=True):
    client = stomp_client(port, connect=False)
    client.conn.set_ssl(for_hosts=[("127.0.0.1", port)], ca_certs=ca, cert_file=cert, key_file=key)
    if connect:
        client.connect()
    return client


def carrier_send_recv(port, *tls_args, body="over tls"):
    queue = f"/queue/tls-{uuid.uuid4().hex[:8]}"
    sent = run_cli("send", queue, "--server", f"127.0.0.1:{port}", "--body", body, "--receipt",
                   "--timeout", "5", *tls_args)
    if sent.returncode != 0:
        return sent, None
    got = run_cli("recv", queue, "--server", f"127.0.0.1:{port}", "--count", "1", "--timeout", "5",
                  *tls_args)
    return sent, got


def log_has(broker, text):
    return text in broker.log(tail_lines=2000)


# --- the clients that work -----------------------------------------------------------------------

def test_stomp_py_over_tls_sends_and_receives(tls_broker, certs, stomp_client):
    broker = tls_broker()
    consumer = tls_stomp(stomp_client, broker.stomp_tls, certs.ca_cert)
    consumer.subscribe("/queue/tls-py")
    producer = tls_stomp(stomp_client, broker.stomp_tls, certs.ca_cert)
    producer.send("/queue/tls-py", "secret")
    consumer.wait_messages(1)
    assert consumer.messages[0].body == "secret"
    # The plain port still serves plain clients.
    plain = stomp_client(broker)
    plain.send("/queue/tls-py", "plain")
    consumer.wait_messages(2)


def test_carrier_send_recv_over_tls(tls_broker, certs):
    broker = tls_broker()
    sent, got = carrier_send_recv(broker.stomp_tls, "--tls", "--ca", certs.ca_cert)
    assert sent.returncode == 0, sent.stderr
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "over tls"


def test_paho_over_tls(tls_broker, certs):
    broker = tls_broker()
    received = []
    connected = []
    client = paho.Client(client_id=f"tls-{uuid.uuid4().hex[:8]}")
    client.tls_set(ca_certs=certs.ca_cert)
    client.on_connect = lambda c, u, f, rc: connected.append(rc)
    client.on_message = lambda c, u, m: received.append(m.payload)
    client.connect("127.0.0.1", broker.mqtt_tls, keepalive=30)
    client.loop_start()
    try:
        wait_for(lambda: connected, 10, "CONNACK over TLS")
        assert connected == [0]
        subscribed = []
        client.on_subscribe = lambda c, u, mid, granted: subscribed.append(granted)
        client.subscribe("tls/topic", qos=1)
        wait_for(lambda: subscribed, 10, "SUBACK over TLS")
        client.publish("tls/topic", b"hello", qos=1)
        wait_for(lambda: received, 10, "the message back over TLS")
        assert received == [b"hello"]
    finally:
        client.disconnect()
        client.loop_stop()


def test_openssl_s_client_speaks_stomp(tls_broker, certs):
    broker = tls_broker()
    result = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{broker.stomp_tls}", "-CAfile", certs.ca_cert,
         "-verify_return_error", "-verify_hostname", "localhost", "-ign_eof", "-brief"],
        input=CONNECT + b"DISCONNECT\nreceipt:bye\n\n\x00", capture_output=True, timeout=20)
    out = result.stdout.decode(errors="replace") + result.stderr.decode(errors="replace")
    assert "Verification: OK" in out, out
    assert "TLSv1.3" in out, out
    assert "CONNECTED" in out and "RECEIPT" in out, out


def test_old_protocols_and_cbc_ciphers_are_refused(tls_broker, certs):
    broker = tls_broker()
    # TLS 1.2 with a CBC suite (even with ECDHE): no shared cipher.
    cbc = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{broker.stomp_tls}", "-tls1_2", "-cipher",
         "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA", "-brief"],
        input=b"", capture_output=True, timeout=20)
    assert cbc.returncode != 0
    # TLS 1.1 (the client's security level allowing it): refused.
    old = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{broker.stomp_tls}", "-tls1_1", "-cipher",
         "DEFAULT@SECLEVEL=0", "-brief"],
        input=b"", capture_output=True, timeout=20)
    assert old.returncode != 0
    # TLS 1.2 with an AEAD suite works.
    modern = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{broker.stomp_tls}", "-tls1_2", "-CAfile",
         certs.ca_cert, "-verify_return_error", "-brief"],
        input=b"", capture_output=True, timeout=20)
    out = modern.stdout.decode(errors="replace") + modern.stderr.decode(errors="replace")
    assert "TLSv1.2" in out and ("GCM" in out or "CHACHA" in out), out
    wait_for(lambda: log_has(broker, "TLS handshake failed"), 5, "the refused handshakes in the log")


def test_https_serves_the_http_api(tls_broker, certs):
    broker = tls_broker()
    context = ssl.create_default_context(cafile=certs.ca_cert)
    conn = http.client.HTTPSConnection("localhost", broker.https, context=context, timeout=10)
    try:
        conn.request("POST", "/v1/queues/tls-http/messages", body=b"via https",
                     headers={"Content-Type": "text/plain"})
        response = conn.getresponse()
        response.read()
        assert response.status in (200, 201, 202, 204), response.status
        conn.request("GET", "/v1/queues/tls-http/messages?max=1")
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200
        assert b"via https" in body
    finally:
        conn.close()


# --- failures on the client's side ------------------------------------------------------------

def test_wrong_ca_fails_verification_cleanly(tls_broker, certs):
    broker = tls_broker()
    other_ca, _ = certs.make_ca("other-ca", "Somebody Else's CA")
    sent, _ = carrier_send_recv(broker.stomp_tls, "--ca", other_ca)
    assert sent.returncode != 0
    assert "TLS handshake" in sent.stderr and "certificate verify failed" in sent.stderr, sent.stderr
    # The broker saw the client give up and still serves others.
    sent, got = carrier_send_recv(broker.stomp_tls, "--ca", certs.ca_cert)
    assert sent.returncode == 0 and got.returncode == 0, sent.stderr + (got.stderr if got else "")


def test_expired_server_certificate_fails_verification(tls_broker, certs):
    broker = tls_broker(server=certs.issue("expired", "localhost", days=-1))
    sent, _ = carrier_send_recv(broker.stomp_tls, "--ca", certs.ca_cert)
    assert sent.returncode != 0
    assert "certificate has expired" in sent.stderr, sent.stderr


def test_wrong_host_name_fails_verification(tls_broker, certs):
    broker = tls_broker()
    sent, _ = carrier_send_recv(broker.stomp_tls, "--ca", certs.ca_cert, "--server-name", "broker.example.com")
    assert sent.returncode != 0
    assert "TLS handshake" in sent.stderr and "certificate verify failed" in sent.stderr, sent.stderr
    # Python's client refuses it as well.
    context = ssl.create_default_context(cafile=certs.ca_cert)
    with socket.create_connection(("127.0.0.1", broker.stomp_tls), timeout=5) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(raw, server_hostname="broker.example.com")


# --- failures on the broker's side ------------------------------------------------------------

def read_until_closed(sock, timeout=10):
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                return data
            data += chunk
    except ConnectionResetError:
        return data


def test_plain_tcp_on_a_tls_port_is_closed_and_logged(tls_broker, certs, stomp_client):
    broker = tls_broker()
    with socket.create_connection(("127.0.0.1", broker.stomp_tls), timeout=5) as raw:
        raw.sendall(CONNECT)
        reply = read_until_closed(raw)
    assert b"CONNECTED" not in reply
    wait_for(lambda: log_has(broker, "TLS handshake failed"), 5, "the failed handshake in the log")
    tls_stomp(stomp_client, broker.stomp_tls, certs.ca_cert)


def test_tls_on_a_plain_port_gets_an_error_and_a_log_line(tls_broker, certs, stomp_client):
    broker = tls_broker()
    context = ssl.create_default_context(cafile=certs.ca_cert)
    with socket.create_connection(("127.0.0.1", broker.port), timeout=5) as raw:
        with pytest.raises((ssl.SSLError, ConnectionResetError, OSError)):
            context.wrap_socket(raw, server_hostname="localhost")
    wait_for(lambda: log_has(broker, "a TLS handshake on a plain port"), 5, "the log line")
    stomp_client(broker).send("/queue/after", "still serving")


def test_a_handshake_that_never_finishes_is_closed_and_counted(tls_broker, certs, stomp_client):
    broker = tls_broker(extra="[stomp]\nconnect_timeout_ms = 300\n\n")
    with socket.create_connection(("127.0.0.1", broker.stomp_tls), timeout=5) as raw:
        reply = read_until_closed(raw)  # sends nothing: the broker must close it
    assert reply == b""
    wait_for(lambda: log_has(broker, "closed before its TLS handshake completed (1 so far)"), 5,
             "the abandoned handshake in the log")
    tls_stomp(stomp_client, broker.stomp_tls, certs.ca_cert)


def test_a_tls_listener_without_a_certificate_does_not_start(broker_factory):
    broker = broker_factory(start=False, extra_args=["--stomp-tls", f"127.0.0.1:{free_port()}"])
    broker.spawn()
    assert broker.wait_exit() != 0
    assert "tls.cert_file" in broker.log()


def test_a_bad_certificate_file_stops_start_up_naming_it(broker_factory, certs, tmp_path):
    cert, key, _ = certs.issue("server", "localhost")
    _, other_key, _ = certs.issue("other", "localhost")
    broker = broker_factory(start=False, config=tls_config(cert, other_key),
                            extra_args=["--stomp-tls", f"127.0.0.1:{free_port()}"])
    broker.spawn()
    assert broker.wait_exit() != 0
    assert "other.key" in broker.log()
