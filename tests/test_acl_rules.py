"""Authorization (issue 16): the ACL file ([auth] acl_file) checked on every entry point — STOMP
SEND and SUBSCRIBE (ERROR `access denied`, the connection stays up), MQTT PUBLISH (5.0: 0x87;
3.1.1: dropped silently) and SUBSCRIBE (SUBACK 0x87 / 0x80), wills, HTTP (403) — with `%u`/`%c`
patterns, groups, deny-beats-allow, and SIGHUP reloading the rules for new operations."""

import base64
import json
import signal
import urllib.error
import urllib.request
import uuid

import pytest

from helpers import raw_mqtt
from helpers.mqtt_clients import mqtt_client  # noqa: F401
from helpers.raw_stomp import RawStomp
from helpers.wait import assert_stays, wait_for
from test_auth import passwd

PASSWORDS = {"alice": "wonderland", "bob": "builder", "carol": "singer"}

ACL = """\
# Carrier ACL used by test_acl_rules.py
user alice
queue readwrite orders.>
queue deny write orders.audit
topic read news/#
topic read,create feeds.>

user bob
queue readwrite bob.>
topic readwrite news/#

group ops
member carol
queue all ops.>

# Everyone's own mailbox, and MQTT devices by client id.
pattern queue readwrite inbox.%u
pattern readwrite devices/%c/#
"""


@pytest.fixture(scope="module")
def users_text():
    return "".join(passwd(name, password) + "\n" for name, password in PASSWORDS.items())


@pytest.fixture
def acl_broker(broker_factory, users_text):
    """Factory: a broker with alice, bob and carol and the ACL above (acl.txt beside carrier.toml)."""
    def make(acl=ACL, start=True):
        config = '[auth]\nusers_file = "users.txt"\nacl_file = "acl.txt"\nfailure_delay_ms = 0\n'
        broker = broker_factory(start=False, config=config)
        (broker.workdir / "users.txt").write_text(users_text)
        (broker.workdir / "acl.txt").write_text(acl)
        if start:
            broker.start()
        return broker
    return make


def stomp_login(port, user):
    raw = RawStomp(port)
    raw.connect("1.2", headers=[("login", user), ("passcode", PASSWORDS[user])])
    return raw


def send(raw, destination, body=b"x"):
    """SEND with a receipt; returns the RECEIPT or ERROR frame that answers it."""
    receipt = f"r-{uuid.uuid4().hex[:8]}"
    raw.send_frame("SEND", [("destination", destination), ("receipt", receipt)], body)
    frame = raw.read_frame()
    assert frame.header("receipt-id") == receipt, frame
    return frame


def subscribe(raw, destination, headers=()):
    receipt = f"r-{uuid.uuid4().hex[:8]}"
    raw.send_frame("SUBSCRIBE", [("destination", destination), ("id", uuid.uuid4().hex[:8]),
                                 ("receipt", receipt), *headers])
    frame = raw.read_frame()
    assert frame.header("receipt-id") == receipt, frame
    return frame


def assert_denied(frame, destination):
    assert frame.command == "ERROR", frame
    assert frame.header("message") == "access denied", frame
    assert destination.encode() in frame.body, frame


# --- STOMP ------------------------------------------------------------------------------------

def test_stomp_send_and_subscribe_are_checked_and_the_connection_stays(acl_broker):
    broker = acl_broker()
    with stomp_login(broker.port, "alice") as alice:
        assert send(alice, "/queue/orders.eu").command == "RECEIPT"
        assert_denied(send(alice, "/queue/bob.inbox"), "/queue/bob.inbox")
        assert_denied(send(alice, "/queue/orders.audit"), "/queue/orders.audit")  # deny beats allow
        assert_denied(subscribe(alice, "/queue/bob.inbox"), "/queue/bob.inbox")
        # A wildcard that could reach a denied queue is refused whole.
        assert_denied(subscribe(alice, "/queue/>"), "/queue/>")
        # Still connected: what is allowed goes on working.
        assert subscribe(alice, "/queue/orders.eu").command == "RECEIPT"
        message = alice.read_frame()
        assert message.command == "MESSAGE" and message.header("destination") == "/queue/orders.eu"


