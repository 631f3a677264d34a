"""MQTT session state across broker restarts (SIGKILL and SIGTERM), on every store backend:
the session record (subscription options, expiry), QoS 2 exchanges half-way, delayed wills, and
wills of clients still connected when the broker shuts down.

The state lives in reserved queues (`$mqtt-sessions`, `$mqtt-qos2`, `$mqtt-wills`); see
docs/mqtt.md "Persistence".
"""

import signal
import time

import pytest
from paho.mqtt.subscribeoptions import SubscribeOptions

from helpers import postgres
from helpers import raw_mqtt as raw
from helpers.http import request
from helpers.mqtt_clients import PacketTypes, mqtt_client, props, unique_topic  # noqa: F401
from helpers.wait import assert_stays, wait_for

BACKENDS = ["log", "sqlite", "postgres"]
SIGNALS = [pytest.param(signal.SIGKILL, id="sigkill"), pytest.param(signal.SIGTERM, id="sigterm")]


@pytest.fixture(params=BACKENDS)
def store_broker(request, broker_factory):
    """Factory: a started broker on the backend under test."""
    backend = request.param

    def make(**kwargs):
        kwargs.setdefault("log_level", "debug")  # tests wait for "state stored" lines
        if backend == "postgres":
            server = request.getfixturevalue("postgres_server")
            kwargs.setdefault("config", postgres.broker_config(postgres.unique_schema()))
            kwargs["extra_args"] = list(kwargs.get("extra_args", ())) + ["--postgres", server.url]
        return broker_factory(store=backend, **kwargs)

    return make


def broker_knows_none_of(broker, client_id):
    r = request(broker.http_port, "GET", f"/admin/v1/connections?filter={client_id}")
    assert r.status == 200, r
    return r.json()["total"] == 0


def restart(broker, sig):
    broker.stop(sig)
    broker.start()


def logged(broker, text):
    return text in broker.log(tail_lines=10**6)


def wait_stored(broker, cid, will=False):
    """Waits until the registry has the away session's record (and will) durable: a client
    cannot see that, and SIGKILL must come after it for the test to mean anything."""
    text = f"client '{cid}': away, session state stored" + (", will pending" if will else "")
    wait_for(lambda: logged(broker, text), 5, text)


def expiry(seconds):
    return props(PacketTypes.CONNECT, SessionExpiryInterval=seconds)


def session_present(broker, cid, version=5):
    """Connects with clean start 0 and expiry 0 (the session then ends with this connection)."""
    probe = raw.RawMqtt(broker.mqtt_port, version)
    try:
        kwargs = {"props": {"session_expiry_interval": 0}} if version == 5 else {}
        return probe.connect(cid, clean=False, **kwargs).session_present
    finally:
        probe.close()


# --- 1. the session record --------------------------------------------------------------------

@pytest.mark.parametrize("sig", SIGNALS)
def test_subscription_options_survive_a_restart(store_broker, mqtt_client, sig):
    broker = store_broker()
    topic = unique_topic()
    cid = unique_topic("opts")
    c = mqtt_client(broker, version="5", client_id=cid, properties=expiry(300))
    options = SubscribeOptions(qos=2, noLocal=True, retainAsPublished=True)
    c.subscribe([(topic, options)], properties=props(PacketTypes.SUBSCRIBE, SubscriptionIdentifier=7))
    c.disconnect()
    restart(broker, sig)
    c = mqtt_client(broker, version="5", client_id=cid, clean=False, properties=expiry(300))
    assert c.connack["flags"]["session present"] == 1
    # No-local: its own message does not come back.
    c.publish(topic, b"own", qos=1)
    mqtt_client(broker, version="5").publish(topic, b"theirs", qos=2, retain=True)
    m = c.wait_messages(1)[0]
    assert m.payload == b"theirs"
    assert m.qos == 2, "the granted QoS 2 is kept, not rebuilt as 1"
    assert m.retain, "retain as published is kept"
    assert m.properties.SubscriptionIdentifier == [7]
    assert_stays(lambda: c.count() == 1, 0.3, "no-local is kept")


