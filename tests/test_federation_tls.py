"""Federation links over TLS (issues 15 and 16, docs/federation.md "TLS"): `[federation] tls`
makes the link listener TLS with the [tls] (or [tls.federation]) certificate, and a
[[federation.link]] with `tls = true` verifies the far node's certificate (`ca_file`,
`server_name`) and may present its own (`cert_file`, `key_file`: mutual TLS). Handshake
failures are logged on both nodes, the dialler backs off and retries, and the nodes keep
serving their clients. Certificates are made here with the openssl CLI."""

import json
import shutil
import signal
import socket
import uuid

import pytest

from helpers.broker import run_cli
from helpers.federation import Node, bodies, wait_links
from helpers.http import request
from helpers.tls_certs import Certs
from helpers.wait import assert_stays, wait_for
from test_auth import passwd


@pytest.fixture
def certs(tmp_path):
    return Certs(tmp_path / "certs")


def tls_listener(cert, key, ca=None, client_certificates=None, identity=False):
    """[federation] keys (Node's `extra`) for a TLS link listener, with its [tls] table."""
    text = f'tls = true\n[tls]\ncert_file = "{cert}"\nkey_file = "{key}"\n'
    if identity:
        text += "use_identity_as_username = true\n"
    if ca:
        text += f'ca_file = "{ca}"\n'
    if client_certificates:
        text += f'client_certificates = "{client_certificates}"\n'
    return text


def tls_link(ca, server_name=None, cert=None, key=None):
    """[[federation.link]] keys (Node's `link_extra`) for a link dialled over TLS."""
    text = f'tls = true\nca_file = "{ca}"\n'
    if server_name:
        text += f'server_name = "{server_name}"\n'
    if cert:
        text += f'cert_file = "{cert}"\nkey_file = "{key}"\n'
    return text


def tls_node(factory, certs, name, links=(), **kwargs):
    """A node whose listener and links all speak TLS with certificates of `certs`' CA."""
    cert, key, _ = certs.issue(f"{name}-server", "localhost")
    return Node(factory, name, links=links, extra=tls_listener(cert, key), link_extra=tls_link(certs.ca_cert),
                **kwargs)


def log_count(node, text):
    return node.broker.log(20000).count(text)


def wait_log(node, text, count=1, timeout=10.0):
    wait_for(lambda: log_count(node, text) >= count, timeout,
             lambda: f"{count}x '{text}' in {node.name}'s log:\n{node.broker.log(60)}")


def assert_serves_clients(node, stomp_client):
    """The node's own clients are served while its links fail."""
    queue = f"/queue/local-{uuid.uuid4().hex[:6]}"
    consumer = stomp_client(node.broker.port)
    consumer.subscribe(queue)
    stomp_client(node.broker.port).send(queue, "still here")
    wait_for(lambda: bodies(consumer) == ["still here"], 10, f"a local message on {node.name}")


def send_and_expect_once(producer, consumer, queue, count=20, prefix="m"):
    sent = [f"{prefix}-{i}" for i in range(count)]
    producer.send_many(queue, sent, headers={"persistent": "true"})
    wait_for(lambda: len(bodies(consumer, prefix + "-")) >= count, 20,
             lambda: f"{count} on the consumer, got {len(bodies(consumer, prefix + '-'))}")
    assert_stays(lambda: len(bodies(consumer, prefix + "-")) == count, 0.5)
    assert sorted(bodies(consumer, prefix + "-")) == sorted(sent)


def test_two_nodes_forward_over_tls_both_ways_once(broker_factory, stomp_client, certs):
    a = tls_node(broker_factory, certs, "a")
    b = tls_node(broker_factory, certs, "b", links=[a])
    wait_links(a, 1)
    wait_links(b, 1)
    assert "TLS handshake failed" not in a.broker.log(5000) + b.broker.log(5000)
    on_a, on_b = stomp_client(a.broker.port), stomp_client(b.broker.port)
    on_a.subscribe("/queue/to-a")
    on_b.subscribe("/queue/to-b")
    # The side that dialled sends, and the side that accepted: a link carries both ways.
    send_and_expect_once(stomp_client(a.broker.port), on_b, "/queue/to-b", prefix="ab")
    send_and_expect_once(stomp_client(b.broker.port), on_a, "/queue/to-a", prefix="ba")