def test_alice_cannot_read_bobs_inbox_and_bob_keeps_his_message(acl_broker):
    broker = acl_broker()
    with stomp_login(broker.port, "bob") as bob:
        assert send(bob, "/queue/bob.inbox", b"for bob only").command == "RECEIPT"
    with stomp_login(broker.port, "alice") as alice:
        assert_denied(subscribe(alice, "/queue/bob.inbox"), "/queue/bob.inbox")
        assert [f for f in alice.idle(0.3) if f.command == "MESSAGE"] == []
        assert not alice.closed
    with stomp_login(broker.port, "bob") as bob:
        assert subscribe(bob, "/queue/bob.inbox").command == "RECEIPT"
        message = bob.read_frame()
        assert message.command == "MESSAGE" and message.body == b"for bob only"


def test_pattern_gives_each_user_a_mailbox_in_one_line(acl_broker):
    broker = acl_broker()
    with stomp_login(broker.port, "alice") as alice, stomp_login(broker.port, "bob") as bob:
        assert send(bob, "/queue/inbox.bob").command == "RECEIPT"
        assert send(alice, "/queue/inbox.alice").command == "RECEIPT"
        assert_denied(send(alice, "/queue/inbox.bob"), "/queue/inbox.bob")
        assert_denied(subscribe(bob, "/queue/inbox.alice"), "/queue/inbox.alice")
        assert subscribe(bob, "/queue/inbox.bob").command == "RECEIPT"


def test_group_members_get_the_groups_rules(acl_broker):
    broker = acl_broker()
    with stomp_login(broker.port, "carol") as carol, stomp_login(broker.port, "alice") as alice:
        assert send(carol, "/queue/ops.deploy").command == "RECEIPT"
        assert_denied(send(alice, "/queue/ops.deploy"), "/queue/ops.deploy")


def test_durable_subscription_needs_create(acl_broker):
    broker = acl_broker()
    with RawStomp(broker.port) as bob:
        bob.connect("1.2", headers=[("login", "bob"), ("passcode", "builder"), ("client-id", "bob-app")])
        # bob may read news but has no create right: no durable subscription.
        frame = subscribe(bob, "/topic/news.a", [("activemq.subscriptionName", "s1")])
        assert_denied(frame, "/topic/news.a")
        assert subscribe(bob, "/topic/news.a").command == "RECEIPT"
    with RawStomp(broker.port) as alice:
        alice.connect("1.2", headers=[("login", "alice"), ("passcode", "wonderland"), ("client-id", "alice-app")])
        assert subscribe(alice, "/topic/feeds.x", [("activemq.subscriptionName", "s1")]).command == "RECEIPT"


def test_anonymous_client_gets_only_the_anonymous_rules(broker_factory):
    broker = broker_factory(start=False, config='[auth]\nacl_file = "acl.txt"\n')
    (broker.workdir / "acl.txt").write_text("topic read public/#\nqueue write drop.box\n")
    broker.start()
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        assert send(raw, "/queue/drop.box").command == "RECEIPT"
        assert_denied(send(raw, "/queue/other"), "/queue/other")
        assert subscribe(raw, "/topic/public.news").command == "RECEIPT"


def test_sighup_reloads_the_acl_for_new_operations(acl_broker):
    broker = acl_broker()
    with stomp_login(broker.port, "alice") as alice:
        assert_denied(send(alice, "/queue/later.q"), "/queue/later.q")
        (broker.workdir / "acl.txt").write_text(ACL.replace("user alice\n", "user alice\nqueue write later.q\n"))
        broker.send_signal(signal.SIGHUP)
        wait_for(lambda: "ACL reloaded" in broker.log(), message="the ACL reload in the log")
        assert send(alice, "/queue/later.q").command == "RECEIPT"
        # A broken file is refused and the rules in force stay.
        (broker.workdir / "acl.txt").write_text("user alice\nfrobnicate\n")
        broker.send_signal(signal.SIGHUP)
        wait_for(lambda: "ACL not reloaded" in broker.log(), message="the refused reload in the log")
        assert send(alice, "/queue/later.q").command == "RECEIPT"