@pytest.mark.parametrize("sig", SIGNALS)
def test_qos2_subscription_of_a_311_session_survives_a_restart(store_broker, mqtt_client, sig):
    broker = store_broker()
    topic = unique_topic()
    cid = unique_topic("q2")
    c = mqtt_client(broker, client_id=cid, clean=False)
    c.subscribe(topic, 2)
    c.disconnect()
    restart(broker, sig)
    mqtt_client(broker).publish(topic, b"while away", qos=2)
    c = mqtt_client(broker, client_id=cid, clean=False)
    assert c.connack["flags"]["session present"] == 1
    assert [(m.payload, m.qos) for m in c.wait_messages(1)] == [(b"while away", 2)]


@pytest.mark.parametrize("sig", SIGNALS)
def test_session_expiry_is_rearmed_after_a_restart(store_broker, mqtt_client, sig):
    broker = store_broker()
    topic = unique_topic()
    cid = unique_topic("rearm")
    c = mqtt_client(broker, version="5", client_id=cid, properties=expiry(2))
    c.subscribe(topic, 1)
    c.disconnect()
    mqtt_client(broker).publish(topic, b"kept until expiry", qos=1)
    restart(broker, sig)
    wait_for(lambda: logged(broker, f"client '{cid}': session expired"), 10, "the session to expire")
    assert not session_present(broker, cid)


def test_session_expired_while_down_is_deleted_at_start(store_broker, mqtt_client):
    broker = store_broker()
    topic = unique_topic()
    cid = unique_topic("down")
    c = mqtt_client(broker, version="5", client_id=cid, properties=expiry(3))
    c.subscribe(topic, 1)
    c.disconnect()
    wait_stored(broker, cid)
    deadline = time.time() + 3.2  # the broker's clock started before it stored the record
    mqtt_client(broker).publish(topic, b"stale", qos=1)
    broker.stop(signal.SIGKILL)
    assert not logged(broker, f"client '{cid}': session expired"), "expired before the kill: too slow a machine"
    wait_for(lambda: time.time() > deadline, 5, "the expiry to pass while the broker is down")
    broker.start()
    wait_for(lambda: logged(broker, f"client '{cid}': session expired while the broker was down"), 10,
             "the expiry at start-up to be logged")
    c = mqtt_client(broker, version="5", client_id=cid, clean=False, properties=expiry(300))
    assert c.connack["flags"]["session present"] == 0
    c.subscribe(topic, 1)
    assert_stays(lambda: c.count() == 0, 0.3, "its stored messages went with it")


def test_connected_session_expires_after_a_crash(store_broker, mqtt_client):
    """Connected when the broker was killed: the expiry counts from the restart."""
    broker = store_broker()
    cid = unique_topic("crash")
    c = mqtt_client(broker, version="5", client_id=cid, properties=expiry(1))
    c.subscribe(unique_topic(), 1)
    broker.stop(signal.SIGKILL)
    c.close_quietly()
    broker.start()
    wait_for(lambda: logged(broker, f"client '{cid}': session expired"), 10, "the session to expire")
    assert not session_present(broker, cid)


def test_session_without_expiry_record_stays(broker_factory, mqtt_client):
    """A 3.1.1 persistent session never expires; an unsubscribe is kept across a restart too."""
    broker = broker_factory()
    a, b = unique_topic(), unique_topic()
    cid = unique_topic("keep")
    c = mqtt_client(broker, client_id=cid, clean=False)
    c.subscribe(a, 1)
    c.subscribe(b, 1)
    c.unsubscribe(a)
    c.disconnect()
    restart(broker, signal.SIGKILL)
    pub = mqtt_client(broker)
    pub.publish(a, b"unsubscribed", qos=1)
    pub.publish(b, b"subscribed", qos=1)
    c = mqtt_client(broker, client_id=cid, clean=False)
    assert c.connack["flags"]["session present"] == 1
    assert c.wait_messages(1)[0].payload == b"subscribed"
    assert_stays(lambda: c.count() == 1, 0.3)


# --- 2. QoS 2 in flight -----------------------------------------------------------------------