def test_three_nodes_in_a_line_over_tls(broker_factory, stomp_client, certs):
    a = tls_node(broker_factory, certs, "a")
    b = tls_node(broker_factory, certs, "b", links=[a])
    c = tls_node(broker_factory, certs, "c", links=[b])
    wait_links(b, 2)
    on_c, on_a = stomp_client(c.broker.port), stomp_client(a.broker.port)
    on_c.subscribe("/queue/line")
    on_a.subscribe("/queue/back")
    send_and_expect_once(stomp_client(a.broker.port), on_c, "/queue/line", count=30, prefix="ac")
    send_and_expect_once(stomp_client(c.broker.port), on_a, "/queue/back", count=30, prefix="ca")


def test_the_admin_report_says_which_links_are_tls(broker_factory, certs):
    a = tls_node(broker_factory, certs, "a")
    b = tls_node(broker_factory, certs, "b", links=[a])
    wait_links(b, 1)
    out = run_cli("federation", "list", "--server", f"127.0.0.1:{b.broker.http_port}", "--json")
    assert out.returncode == 0, out
    links = json.loads(out.stdout)["links"]
    assert [(l["direction"], l["tls"], l["state"]) for l in links] == [("outbound", True, "up")], links
    table = run_cli("federation", "list", "--server", f"127.0.0.1:{b.broker.http_port}")
    assert table.returncode == 0, table
    [row] = [line.split() for line in table.stdout.splitlines() if line.startswith("b-a ")]
    assert row[1:5] == ["outbound", f"127.0.0.1:{a.fed_port}", "yes", "up"], table.stdout
    out = run_cli("federation", "list", "--server", f"127.0.0.1:{a.broker.http_port}", "--json")
    assert [(l["direction"], l["tls"]) for l in json.loads(out.stdout)["links"]] == [("inbound", True)], out


def test_mutual_tls_required_refuses_a_link_without_a_certificate(broker_factory, stomp_client, certs):
    cert, key, _ = certs.issue("a-server", "localhost")
    a = Node(broker_factory, "a", extra=tls_listener(cert, key, ca=certs.ca_cert, client_certificates="required"))
    without = Node(broker_factory, "b", links=[a], link_extra=tls_link(certs.ca_cert))
    # Refused, and refused again after a back-off; TLS 1.3 tells the dialler after its handshake.
    wait_log(without, "TLS handshake failed (refused by the far side): tlsv13 alert certificate required", count=2)
    wait_log(a, "peer did not return a certificate")
    assert without.established() == 0 and a.established() == 0
    assert_serves_clients(a, stomp_client)

    client_cert, client_key, _ = certs.issue("c-client", "node-c", san=None, client=True)
    c = Node(broker_factory, "c", links=[a], link_extra=tls_link(certs.ca_cert, cert=client_cert, key=client_key))
    wait_links(c, 1)
    on_c = stomp_client(c.broker.port)
    on_c.subscribe("/queue/mtls")
    send_and_expect_once(stomp_client(a.broker.port), on_c, "/queue/mtls", prefix="mt")
    assert without.established() == 0


def test_a_client_certificate_from_another_ca_is_refused(broker_factory, certs):
    cert, key, _ = certs.issue("a-server", "localhost")
    a = Node(broker_factory, "a", extra=tls_listener(cert, key, ca=certs.ca_cert, client_certificates="optional"))
    rogue_ca = certs.make_ca("rogue", "Rogue CA")
    rogue_cert, rogue_key, _ = certs.issue("rogue-client", "node-r", san=None, client=True, ca=rogue_ca)
    b = Node(broker_factory, "b", links=[a], link_extra=tls_link(certs.ca_cert, cert=rogue_cert, key=rogue_key))
    wait_log(a, "TLS handshake failed")
    wait_log(b, "TLS handshake failed", count=2)
    assert a.established() == 0


def test_a_server_certificate_from_an_unknown_ca_is_refused(broker_factory, stomp_client, certs):
    a = tls_node(broker_factory, certs, "a")
    other = Certs(certs.dir / "other")
    b = Node(broker_factory, "b", links=[a], link_extra=tls_link(other.ca_cert))
    wait_log(b, "certificate verify failed", count=2)
    wait_log(a, "TLS handshake failed")
    assert a.established() == 0 and b.established() == 0
    assert_serves_clients(a, stomp_client)
    assert_serves_clients(b, stomp_client)


