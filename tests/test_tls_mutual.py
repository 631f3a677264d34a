"""Mutual TLS (issue 16): [tls] client_certificates = "none" | "optional" | "required", and
use_identity_as_username, which makes a verified client certificate's CN the user with no
password check. Certificates are made here with the openssl CLI."""

import subprocess
import uuid

import paho.mqtt.client as paho
import pytest

from helpers.broker import carrier_bin, free_port, run_cli
from helpers.tls_certs import Certs, tls_config
from helpers.wait import wait_for


@pytest.fixture
def certs(tmp_path):
    return Certs(tmp_path / "certs")


@pytest.fixture(scope="module")
def bob_line():
    """A users-file line for bob (password 'builder'), made once: hashing is slow."""
    result = subprocess.run([str(carrier_bin()), "passwd", "bob"], input="builder\n", capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def mtls_broker(broker_factory, certs, mode, identity=False, users=None):
    cert, key, _ = certs.issue("server", "localhost")
    extra = ""
    if users is not None:
        extra = '[auth]\nusers_file = "users.txt"\nanonymous = false\nfailure_delay_ms = 0\n\n'
    broker = broker_factory(start=False, config=tls_config(cert, key, ca=certs.ca_cert, client_certificates=mode,
                                                           identity=identity, extra=extra))
    if users is not None:
        (broker.workdir / "users.txt").write_text(users + "\n")
    broker.stomp_tls, broker.mqtt_tls = free_port(), free_port()
    broker.extra_args += ["--stomp-tls", f"127.0.0.1:{broker.stomp_tls}", "--mqtt-tls", f"127.0.0.1:{broker.mqtt_tls}"]
    broker.start()
    return broker


def send(port, *args):
    return run_cli("send", f"/queue/m-{uuid.uuid4().hex[:8]}", "--server", f"127.0.0.1:{port}", "--body", "x",
                   "--receipt", "--timeout", "5", *args)


def test_required_refuses_a_client_without_a_certificate(broker_factory, certs):
    broker = mtls_broker(broker_factory, certs, "required")
    without = send(broker.stomp_tls, "--ca", certs.ca_cert)
    assert without.returncode != 0
    assert "CONNECTED" not in without.stdout
    wait_for(lambda: "TLS handshake failed" in broker.log(tail_lines=2000), 5, "the refusal in the log")
    cert, key, _ = certs.issue("client", "alice", san=None, client=True)
    with_cert = send(broker.stomp_tls, "--ca", certs.ca_cert, "--cert", cert, "--key", key)
    assert with_cert.returncode == 0, with_cert.stderr


def test_required_refuses_a_certificate_from_another_ca(broker_factory, certs):
    broker = mtls_broker(broker_factory, certs, "required")
    other = certs.make_ca("other-ca", "Somebody Else's CA")
    cert, key, _ = certs.issue("stranger", "mallory", san=None, ca=other, client=True)
    refused = send(broker.stomp_tls, "--ca", certs.ca_cert, "--cert", cert, "--key", key)
    assert refused.returncode != 0


def test_optional_lets_clients_without_a_certificate_in(broker_factory, certs):
    broker = mtls_broker(broker_factory, certs, "optional")
    assert send(broker.stomp_tls, "--ca", certs.ca_cert).returncode == 0
    cert, key, _ = certs.issue("client", "alice", san=None, client=True)
    assert send(broker.stomp_tls, "--ca", certs.ca_cert, "--cert", cert, "--key", key).returncode == 0


def test_identity_as_username_logs_in_without_a_password(broker_factory, certs, bob_line):
    broker = mtls_broker(broker_factory, certs, "optional", identity=True, users=bob_line)
    # No certificate, no login: refused (anonymous = false).
    refused = send(broker.stomp_tls, "--ca", certs.ca_cert)
    assert refused.returncode != 0
    # A certificate for alice, who has no password at all: she is let in as alice.
    cert, key, _ = certs.issue("alice", "alice", san=None, client=True)
    assert send(broker.stomp_tls, "--ca", certs.ca_cert, "--cert", cert, "--key", key).returncode == 0
    # A certificate without a CN: its first subjectAltName is the user.
    san_cert, san_key, _ = certs.issue("carol", None, san="email:carol@example.com", client=True)
    assert send(broker.stomp_tls, "--ca", certs.ca_cert, "--cert", san_cert, "--key", san_key).returncode == 0
    # Passwords still work for clients without a certificate.
    assert send(broker.stomp_tls, "--ca", certs.ca_cert, "--login", "bob", "--passcode", "builder").returncode == 0


def test_identity_as_username_over_mqtt(broker_factory, certs, bob_line):
    broker = mtls_broker(broker_factory, certs, "optional", identity=True, users=bob_line)
    cert, key, _ = certs.issue("alice", "alice", san=None, client=True)

    def connack(**tls):
        codes = []
        client = paho.Client(client_id=f"m-{uuid.uuid4().hex[:8]}")
        client.tls_set(ca_certs=certs.ca_cert, **tls)
        client.on_connect = lambda c, u, f, rc: codes.append(rc)
        client.on_disconnect = lambda c, u, rc: codes.append(("gone", rc))
        client.connect("127.0.0.1", broker.mqtt_tls, keepalive=30)
        client.loop_start()
        try:
            wait_for(lambda: codes, 10, "CONNACK")
            return codes[0]
        finally:
            client.disconnect()
            client.loop_stop()

    assert connack(certfile=cert, keyfile=key) == 0
    assert connack() == 5  # 3.1.1 "not authorized": no certificate, no user name