@pytest.mark.parametrize("sig", SIGNALS)
def test_qos2_inbound_survives_a_restart(store_broker, mqtt_client, sig):
    """PUBREC sent, PUBREL not yet received when the broker goes down: the resent PUBLISH is
    recognised (PUBREC, not routed again) and the PUBREL gets PUBCOMP (success, not 0x92)."""
    broker = store_broker()
    topic = unique_topic()
    sub_id = unique_topic("q2sub")
    sub = mqtt_client(broker, client_id=sub_id, clean=False)
    sub.subscribe(topic, 2)
    sub.disconnect()
    cid = unique_topic("q2in")
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect(cid, clean=False, props={"session_expiry_interval": 300})
    c.send(raw.publish(topic, b"exactly once", qos=2, packet_id=9, version=5))
    assert c.expect(raw.PUBREC).reason == 0
    restart(broker, sig)
    c.close()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    assert c.connect(cid, clean=False, props={"session_expiry_interval": 300}).session_present
    c.send(raw.publish(topic, b"exactly once", qos=2, packet_id=9, dup=True, version=5))
    assert c.expect(raw.PUBREC).packet_id == 9
    c.send(raw.ack(raw.PUBREL, 9, version=5))
    comp = c.expect(raw.PUBCOMP)
    assert (comp.packet_id, comp.reason) == (9, 0)
    sub = mqtt_client(broker, client_id=sub_id, clean=False)
    assert sub.wait_messages(1)[0].payload == b"exactly once"
    assert_stays(lambda: sub.count() == 1, 0.3, "routed once")
    # The packet id is free again: a new message with it is routed.
    c.send(raw.publish(topic, b"next", qos=2, packet_id=9, version=5))
    c.expect(raw.PUBREC)
    c.send(raw.ack(raw.PUBREL, 9, version=5))
    c.expect(raw.PUBCOMP)
    assert sub.wait_messages(2)[1].payload == b"next"
    c.close()


@pytest.mark.parametrize("sig", SIGNALS)
def test_qos2_outbound_resumes_with_pubrel_after_a_restart(store_broker, mqtt_client, stomp_client, sig):
    """Two QoS 2 deliveries; the first PUBREC'd (PUBREL came), the second not. After the
    restart the first is resumed with PUBREL and never sent again; the second comes with DUP."""
    broker = store_broker()
    topic = unique_topic()
    cid = unique_topic("q2out")
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect(cid, clean=False)
    c.subscribe([(topic, 2)])
    pub = mqtt_client(broker)
    pub.publish(topic, b"first", qos=2)
    pub.publish(topic, b"second", qos=2)
    first, second = c.expect(raw.PUBLISH), c.expect(raw.PUBLISH)
    assert (first.payload, second.payload) == (b"first", b"second")
    c.send(raw.ack(raw.PUBREC, first.packet_id))
    assert c.expect(raw.PUBREL).packet_id == first.packet_id
    pub.close_quietly()
    restart(broker, sig)
    c.close()
    c = raw.RawMqtt(broker.mqtt_port, 4)
    assert c.connect(cid, clean=False).session_present
    packets = [c.read(), c.read()]
    pubrels = [p for p in packets if p.type == raw.PUBREL]
    publishes = [p for p in packets if p.type == raw.PUBLISH]
    assert [p.packet_id for p in pubrels] == [first.packet_id], packets
    assert [(p.payload, p.dup, p.qos) for p in publishes] == [(b"second", True, 2)], packets
    c.send(raw.ack(raw.PUBCOMP, first.packet_id))
    c.send(raw.ack(raw.PUBREC, publishes[0].packet_id))
    assert c.expect(raw.PUBREL).packet_id == publishes[0].packet_id
    c.send(raw.ack(raw.PUBCOMP, publishes[0].packet_id))
    c.send(raw.PINGREQ_BYTES)
    c.expect(raw.PINGRESP)
    # The PUBCOMPs' record removals are not waited for: a receipted persistent send after them is a barrier.
    stomp_client(broker).send(f"/queue/{unique_topic('barrier')}", "barrier", headers={"persistent": "true"})
    c.close()
    # Completed: nothing comes again after another restart.
    restart(broker, signal.SIGKILL)
    c = raw.RawMqtt(broker.mqtt_port, 4)
    assert c.connect(cid, clean=False).session_present
    c.send(raw.PINGREQ_BYTES)
    assert c.expect(raw.PINGRESP)
    c.close()


# --- 3. delayed wills ---------------------------------------------------------------------------

def persistent_watcher(broker, mqtt_client, topic):
    cid = unique_topic("watch")
    w = mqtt_client(broker, client_id=cid, clean=False)
    w.subscribe(topic, 1)
    return cid


