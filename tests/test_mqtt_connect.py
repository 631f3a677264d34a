"""MQTT CONNECT / CONNACK for 3.1, 3.1.1 and 5.0: client identifiers, clean start and session
present, take-over, keep-alive, limits in CONNACK, enhanced auth refused, bad CONNECTs."""

import time

import pytest

from helpers import raw_mqtt as raw
from helpers.broker import port_accepts
from helpers.mqtt_clients import MqttClient, mqtt_client, props, PacketTypes, unique_topic  # noqa: F401
from helpers.wait import assert_stays, wait_for


@pytest.mark.parametrize("version", ["3.1", "3.1.1", "5"])
def test_connect_every_version(broker, mqtt_client, version):
    c = mqtt_client(broker, version=version)
    assert c.connack["rc"] == 0
    topic = unique_topic()
    c.subscribe(topic, 1)
    c.publish(topic, b"hello", qos=1)
    assert c.wait_messages(1)[0].payload == b"hello"


def test_raw_connack_shapes(broker):
    for version, expected in ((3, b"\x20\x02\x00\x00"), (4, b"\x20\x02\x00\x00")):
        c = raw.RawMqtt(broker.mqtt_port, version)
        c.send(raw.connect(f"shape{version}", version=version))
        p = c.expect(raw.CONNACK)
        assert bytes([0x20, 2]) + p.body == expected
        c.close()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    ack = c.connect("shape5")
    # MQTT 5 CONNACK states the broker's limits.
    assert ack.props["receive_maximum"] == 100
    assert ack.props["topic_alias_maximum"] == 16
    assert ack.props["maximum_packet_size"] == 16 << 20
    assert "assigned_client_identifier" not in ack.props
    c.close()


def test_empty_client_id(broker, mqtt_client):
    # 3.1.1 with a clean session: accepted, the broker makes one up.
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("")
    c.close()
    # 3.1.1 without a clean session: identifier rejected (return code 2).
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.send(raw.connect("", version=4, clean=False))
    assert c.expect(raw.CONNACK).reason == 2
    raw.wait_closed(c)
    # 3.1 requires one.
    c = raw.RawMqtt(broker.mqtt_port, 3)
    c.send(raw.connect("", version=3))
    assert c.expect(raw.CONNACK).reason == 2
    # 5.0: an assigned client identifier comes back in CONNACK.
    c = raw.RawMqtt(broker.mqtt_port, 5)
    ack = c.connect("")
    assigned = ack.props["assigned_client_identifier"]
    assert assigned.startswith("auto-")
    c.close()
    p = mqtt_client(broker, version="5", client_id="")
    assert p.connack["props"].AssignedClientIdentifier.startswith("auto-")
    assert p.connack["props"].AssignedClientIdentifier != assigned


def test_username_and_password_are_accepted(broker):
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("with-login", username="user", password="secret")
    c.close()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("password-only", password="secret")  # MQTT 5 allows a password alone
    c.close()


def test_session_present_flag(broker, mqtt_client):
    cid = unique_topic("sp")
    c = mqtt_client(broker, client_id=cid, clean=False)
    assert c.connack["flags"]["session present"] == 0
    c.subscribe(unique_topic(), 1)
    c.disconnect()
    c = mqtt_client(broker, client_id=cid, clean=False)
    assert c.connack["flags"]["session present"] == 1
    c.disconnect()
    # A clean session throws the old one away and reports none.
    c = mqtt_client(broker, client_id=cid, clean=True)
    assert c.connack["flags"]["session present"] == 0
    c.disconnect()
    c = mqtt_client(broker, client_id=cid, clean=False)
    assert c.connack["flags"]["session present"] == 0


@pytest.mark.parametrize("version", ["3.1.1", "5"])
def test_session_takeover(broker, mqtt_client, version):
    cid = unique_topic("take")
    first = mqtt_client(broker, version=version, client_id=cid)
    second = mqtt_client(broker, version=version, client_id=cid)
    first.wait_disconnected()
    if version == "5":
        # paho reports the server's DISCONNECT reason, then the closed socket.
        assert 0x8E in first.disconnects, f"MQTT 5: DISCONNECT with 'session taken over', got {first.disconnects}"
    # The new connection works; the old one stays gone.
    topic = unique_topic()
    second.subscribe(topic, 1)
    second.publish(topic, b"still here", qos=1)
    assert second.wait_messages(1)[0].payload == b"still here"


def test_takeover_across_shards_keeps_the_session(broker):
    """Many take-overs in a row, on whichever shards the connections land: each new connection
    gets CONNACK with the session present, and exactly one connection holds the client id."""
    cid = unique_topic("hop")
    conns = []
    for i in range(6):
        c = raw.RawMqtt(broker.mqtt_port, 5)
        ack = c.connect(cid, clean=(i == 0), props={"session_expiry_interval": 60})
        assert ack.session_present == (i > 0)
        if conns:
            d = conns[-1].read_until_closed()
            assert d and d[-1].type == raw.DISCONNECT and d[-1].reason == 0x8E, d
        conns.append(c)
    raw.assert_broker_works(broker.mqtt_port)
    for c in conns:
        c.close()


def test_second_connect_is_a_protocol_error(broker):
    packets = raw.expect_disconnect_and_close(broker.mqtt_port, raw.connect("again", version=5), version=5,
                                              reason=0x82)
    assert packets[-1].props.get("reason_string")
    raw.expect_disconnect_and_close(broker.mqtt_port, raw.connect("again3", version=4), version=4)


