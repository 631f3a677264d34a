"""Seed 000's peer groups on the relay (docs/relay.md): a group is a namespace of pipes, and
where the broker has users a group's password is that of the user named like the group."""

import subprocess
import uuid

import pytest

from helpers.broker import carrier_bin
from helpers.http import basic, request
from helpers.raw_relay import Peer


def passwd_line(user, password):
    r = subprocess.run([str(carrier_bin()), "passwd", user], input=password + "\n", capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.fixture
def users_broker(broker_factory):
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\nfailure_delay_ms = 0\n')
    (b.workdir / "users.txt").write_text(passwd_line("alice", "wonderland") + "\n" +
                                         passwd_line("club", "secret") + "\n")
    b.start()
    return b


def test_join_checks_the_group_password_and_scopes_its_pipes(users_broker):
    port = users_broker.http_port
    assert request(port, "GET", "/unknown-unknown?0,-1,http://h/E/pid").status == 401, "HTTP Basic still applies"
    peer = Peer(port, headers=basic("alice", "wonderland"))
    m = peer.call("create", [("name", "club"), ("type", "GROUP")])
    assert m.get("response") == "success" and m.get("type") == "GROUP"
    group_id = m.get("id")
    [found] = peer.collect(peer.ask("search", [("type", "GROUP"), ("attr", "id"), ("value", group_id)]))
    assert found.get("name") == "club"
    refused = peer.call("join", [("id", group_id), ("arg", "wrong")])
    assert refused.get("response") == "error" and "wrong password" in refused.get("reason")
    assert peer.call("join", [("id", group_id), ("arg", "secret")]).get("response") == "success"
    pipe = f"p{uuid.uuid4().hex[:8]}"
    created = peer.call("create", [("name", pipe), ("type", "PIPE"), ("arg", "JxtaUnicast")])
    # The pipe is the queue club.<pipe>: its id carries that name.
    assert created.get("id") == "urn:jxta:uuid-" + ("Qclub." + pipe).encode().hex().upper() + "04"