def watch_again(broker, mqtt_client, cid):
    return mqtt_client(broker, client_id=cid, clean=False)


def delayed_will_client(broker, mqtt_client, topic, delay, session=300, payload=b"late"):
    cid = unique_topic("dw")
    will_props = props(PacketTypes.WILLMESSAGE, WillDelayInterval=delay)
    c = mqtt_client(broker, version="5", client_id=cid, properties=expiry(session),
                    will=dict(topic=topic, payload=payload, qos=1, properties=will_props))
    return cid, c


@pytest.mark.parametrize("sig", SIGNALS)
def test_pending_delayed_will_is_published_after_a_restart(store_broker, mqtt_client, sig):
    broker = store_broker()
    topic = unique_topic("will/")
    w = mqtt_client(broker)
    w.subscribe(topic, 1)
    cid, c = delayed_will_client(broker, mqtt_client, topic, delay=3)
    c.drop()
    wait_stored(broker, cid, will=True)
    restart(broker, sig)
    restarted = time.monotonic()
    w = mqtt_client(broker)
    w.subscribe(topic, 1)
    assert w.wait_messages(1, timeout=10)[0].payload == b"late"
    assert time.monotonic() - restarted >= 0.5, "at its due time, not at start-up"
    assert_stays(lambda: w.count() == 1, 0.3, "published once")


def test_overdue_will_is_published_at_start(store_broker, mqtt_client):
    broker = store_broker()
    topic = unique_topic("will/")
    watcher = persistent_watcher(broker, mqtt_client, topic)
    cid, c = delayed_will_client(broker, mqtt_client, topic, delay=2)
    c.drop()
    wait_stored(broker, cid, will=True)
    deadline = time.time() + 2.2
    broker.stop(signal.SIGKILL)
    assert not logged(broker, f"client '{cid}': delayed will published"), "published before the kill"
    wait_for(lambda: time.time() > deadline, 5, "the will delay to pass while the broker is down")
    broker.start()
    w = watch_again(broker, mqtt_client, watcher)
    assert w.wait_messages(1)[0].payload == b"late"


def test_reconnect_after_a_restart_cancels_the_pending_will(store_broker, mqtt_client, stomp_client):
    broker = store_broker()
    topic = unique_topic("will/")
    # A persistent watcher: a will published at start-up, before anyone could subscribe again,
    # waits in its session and comes ahead of the markers below.
    watcher = persistent_watcher(broker, mqtt_client, topic)
    # Long enough that the restart never makes the will overdue (it would then rightly be
    # published at start-up); the check below outlasts it, so an uncancelled will shows.
    delay = 6
    cid, c = delayed_will_client(broker, mqtt_client, topic, delay=delay)
    c.drop()
    due = time.monotonic() + delay
    wait_stored(broker, cid, will=True)
    restart(broker, signal.SIGKILL)
    back = mqtt_client(broker, version="5", client_id=cid, clean=False, properties=expiry(300))
    assert back.connack["flags"]["session present"] == 1
    assert time.monotonic() < due, "the restart took longer than the will delay: the test means nothing"
    w = watch_again(broker, mqtt_client, watcher)
    mqtt_client(broker).publish(topic, b"marker", qos=1)
    assert [m.payload for m in w.wait_messages(1)] == [b"marker"]
    assert_stays(lambda: w.count() == 1, max(1.0, due + 1 - time.monotonic()),
                 "the will must not come once the client is back")
    # Nor after another restart: its record is gone.
    back.close_quietly()
    w.close_quietly()
    # The will record's removal (at the CONNECT) is not waited for: a receipted persistent send is a barrier.
    stomp_client(broker).send(f"/queue/{unique_topic('barrier')}", "barrier", headers={"persistent": "true"})
    restart(broker, signal.SIGKILL)
    w = watch_again(broker, mqtt_client, watcher)
    mqtt_client(broker).publish(topic, b"marker 2", qos=1)
    wait_for(lambda: b"marker 2" in w.payloads(), 10, "the second marker")
    # (The first marker may come again: its PUBACK's removal was not waited for either.)
    assert_stays(lambda: b"late" not in w.payloads(), 2.5, "no will record left")


# --- 4. wills when the broker shuts down -------------------------------------------------------