def test_an_expired_server_certificate_is_refused(broker_factory, certs):
    cert, key, _ = certs.issue("expired", "localhost", days=-1)
    a = Node(broker_factory, "a", extra=tls_listener(cert, key))
    b = Node(broker_factory, "b", links=[a], link_extra=tls_link(certs.ca_cert))
    wait_log(b, "certificate has expired", count=2)
    wait_log(a, "TLS handshake failed")
    assert b.established() == 0


def test_a_server_certificate_for_another_host_name_is_refused(broker_factory, certs):
    a = tls_node(broker_factory, certs, "a")
    wrong = Node(broker_factory, "b", links=[a], link_extra=tls_link(certs.ca_cert, server_name="node.example.com"))
    wait_log(wrong, "certificate verify failed (hostname mismatch)", count=2)
    wait_log(a, "TLS handshake failed")
    assert wrong.established() == 0
    # The name the certificate does carry is accepted.
    right = Node(broker_factory, "c", links=[a], link_extra=tls_link(certs.ca_cert, server_name="localhost"))
    wait_links(right, 1)


def test_plain_link_to_a_tls_listener_fails_cleanly(broker_factory, stomp_client, certs):
    a = tls_node(broker_factory, certs, "a")
    b = Node(broker_factory, "b", links=[a])
    wait_log(b, "closed before it was established", count=2)
    wait_log(a, "TLS handshake failed")
    assert a.established() == 0
    assert_serves_clients(a, stomp_client)


def test_tls_link_to_a_plain_listener_fails_cleanly(broker_factory, stomp_client, certs):
    a = Node(broker_factory, "a")
    b = Node(broker_factory, "b", links=[a], link_extra=tls_link(certs.ca_cert))
    wait_log(b, "(does the far listener speak TLS?)", count=2)
    wait_log(a, "a TLS handshake on a plain port")
    assert a.established() == 0 and b.established() == 0
    assert_serves_clients(a, stomp_client)


def test_a_link_added_at_runtime_takes_the_tls_options(broker_factory, stomp_client, certs):
    a = tls_node(broker_factory, certs, "a")
    b = Node(broker_factory, "b")
    server = f"127.0.0.1:{b.broker.http_port}"
    half = run_cli("federation", "add", "--server", server, "--name", "half", "--connect", f"127.0.0.1:{a.fed_port}",
                   "--ca", certs.ca_cert)
    assert half.returncode == 1 and "400" in half.stderr and "tls = true" in half.stderr, half
    wrong = run_cli("federation", "add", "--server", server, "--name", "wrong", "--connect",
                    f"127.0.0.1:{a.fed_port}", "--tls", "--ca", certs.ca_cert, "--server-name", "elsewhere.example")
    assert wrong.returncode == 0, wrong
    wait_log(b, "certificate verify failed")
    assert run_cli("federation", "remove", "--server", server, "--name", "wrong").returncode == 0
    out = run_cli("federation", "add", "--server", server, "--name", "b-a", "--connect", f"127.0.0.1:{a.fed_port}",
                  "--tls", "--ca", certs.ca_cert, "--server-name", "localhost")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out
    wait_links(b, 1)
    on_a = stomp_client(a.broker.port)
    on_a.subscribe("/queue/runtime")
    send_and_expect_once(stomp_client(b.broker.port), on_a, "/queue/runtime", prefix="rt")


