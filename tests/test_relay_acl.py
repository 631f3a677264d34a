"""The ACL on the relay (docs/relay.md, "Access"; docs/auth.md): create, search, join, listen and
send are checked for the user the HTTP request authenticated as (anonymous without users); a
refusal is the seed's `error` response with a reason, never success; a peer is its user's."""

import uuid

import pytest

from helpers.http import basic, request
from helpers.raw_relay import MEDIA_TYPE, Peer
from test_relay_groups import passwd_line

ACL = """
user alice
queue readwrite a.>
topic readwrite a.>
queue read ro.>

user bob
queue readwrite b.>
topic read b.>
"""


def queue_pipe(name):
    return "urn:jxta:uuid-" + ("Q" + name).encode().hex().upper() + "04"


def topic_pipe(name):
    return "urn:jxta:uuid-" + ("T" + name).encode().hex().upper() + "04"


@pytest.fixture(scope="module")
def user_lines():
    return passwd_line("alice", "wonderland") + "\n" + passwd_line("bob", "builder") + "\n"


@pytest.fixture
def acl_broker(broker_factory, user_lines):
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\nacl_file = "acl.txt"\n'
                                            'failure_delay_ms = 0\n')
    (b.workdir / "users.txt").write_text(user_lines)
    (b.workdir / "acl.txt").write_text(ACL)
    b.start()
    return b


def refused(m, action):
    assert m.get("response") == "error", m
    assert action in m.get("reason"), m.get("reason")


def test_each_operation_is_checked_against_the_acl(acl_broker, stomp_client):
    port = acl_broker.http_port
    alice = Peer(port, headers=basic("alice", "wonderland"))
    ok = alice.call("create", [("type", "PIPE"), ("name", "a.inbox"), ("arg", "JxtaUnicast")])
    assert ok.get("response") == "success" and ok.get("id") == queue_pipe("a.inbox")
    refused(alice.call("create", [("type", "PIPE"), ("name", "b.inbox"), ("arg", "JxtaUnicast")]),
            'user "alice" may not create queue b.inbox')
    refused(alice.call("create", [("type", "GROUP"), ("name", "b")]), 'may not create group b')
    assert alice.call("create", [("type", "GROUP"), ("name", "a")]).get("response") == "success"
    # listen needs read; send needs write.
    refused(alice.call("listen", [("id", queue_pipe("b.inbox"))]), 'may not listen to queue b.inbox')
    refused(alice.call("send", [("id", queue_pipe("b.inbox"))], extra=[("", "message", "x")]),
            'may not send to queue b.inbox')
    assert alice.call("listen", [("id", queue_pipe("ro.news"))]).get("response") == "success"
    refused(alice.call("send", [("id", queue_pipe("ro.news"))], extra=[("", "message", "x")]),
            'may not send to queue ro.news')
    refused(alice.call("join", [("id", "urn:jxta:uuid-" + "Gb".encode().hex().upper() + "02")]), 'may not join group b')
    # A refused send stored nothing: bob's queue is empty.
    bob = Peer(port, headers=basic("bob", "builder"))
    assert bob.call("listen", [("id", queue_pipe("b.inbox"))]).get("response") == "success"
    assert [m for m in bob.post(wait_ms=500, max_messages=10) if m.get("response") == "message"] == []
    # What is allowed works end to end.
    assert alice.call("send", [("id", queue_pipe("a.inbox"))], extra=[("", "message", "mine")]).get(
        "response") == "success"


def test_search_shows_only_what_the_user_may_use(acl_broker):
    port = acl_broker.http_port
    alice = Peer(port, headers=basic("alice", "wonderland"))
    bob = Peer(port, headers=basic("bob", "builder"))
    tag = uuid.uuid4().hex[:6]
    for peer, pipe in ((alice, f"a.{tag}"), (bob, f"b.{tag}")):
        assert peer.call("create", [("type", "PIPE"), ("name", pipe), ("arg", "JxtaUnicast")]).get(
            "response") == "success"

    def names(peer):
        return sorted(m.get("name") for m in peer.collect(
            peer.ask("search", [("type", "PIPE"), ("attr", "name"), ("value", f"*{tag}")]), count=1))
    assert names(alice) == [f"a.{tag}"]
    assert names(bob) == [f"b.{tag}"]


def test_a_peer_belongs_to_the_user_that_connected_it(acl_broker):
    port = acl_broker.http_port
    alice = Peer(port, headers=basic("alice", "wonderland"))
    for method, target in (("POST", f"/{alice.id}?0,-1,{alice.base}"),
                           ("GET", f"/{alice.id}?0,-1,{alice.base}/connect,60000,keep,other")):
        r = request(port, method, target, body=b"", headers={"Content-Type": MEDIA_TYPE, **basic("bob", "builder")})
        assert r.status == 403 and b"another user" in r.body, r
    r = request(port, "POST", f"/{alice.id}?0,-1,{alice.base}", body=b"", headers={"Content-Type": MEDIA_TYPE})
    assert r.status == 401, "with users, an anonymous request is not let in"
    assert request(port, "POST", f"/{alice.id}?0,-1,{alice.base}", body=b"",
                   headers={"Content-Type": MEDIA_TYPE, **basic("alice", "wonderland")}).status == 200


def test_anonymous_clients_get_the_anonymous_rules(broker_factory):
    b = broker_factory(start=False, config='[auth]\nacl_file = "acl.txt"\n')
    (b.workdir / "acl.txt").write_text("queue readwrite public.>\n")
    b.start()
    peer = Peer(b.http_port)
    assert peer.call("create", [("type", "PIPE"), ("name", "public.x")]).get("response") == "success"
    refused(peer.call("create", [("type", "PIPE"), ("name", "private.x")]),
            "an anonymous client may not create queue private.x")
    refused(peer.call("listen", [("id", topic_pipe("public.x"))]), "may not listen to topic public.x")