@pytest.mark.parametrize("version", [4, 5])
def test_will_is_published_when_the_broker_shuts_down(store_broker, mqtt_client, version):
    broker = store_broker()
    topic = unique_topic("will/")
    watcher = persistent_watcher(broker, mqtt_client, topic)
    c = raw.RawMqtt(broker.mqtt_port, version)
    c.connect(unique_topic("bye"), will=(topic, b"broker went away", 1, False))
    broker.stop(signal.SIGTERM)
    packets = c.read_until_closed()
    if version == 5:
        assert packets and packets[-1].type == raw.DISCONNECT and packets[-1].reason == 0x8B
    broker.start()
    w = watch_again(broker, mqtt_client, watcher)
    assert [m.payload for m in w.wait_messages(1)] == [b"broker went away"]
    assert_stays(lambda: w.count() == 1, 0.3)


def test_no_will_for_a_client_that_said_goodbye_before_shutdown(store_broker, mqtt_client):
    broker = store_broker()
    topic = unique_topic("will/")
    watcher = persistent_watcher(broker, mqtt_client, topic)
    c = mqtt_client(broker, will=dict(topic=topic, payload=b"gone", qos=1))
    cid = c.client_id
    c.disconnect()
    # paho's goodbye is done once it has sent DISCONNECT; the broker may not have read it yet,
    # and a SIGTERM before it does rightly publishes the will. Wait until the broker has let go.
    wait_for(lambda: broker_knows_none_of(broker, cid), 5, f"the broker to let go of {cid}")
    broker.stop(signal.SIGTERM)
    broker.start()
    w = watch_again(broker, mqtt_client, watcher)
    mqtt_client(broker).publish(topic, b"marker", qos=1)
    assert [m.payload for m in w.wait_messages(1)] == [b"marker"]
    assert_stays(lambda: w.count() == 1, 0.3)


def test_delayed_will_at_shutdown_stays_pending(store_broker, mqtt_client):
    """A will with a delay of a client connected at shutdown is kept, not published at once:
    published after the restart at its due time unless the client is back first."""
    broker = store_broker()
    topic = unique_topic("will/")
    watcher = persistent_watcher(broker, mqtt_client, topic)
    cid, c = delayed_will_client(broker, mqtt_client, topic, delay=2, payload=b"after shutdown")
    other_cid, other = delayed_will_client(broker, mqtt_client, topic, delay=2, payload=b"came back")
    broker.stop(signal.SIGTERM)
    c.close_quietly()
    other.close_quietly()
    broker.start()
    started = time.monotonic()
    back = mqtt_client(broker, version="5", client_id=other_cid, clean=False, properties=expiry(300))
    assert back.connack["flags"]["session present"] == 1
    w = watch_again(broker, mqtt_client, watcher)
    assert [m.payload for m in w.wait_messages(1, timeout=10)] == [b"after shutdown"]
    assert time.monotonic() - started >= 1.0, "not at start-up: the delay counts"
    assert_stays(lambda: w.count() == 1, 1.0, "the client that came back has no will")


def test_will_without_persistent_session_at_shutdown_is_published(store_broker, mqtt_client):
    """Will delay but session expiry 0: the session ends with the connection, the will goes now."""
    broker = store_broker()
    topic = unique_topic("will/")
    watcher = persistent_watcher(broker, mqtt_client, topic)
    delayed_will_client(broker, mqtt_client, topic, delay=60, session=0, payload=b"session over")
    broker.stop(signal.SIGTERM)
    broker.start()
    w = watch_again(broker, mqtt_client, watcher)
    assert [m.payload for m in w.wait_messages(1)] == [b"session over"]


# --- 5. shared subscriptions with persistent members ---------------------------------------------

def share(topic):
    return f"$share/grp/{topic}"


@pytest.mark.parametrize("sig", [None] + SIGNALS)
def test_shared_group_keeps_messages_for_a_persistent_member(store_broker, mqtt_client, sig):
    broker = store_broker()
    topic = unique_topic()
    cid = unique_topic("member")
    m = mqtt_client(broker, client_id=cid, clean=False)
    m.subscribe(share(topic), 1)
    m.disconnect()
    pub = mqtt_client(broker)
    for i in range(3):
        pub.publish(topic, f"job{i}".encode(), qos=1)
    pub.close_quietly()
    if sig is not None:
        restart(broker, sig)
    m = mqtt_client(broker, client_id=cid, clean=False)
    assert m.connack["flags"]["session present"] == 1
    assert sorted(x.payload for x in m.wait_messages(3)) == [b"job0", b"job1", b"job2"]
    assert_stays(lambda: m.count() == 3, 0.3)


