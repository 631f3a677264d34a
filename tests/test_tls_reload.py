"""SIGHUP reloads the TLS certificate and key (issue 16): a connection made afterwards sees the
new certificate (its serial number), one made before stays up and keeps working; a reload
that fails keeps the old certificate."""

import shutil
import signal
import socket
import ssl

from cryptography import x509

from helpers.broker import free_port
from helpers.tls_certs import Certs, tls_config
from helpers.wait import wait_for


def served_serial(port, ca):
    context = ssl.create_default_context(cafile=ca)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True)).serial_number


def test_sighup_reloads_the_certificate_without_dropping_connections(broker_factory, stomp_client, tmp_path):
    certs = Certs(tmp_path / "certs")
    first_cert, first_key, first_serial = certs.issue("first", "localhost", serial=201)
    live_cert, live_key = str(tmp_path / "server.crt"), str(tmp_path / "server.key")
    shutil.copy(first_cert, live_cert)
    shutil.copy(first_key, live_key)
    broker = broker_factory(start=False, config=tls_config(live_cert, live_key))
    port = free_port()
    broker.extra_args += ["--stomp-tls", f"127.0.0.1:{port}"]
    broker.start()
    assert served_serial(port, certs.ca_cert) == first_serial

    old = stomp_client(port, connect=False)
    old.conn.set_ssl(for_hosts=[("127.0.0.1", port)], ca_certs=certs.ca_cert)
    old.connect()
    old.subscribe("/queue/reload")

    # The files are replaced and the broker told: new connections get the new certificate.
    second_cert, second_key, second_serial = certs.issue("second", "localhost", serial=202)
    shutil.copy(second_cert, live_cert)
    shutil.copy(second_key, live_key)
    broker.send_signal(signal.SIGHUP)
    wait_for(lambda: "TLS certificate" in broker.log() and "reloaded" in broker.log(), 5, "the reload")
    assert served_serial(port, certs.ca_cert) == second_serial

    # The connection made before the reload is still up and still works.
    assert not old.disconnected
    old.send("/queue/reload", "after reload")
    old.wait_messages(1)

    # A broken key file: the reload fails, the broker says so and keeps the second certificate.
    (tmp_path / "server.key").write_text("not a key\n")
    broker.send_signal(signal.SIGHUP)
    wait_for(lambda: "TLS certificate not reloaded" in broker.log(), 5, "the failed reload")
    assert served_serial(port, certs.ca_cert) == second_serial
    assert broker.running()
