"""Client ids and durable subscriptions belong to a user (issue 16): reusing another user's
client id neither attaches to their STOMP durable subscription (ERROR `access denied`) nor takes
over their MQTT session (CONNACK 5 / 0x87, the owner stays connected). STOMP durable names escape
the client id, so ids holding `:` no longer collide."""

import uuid

import pytest

from helpers import raw_mqtt
from helpers.mqtt_clients import mqtt_client  # noqa: F401
from helpers.raw_stomp import RawStomp
from helpers.wait import assert_stays
from test_auth import passwd

PASSWORDS = {"alice": "wonderland", "bob": "builder"}
NOT_AUTHORIZED_311 = 5
NOT_AUTHORIZED_5 = 0x87


@pytest.fixture(scope="module")
def users_text():
    return "".join(passwd(name, password) + "\n" for name, password in PASSWORDS.items())


@pytest.fixture
def users_broker(broker_factory, users_text):
    broker = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\nfailure_delay_ms = 0\n')
    (broker.workdir / "users.txt").write_text(users_text)
    broker.start()
    return broker


def stomp(port, client_id, user=None):
    raw = RawStomp(port)
    headers = [("client-id", client_id)]
    if user:
        headers += [("login", user), ("passcode", PASSWORDS[user])]
    raw.connect("1.2", headers=headers)
    return raw


def durable_subscribe(raw, destination, name):
    receipt = f"r-{uuid.uuid4().hex[:8]}"
    raw.send_frame("SUBSCRIBE", [("destination", destination), ("id", "s"), ("receipt", receipt),
                                 ("activemq.subscriptionName", name)])
    frame = raw.read_frame()
    assert frame.header("receipt-id") == receipt, frame
    return frame


def send(raw, destination, body):
    receipt = f"r-{uuid.uuid4().hex[:8]}"
    raw.send_frame("SEND", [("destination", destination), ("receipt", receipt)], body)
    frame = raw.read_frame()
    assert frame.command == "RECEIPT", frame


def test_stomp_durable_subscription_cannot_be_taken_with_bobs_client_id(users_broker):
    topic = f"/topic/t{uuid.uuid4().hex[:8]}"
    with stomp(users_broker.port, "bob-app", "bob") as bob:
        assert durable_subscribe(bob, topic, "news").command == "RECEIPT"
    with stomp(users_broker.port, "pub", "bob") as pub:
        send(pub, topic, b"for bob")
    with stomp(users_broker.port, "bob-app", "alice") as alice:
        frame = durable_subscribe(alice, topic, "news")
        assert frame.command == "ERROR" and frame.header("message") == "access denied", frame
        assert b"another user" in frame.body
        # Nor removed by an UNSUBSCRIBE under his name; the connection stays up.
        alice.send_frame("UNSUBSCRIBE", [("id", "s"), ("activemq.subscriptionName", "news"), ("receipt", "u")])
        frame = alice.read_frame()
        assert frame.command == "ERROR" and frame.header("message") == "access denied", frame
        assert [f for f in alice.idle(0.2) if f.command == "MESSAGE"] == [] and not alice.closed
    with stomp(users_broker.port, "bob-app", "bob") as bob:
        assert durable_subscribe(bob, topic, "news").command == "RECEIPT"
        message = bob.read_frame()
        assert message.command == "MESSAGE" and message.body == b"for bob"


def test_stomp_client_ids_holding_colons_do_not_collide(broker):
    """`a:b` + `c` and `a` + `b:c` were both `stomp:a:b:c`: the second replaced the first."""
    t1, t2 = (f"/topic/t{uuid.uuid4().hex[:8]}" for _ in range(2))
    with stomp(broker.port, "a:b") as x:
        assert durable_subscribe(x, t1, "c").command == "RECEIPT"
    with stomp(broker.port, "a") as y:
        assert durable_subscribe(y, t2, "b:c").command == "RECEIPT"
    with stomp(broker.port, "pub") as pub:
        send(pub, t1, b"kept for a:b")
    with stomp(broker.port, "a:b") as x:
        assert durable_subscribe(x, t1, "c").command == "RECEIPT"
        message = x.read_frame()
        assert message.command == "MESSAGE" and message.body == b"kept for a:b"


@pytest.mark.parametrize("version", ["3.1.1", "5"])
def test_mqtt_session_cannot_be_taken_over_by_another_user(users_broker, mqtt_client, version):
    client_id = f"bob-{uuid.uuid4().hex[:6]}"
    bob = mqtt_client(users_broker, version=version, client_id=client_id, clean=False, username="bob",
                      password="builder")
    assert bob.subscribe("bob/in", qos=1) == [1]
    alice = mqtt_client(users_broker, version=version, client_id=client_id, clean=False, connect=False)
    rc = alice.connect(username="alice", password="wonderland", expect_rc=None)["rc"]
    assert rc == (NOT_AUTHORIZED_5 if version == "5" else NOT_AUTHORIZED_311)
    # bob was neither disconnected nor robbed of his session.
    assert_stays(lambda: bob.disconnects == [], duration=0.3)
    bob.publish("bob/in", b"still mine", qos=1)
    assert bob.wait_messages(1)[0].payload == b"still mine"


def test_mqtt_away_session_stays_its_owners(users_broker, mqtt_client):
    client_id = f"bob-{uuid.uuid4().hex[:6]}"
    bob = mqtt_client(users_broker, client_id=client_id, clean=False, username="bob", password="builder")
    assert bob.subscribe("bob/in", qos=1) == [1]
    bob.disconnect()
    c = raw_mqtt.RawMqtt(users_broker.mqtt_port, 5)
    c.send(raw_mqtt.connect(client_id, version=5, clean=False, username="alice", password="wonderland",
                            props={"session_expiry_interval": 60}))
    ack = c.expect(raw_mqtt.CONNACK)
    assert ack.reason == NOT_AUTHORIZED_5 and not ack.session_present, ack
    c.close()
    again = mqtt_client(users_broker, client_id=client_id, clean=False, connect=False)
    assert again.connect(username="bob", password="builder")["flags"]["session present"] == 1


def test_stomp_durable_subscription_owner_survives_a_restart(users_broker):
    topic = f"/topic/t{uuid.uuid4().hex[:8]}"
    with stomp(users_broker.port, "bob-app", "bob") as bob:
        assert durable_subscribe(bob, topic, "news").command == "RECEIPT"
    users_broker.stop()
    users_broker.start()
    with stomp(users_broker.port, "bob-app", "alice") as alice:
        frame = durable_subscribe(alice, topic, "news")
        assert frame.command == "ERROR" and frame.header("message") == "access denied", frame
    with stomp(users_broker.port, "bob-app", "bob") as bob:
        assert durable_subscribe(bob, topic, "news").command == "RECEIPT"