def test_shared_group_of_non_persistent_members_keeps_nothing(broker_factory, mqtt_client):
    broker = broker_factory()
    topic = unique_topic()
    m = mqtt_client(broker)
    m.subscribe(share(topic), 1)
    m.disconnect()
    mqtt_client(broker).publish(topic, b"nobody there", qos=1)
    m = mqtt_client(broker)
    m.subscribe(share(topic), 1)
    mqtt_client(broker).publish(topic, b"marker", qos=1)
    assert [x.payload for x in m.wait_messages(1)] == [b"marker"]
    assert_stays(lambda: m.count() == 1, 0.3)


def group_is_gone(broker, mqtt_client, topic):
    """Publishes while no member is connected, then joins: nothing from before may come."""
    mqtt_client(broker).publish(topic, b"while gone", qos=1)
    m = mqtt_client(broker, client_id=unique_topic("late"), clean=False)
    m.subscribe(share(topic), 1)
    mqtt_client(broker).publish(topic, b"marker", qos=1)
    assert [x.payload for x in m.wait_messages(1)] == [b"marker"]
    assert_stays(lambda: m.count() == 1, 0.3)


def test_shared_group_ends_with_its_last_persistent_member(broker_factory, mqtt_client):
    broker = broker_factory()
    topic = unique_topic()
    a = mqtt_client(broker, client_id=unique_topic("a"), clean=False)
    b_id = unique_topic("b")
    b = mqtt_client(broker, client_id=b_id, clean=False)
    a.subscribe(share(topic), 1)
    b.subscribe(share(topic), 1)
    a.unsubscribe(share(topic))
    a.disconnect()
    b.disconnect()
    mqtt_client(broker).publish(topic, b"kept for b", qos=1)
    b = mqtt_client(broker, client_id=b_id, clean=False)
    assert [x.payload for x in b.wait_messages(1)] == [b"kept for b"], "b still holds the group"
    b.unsubscribe(share(topic))
    b.disconnect()
    group_is_gone(broker, mqtt_client, topic)


@pytest.mark.parametrize("while_down", [False, True], ids=["running", "while-down"])
def test_shared_group_ends_when_the_persistent_member_session_expires(store_broker, mqtt_client, while_down):
    broker = store_broker()
    topic = unique_topic()
    cid = unique_topic("exp")
    m = mqtt_client(broker, version="5", client_id=cid, properties=expiry(2))
    m.subscribe(share(topic), 1)
    m.disconnect()
    wait_stored(broker, cid)
    mqtt_client(broker).publish(topic, b"held", qos=1)
    if while_down:
        deadline = time.time() + 2.2
        broker.stop(signal.SIGKILL)
        wait_for(lambda: time.time() > deadline, 5, "the expiry to pass while the broker is down")
        broker.start()
        # The broker accepts before its log file is surely flushed: wait for the line.
        wait_for(lambda: logged(broker, f"client '{cid}': session expired while the broker was down"), 10,
                 "the expiry at start-up to be logged")
    else:
        wait_for(lambda: logged(broker, f"client '{cid}': session expired"), 10, "the session to expire")
    group_is_gone(broker, mqtt_client, topic)


def test_shared_group_goes_on_for_connected_members_after_the_persistent_one_leaves(broker_factory, mqtt_client):
    broker = broker_factory()
    topic = unique_topic()
    cid = unique_topic("p")
    p = mqtt_client(broker, client_id=cid, clean=False)
    p.subscribe(share(topic), 1)
    live = mqtt_client(broker)
    live.subscribe(share(topic), 1)
    p.disconnect()
    mqtt_client(broker, client_id=cid, clean=True).disconnect()  # ends p's session
    pub = mqtt_client(broker)
    pub.publish(topic, b"to the live member", qos=1)
    assert [x.payload for x in live.wait_messages(1)] == [b"to the live member"]
    live.disconnect()
    group_is_gone(broker, mqtt_client, topic)