def test_sighup_reloads_the_certificate_and_keeps_open_links(broker_factory, stomp_client, certs, tmp_path):
    first_cert, first_key, _ = certs.issue("first", "localhost")
    live_cert, live_key = tmp_path / "live.crt", tmp_path / "live.key"
    shutil.copy(first_cert, live_cert)
    shutil.copy(first_key, live_key)
    a = Node(broker_factory, "a", extra=tls_listener(live_cert, live_key))
    b = Node(broker_factory, "b", links=[a], link_extra=tls_link(certs.ca_cert))
    wait_links(a, 1)

    second_cert, second_key, _ = certs.issue("second", "localhost")
    shutil.copy(second_cert, live_cert)
    shutil.copy(second_key, live_key)
    a.broker.send_signal(signal.SIGHUP)
    wait_log(a, f"TLS certificate {live_cert} reloaded")
    # The link made before the reload still carries messages, and was not dropped.
    on_b = stomp_client(b.broker.port)
    on_b.subscribe("/queue/reload")
    send_and_expect_once(stomp_client(a.broker.port), on_b, "/queue/reload", prefix="rl")
    assert log_count(a, "' closed") == log_count(b, "link 'b-a' closed") == 0
    # A link made afterwards gets the new certificate, which it verifies.
    c = Node(broker_factory, "c", links=[a], link_extra=tls_link(certs.ca_cert))
    wait_links(c, 1)


def test_a_peer_that_never_finishes_the_handshake_is_dropped(broker_factory, stomp_client, certs):
    cert, key, _ = certs.issue("a-server", "localhost")
    a = Node(broker_factory, "a", extra="establish_timeout_ms = 1000\n" + tls_listener(cert, key))
    silent = []
    for _ in range(3):
        silent.append(socket.create_connection(("127.0.0.1", a.fed_port), timeout=5))
    assert_serves_clients(a, stomp_client)
    wait_log(a, "not established within 1000 ms", count=3, timeout=15)
    for s in silent:
        # The node closed it: the read ends (EOF or reset) rather than timing out.
        s.settimeout(5)
        try:
            assert s.recv(1) == b""
        except ConnectionResetError:
            pass
        s.close()


def test_the_admin_route_refuses_bad_tls_options(broker_factory):
    b = Node(broker_factory, "b")

    def add(body):
        r = request(b.broker.http_port, "POST", "/admin/v1/federation/links", body=json.dumps(body).encode(),
                    headers={"content-type": "application/json"})
        assert r.status == 400, r
        return r.json()["detail"]
    base = {"name": "x", "connect": "127.0.0.1:1"}
    assert "'tls' must be true or false" in add({**base, "tls": "yes"})
    assert "'ca_file' must be a string" in add({**base, "tls": True, "ca_file": 7})
    assert "over 4096 bytes" in add({**base, "tls": True, "ca_file": "c" * 5000})
    assert "go together" in add({**base, "tls": True, "cert_file": "me.crt"})
    assert "need tls = true" in add({**base, "server_name": "node.example"})
    # A file that does not load: the link is kept, logged, and retried like a refused connect.
    r = request(b.broker.http_port, "POST", "/admin/v1/federation/links",
                body=json.dumps({**base, "tls": True, "ca_file": "/nonexistent/ca.pem"}).encode(),
                headers={"content-type": "application/json"})
    assert r.status == 201, r
    wait_log(b, "link 'x': TLS not usable", count=2)


def test_a_client_certificate_names_the_user_the_acl_applies_to(broker_factory, stomp_client, certs):
    cert, key, _ = certs.issue("b-server", "localhost")
    acl = "user linker\nqueue write in.>\n\nuser bob\nqueue readwrite >\n"
    b = Node(broker_factory, "b", users=[passwd("linker", "s3cret"), passwd("bob", "builder")], acl=acl,
             extra=tls_listener(cert, key, ca=certs.ca_cert, client_certificates="required", identity=True))
    client_cert, client_key, _ = certs.issue("a-client", "linker", san=None, client=True)
    # No username nor password: the certificate's CN is the user.
    a = Node(broker_factory, "a", links=[b], link_extra=tls_link(certs.ca_cert, cert=client_cert, key=client_key))
    wait_links(a, 1)
    on_b = stomp_client(b.broker.port, connect_headers={"login": "bob", "passcode": "builder"})
    on_b.subscribe("/queue/in.orders")
    on_b.subscribe("/queue/secret")
    producer = stomp_client(a.broker.port)
    send_and_expect_once(producer, on_b, "/queue/in.orders", count=3, prefix="in")
    producer.send("/queue/secret", "not-for-b", headers={"persistent": "true"})
    wait_for(lambda: 'user "linker" may not send to /queue/secret' in a.broker.log(5000), 15, lambda: a.broker.log())
    assert bodies(on_b, "not-for") == []