def test_packet_before_connect_closes(broker):
    c = raw.RawMqtt(broker.mqtt_port)
    c.send(raw.publish("a", b"x"))
    assert c.read_until_closed() == []
    raw.assert_broker_works(broker.mqtt_port)


@pytest.mark.parametrize("version", [4, 5])
def test_unsupported_protocol_level(broker, version):
    c = raw.RawMqtt(broker.mqtt_port, 4)
    bad = raw.connect("lvl").replace(b"MQTT\x04", b"MQTT\x06")
    c.send(bad)
    packets = c.read_until_closed()
    # Answered in the 3.1.1 shape any client can read: return code 1.
    assert [(p.type, p.reason) for p in packets] == [(raw.CONNACK, 1)]


def test_enhanced_auth_is_refused(broker):
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.send(raw.connect("auth", version=5, props={"authentication_method": "SCRAM-SHA-256",
                                                  "authentication_data": b"x"}))
    packets = c.read_until_closed()
    assert packets[0].type == raw.CONNACK and packets[0].reason == 0x8C
    # An AUTH packet on a normal connection is a protocol error.
    raw.expect_disconnect_and_close(broker.mqtt_port, raw.packet(raw.AUTH, 0, b""), version=5, reason=0x82)


def test_pingreq(broker):
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("pinger")
    c.send(raw.PINGREQ_BYTES)
    assert c.expect(raw.PINGRESP).body == b""
    c.close()


@pytest.mark.parametrize("version", [4, 5])
def test_keep_alive_timeout(broker, version):
    c = raw.RawMqtt(broker.mqtt_port, version)
    c.connect("sleepy", keep_alive=1)
    started = time.monotonic()
    packets = c.read_until_closed(timeout=5)
    elapsed = time.monotonic() - started
    assert 1.3 < elapsed < 3.5, f"closed after {elapsed:.2f}s, expected 1.5 x keep-alive"
    if version == 5:
        assert packets and packets[-1].type == raw.DISCONNECT and packets[-1].reason == 0x8D
    else:
        assert packets == []


def test_keep_alive_pings_keep_the_connection(broker):
    c = raw.RawMqtt(broker.mqtt_port, 4)
    c.connect("pings", keep_alive=1)
    for _ in range(5):
        time.sleep(0.5)  # the client's own pacing, below its keep-alive
        c.send(raw.PINGREQ_BYTES)
        c.expect(raw.PINGRESP)
    c.close()


def test_server_keep_alive(broker_factory):
    broker = broker_factory(config="[mqtt]\nmax_keep_alive = 2\n")
    c = raw.RawMqtt(broker.mqtt_port, 5)
    ack = c.connect("ska", keep_alive=0)
    assert ack.props["server_keep_alive"] == 2
    started = time.monotonic()
    packets = c.read_until_closed(timeout=6)
    assert packets[-1].reason == 0x8D
    assert 2.5 < time.monotonic() - started < 5
    c = raw.RawMqtt(broker.mqtt_port, 5)
    assert "server_keep_alive" not in c.connect("ska2", keep_alive=1).props
    c.close()


def test_session_expiry_is_capped(broker_factory):
    broker = broker_factory(config="[mqtt]\nsession_expiry_max = 10\n")
    c = raw.RawMqtt(broker.mqtt_port, 5)
    ack = c.connect("capped", props={"session_expiry_interval": 3600})
    assert ack.props["session_expiry_interval"] == 10
    c.close()


def test_connect_timeout(broker_factory):
    broker = broker_factory(config="[mqtt]\nconnect_timeout_ms = 300\n")
    c = raw.RawMqtt(broker.mqtt_port)
    started = time.monotonic()
    assert c.read_until_closed(timeout=5) == []
    assert time.monotonic() - started < 3


def test_mqtt_off_and_listen_from_the_file(broker_factory):
    broker = broker_factory(start=False, mqtt_flag=False, extra_args=["--mqtt", "off"])
    broker.start()
    assert not port_accepts(broker.mqtt_port)
    broker.stop()
    from helpers.broker import free_port
    port = free_port()
    broker = broker_factory(start=False, mqtt_flag=False, config=f'[mqtt]\nlisten = "127.0.0.1:{port}"\n')
    broker.start()
    wait_for(lambda: port_accepts(port), 5, "the MQTT port from the file")
    raw.assert_broker_works(port)


def test_shutdown_says_goodbye(broker_factory):
    broker = broker_factory()
    c = raw.RawMqtt(broker.mqtt_port, 5)
    c.connect("bye")
    broker.stop()
    packets = c.read_until_closed()
    assert packets and packets[-1].type == raw.DISCONNECT and packets[-1].reason == 0x8B


def test_many_clients_at_once(broker, mqtt_client):
    topic = unique_topic()
    subscribers = [mqtt_client(broker, version=("5" if i % 2 else "3.1.1")) for i in range(10)]
    for s in subscribers:
        s.subscribe(topic, 1)
    pub = mqtt_client(broker)
    for i in range(20):
        pub.publish(topic, f"m{i}", qos=1)
    for s in subscribers:
        assert [m.payload for m in s.wait_messages(20)] == [f"m{i}".encode() for i in range(20)]
    assert_stays(lambda: all(s.count() == 20 for s in subscribers), 0.3)