# --- MQTT -------------------------------------------------------------------------------------

def test_mqtt311_publish_denied_is_dropped_silently(acl_broker, mqtt_client):
    broker = acl_broker()
    alice = mqtt_client(broker, username="alice", password="wonderland")
    assert alice.subscribe("news/#", qos=1) == [1]
    assert alice.subscribe(f"devices/{alice.client_id}/#", qos=1) == [1]
    alice.publish("news/a", b"denied", qos=1)  # PUBACKed all the same (3.1.1 cannot refuse)
    alice.publish(f"devices/{alice.client_id}/t", b"allowed", qos=1)
    alice.wait_messages(1)
    assert alice.payloads() == [b"allowed"]
    # SUBSCRIBE outside the rules: 0x80 for that filter, the others granted.
    assert alice.subscribe([("bob/x", 1), ("news/b", 0)]) == [0x80, 0]


def test_mqtt5_publish_subscribe_and_will_get_0x87(acl_broker):
    broker = acl_broker()
    c = raw_mqtt.RawMqtt(broker.mqtt_port, 5)
    c.send(raw_mqtt.connect("alice-5", version=5, username="alice", password="wonderland"))
    assert c.expect(raw_mqtt.CONNACK).reason == 0
    c.send(raw_mqtt.publish("news/a", b"x", qos=1, packet_id=7, version=5))
    puback = c.expect(raw_mqtt.PUBACK)
    assert puback.reason == 0x87
    c.send(raw_mqtt.publish("devices/alice-5/t", b"x", qos=2, packet_id=8, version=5))
    assert c.expect(raw_mqtt.PUBREC).reason in (0, 0x10)
    c.send(raw_mqtt.subscribe([("bob/#", 1), ("news/#", 1)], packet_id=9, version=5))
    assert c.expect(raw_mqtt.SUBACK).reasons == [0x87, 1]
    c.close()
    # A will on a topic the user may not publish to: the CONNECT is refused.
    w = raw_mqtt.RawMqtt(broker.mqtt_port, 5)
    w.send(raw_mqtt.connect("alice-will", version=5, username="alice", password="wonderland",
                            will=("bob/last", b"bye", 0, False)))
    assert w.expect(raw_mqtt.CONNACK).reason == 0x87
    w.close()


def test_retained_message_is_a_write(acl_broker, mqtt_client):
    broker = acl_broker()
    alice = mqtt_client(broker, username="alice", password="wonderland")
    alice.publish("news/r", b"retained by alice", qos=1, retain=True)
    bob = mqtt_client(broker, username="bob", password="builder")
    bob.publish("news/r2", b"retained by bob", qos=1, retain=True)
    assert bob.subscribe("news/#", qos=1) == [1]
    bob.wait_messages(1)
    assert_stays(lambda: bob.payloads() == [b"retained by bob"], duration=0.3)


# --- HTTP -------------------------------------------------------------------------------------

def http(broker, method, path, user, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{broker.http_port}{path}", data=body, method=method)
    token = base64.b64encode(f"{user}:{PASSWORDS[user]}".encode()).decode()
    request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Content-Type"), response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read()


def test_http_routes_answer_403(acl_broker):
    broker = acl_broker()
    status, _, _ = http(broker, "POST", "/v1/queues/orders.http/messages", "alice", b"ok")
    assert status == 201
    status, content_type, body = http(broker, "POST", "/v1/queues/bob.inbox/messages", "alice", b"no")
    assert status == 403 and content_type.startswith("application/problem+json")
    assert "bob.inbox" in json.loads(body)["detail"]
    status, content_type, _ = http(broker, "GET", "/v1/queues/bob.inbox/messages?wait=0", "alice")
    assert status == 403 and content_type.startswith("application/problem+json")
    status, _, _ = http(broker, "GET", "/v1/queues/orders.http/messages?wait=0", "alice")
    assert status == 200
