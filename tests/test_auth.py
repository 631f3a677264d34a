"""Authentication: the [auth] section, the users file and `carrier passwd`, and the one hook that
STOMP (login/passcode) and MQTT (user name/password) both go through. Passwords are checked off
the shards, so a connection waiting for its check never holds up anyone else."""

import socket
import subprocess
import time

import pytest

from helpers import raw_mqtt
from helpers.broker import carrier_bin, port_accepts, run_cli
from helpers.mqtt_clients import (MqttClient, mosquitto_pub, mqtt_client, start_mosquitto_sub,  # noqa: F401
                                  unique_topic)
from helpers.raw_stomp import RawStomp, encode_frame, expect_error_and_close
from helpers.wait import wait_for

PASSWORDS = {"alice": "wonderland", "bob": "builder"}
BAD_USER_NAME_OR_PASSWORD_311 = 4
NOT_AUTHORIZED_311 = 5
BAD_USER_NAME_OR_PASSWORD_5 = 0x86
NOT_AUTHORIZED_5 = 0x87


def passwd(name, password, *extra):
    """`carrier passwd NAME` with the password on stdin; returns its stdout line."""
    result = subprocess.run([str(carrier_bin()), "passwd", name, *extra], input=password + "\n",
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def users_lines():
    """One users-file line per user, made by `carrier passwd` (hashing is slow: once per module)."""
    return {name: passwd(name, password) for name, password in PASSWORDS.items()}


def auth_config(anonymous=None, delay_ms=0, extra=""):
    text = '[auth]\nusers_file = "users.txt"\n'
    if anonymous is not None:
        text += f"anonymous = {'true' if anonymous else 'false'}\n"
    text += f"failure_delay_ms = {delay_ms}\n" + extra
    return text


@pytest.fixture
def auth_broker(broker_factory, users_lines):
    """Factory: a broker whose users are alice and bob (users.txt beside carrier.toml)."""
    def make(anonymous=None, delay_ms=0, extra="", start=True, users_text=None, **kwargs):
        broker = broker_factory(start=False, config=auth_config(anonymous, delay_ms, extra), **kwargs)
        text = users_text if users_text is not None else "# test users\n" + "\n".join(users_lines.values()) + "\n"
        (broker.workdir / "users.txt").write_text(text)
        if start:
            broker.start()
        return broker
    return make


def stomp_connect_frame(version, login=None, passcode=None, command="CONNECT"):
    headers = [("accept-version", version), ("host", "localhost")]
    if login is not None:
        headers.append(("login", login))
    if passcode is not None:
        headers.append(("passcode", passcode))
    return encode_frame(command, headers)


def stomp_refused(port, version="1.2", login=None, passcode=None):
    """CONNECT with these credentials must get ERROR then close; returns the ERROR frame."""
    with RawStomp(port) as raw:
        raw.send(stomp_connect_frame(version, login, passcode))
        return expect_error_and_close(raw)


# --- zero config ------------------------------------------------------------------------------

def test_without_users_every_client_is_let_in(broker, stomp_client, mqtt_client):
    stomp_client(broker)
    stomp_client(broker, connect_headers={"login": "guest", "passcode": "guest"})
    mqtt_client(broker)
    mqtt_client(broker, username="guest", password="anything")
    mqtt_client(broker, version="5", username="guest", password="anything")
    assert "no users configured, every client is let in" in broker.log()


# --- STOMP ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["1.0", "1.1", "1.2"])
def test_stomp_right_password_connects_and_works(auth_broker, stomp_client, unique, version):
    broker = auth_broker()
    c = stomp_client(broker, version=version, connect_headers={"login": "alice", "passcode": "wonderland"})
    assert c.connected_frame.headers.get("server", "").startswith("carrier/")
    dest = unique()
    c.subscribe(dest, id="s1")
    c.send(dest, "hello")
    assert c.wait_messages(1)[0].body == "hello"


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.2"])
def test_stomp_wrong_unknown_and_missing_credentials_get_one_answer(auth_broker, version):
    broker = auth_broker()
    answers = []
    for login, passcode in [("alice", "wonderlan"), ("alice", "builder"), ("mallory", "wonderland"),
                            (None, None), ("alice", None), (None, "wonderland"), ("", "")]:
        frame = stomp_refused(broker.port, version, login, passcode)
        assert frame.header("message") == "authentication failed", frame
        answers.append((frame.headers, frame.body))
    # Nothing tells an unknown user from a wrong password.
    assert all(a == answers[0] for a in answers), answers
    with RawStomp(broker.port) as raw:  # and the broker still serves the right password
        raw.connect(version, headers=[("login", "bob"), ("passcode", "builder")])


def test_stomp_frame_command_and_real_client(auth_broker, stomp_client):
    broker = auth_broker()
    with RawStomp(broker.port) as raw:
        raw.send(stomp_connect_frame("1.2", "bob", "builder", command="STOMP"))
        assert raw.read_frame().command == "CONNECTED"
    # python3-stomp with a wrong passcode sees the ERROR and the connection close.
    c = stomp_client(broker, connect=False)
    c.conn.connect(username="alice", passcode="nope", wait=False)
    c._wait(lambda: c.errors and c.disconnected, 10, "ERROR and close")
    assert c.errors[0].headers["message"] == "authentication failed"
    assert c.connected_frame is None


def test_stomp_frames_pipelined_after_connect_wait_for_the_check(auth_broker, unique):
    broker = auth_broker()
    dest = unique()
    with RawStomp(broker.port) as raw:
        raw.send(stomp_connect_frame("1.2", "alice", "wonderland") +
                 encode_frame("SUBSCRIBE", [("destination", dest), ("id", "0"), ("receipt", "sub")]) +
                 encode_frame("SEND", [("destination", dest), ("receipt", "sent")], b"after connect"))
        frames = [raw.read_frame(10) for _ in range(4)]
        assert [f.command for f in frames][0] == "CONNECTED", frames
        assert {f.command for f in frames[1:]} == {"RECEIPT", "MESSAGE"}, frames
    # After a refused CONNECT nothing that followed it is acted on.
    with RawStomp(broker.port) as raw:
        raw.send(stomp_connect_frame("1.2", "alice", "wrong") +
                 encode_frame("SEND", [("destination", dest), ("receipt", "sent")], b"must not arrive"))
        frames = raw.wait_closed()
        assert [f.command for f in frames] == ["ERROR"], frames
    with RawStomp(broker.port) as raw:
        raw.connect("1.2", headers=[("login", "bob"), ("passcode", "builder")])
        raw.send_frame("SUBSCRIBE", [("destination", dest), ("id", "1"), ("receipt", "sub2")])
        assert raw.read_frame().command == "RECEIPT"
        raw.send_frame("SEND", [("destination", dest), ("receipt", "marker")], b"marker")
        got = [raw.read_frame(), raw.read_frame()]
        bodies = [f.body for f in got if f.command == "MESSAGE"]
        assert bodies == [b"marker"], got


def test_anonymous_allowed_beside_users(auth_broker, stomp_client, mqtt_client):
    broker = auth_broker(anonymous=True)
    stomp_client(broker)                                   # no credentials: let in
    stomp_client(broker, connect_headers={"login": "alice", "passcode": "wonderland"})
    frame = stomp_refused(broker.port, "1.2", "alice", "wrong")  # credentials given are checked
    assert frame.header("message") == "authentication failed"
    mqtt_client(broker)
    c = mqtt_client(broker, connect=False)
    assert c.connect(username="alice", password="wrong", expect_rc=None)["rc"] == BAD_USER_NAME_OR_PASSWORD_311


# --- MQTT -------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["3.1", "3.1.1"])
def test_mqtt3_connack_codes(auth_broker, mqtt_client, version):
    broker = auth_broker()
    ok = mqtt_client(broker, version=version, username="alice", password="wonderland")
    topic = unique_topic()
    ok.subscribe(topic, 1)
    ok.publish(topic, b"hi", qos=1)
    assert ok.wait_messages(1)[0].payload == b"hi"
    for user, password, expected in [("alice", "nope", BAD_USER_NAME_OR_PASSWORD_311),
                                     ("mallory", "wonderland", BAD_USER_NAME_OR_PASSWORD_311),
                                     (None, None, NOT_AUTHORIZED_311)]:
        c = mqtt_client(broker, version=version, connect=False)
        ack = c.connect(username=user, password=password, expect_rc=None)
        assert ack["rc"] == expected, (user, ack)
        c.wait_disconnected()


def test_mqtt5_reason_codes(auth_broker, mqtt_client):
    broker = auth_broker()
    ok = mqtt_client(broker, version="5", username="bob", password="builder")
    assert ok.connack["rc"] == 0
    for user, password, expected in [("bob", "nope", BAD_USER_NAME_OR_PASSWORD_5),
                                     ("mallory", "builder", BAD_USER_NAME_OR_PASSWORD_5),
                                     (None, None, NOT_AUTHORIZED_5)]:
        c = mqtt_client(broker, version="5", connect=False)
        ack = c.connect(username=user, password=password, expect_rc=None)
        assert ack["rc"] == expected, (user, ack)
        c.wait_disconnected()


def test_mqtt_raw_password_without_user_name(auth_broker):
    broker = auth_broker()
    # 3.1.1: a malformed CONNECT (MQTT-3.1.2-22): closed without CONNACK.
    c = raw_mqtt.RawMqtt(broker.mqtt_port, 4)
    c.send(raw_mqtt.connect("nouser4", version=4, password="wonderland"))
    assert c.read_until_closed() == []
    # 5.0 allows it, but there is no user to check it against.
    c = raw_mqtt.RawMqtt(broker.mqtt_port, 5)
    c.send(raw_mqtt.connect("nouser5", version=5, password="wonderland"))
    packets = c.read_until_closed()
    assert [(p.type, p.reason) for p in packets] == [(raw_mqtt.CONNACK, BAD_USER_NAME_OR_PASSWORD_5)], packets


def test_mqtt_packets_after_a_refused_connect_are_not_acted_on(auth_broker, mqtt_client):
    broker = auth_broker()
    topic = unique_topic()
    watcher = mqtt_client(broker, username="bob", password="builder")
    watcher.subscribe(topic, 1)
    c = raw_mqtt.RawMqtt(broker.mqtt_port, 4)
    c.send(raw_mqtt.connect("intruder", version=4, username="alice", password="wrong",
                            will=(topic, b"will", 1, False)) +
           raw_mqtt.publish(topic, b"sneaked", qos=1, packet_id=7))
    packets = c.read_until_closed()
    assert [(p.type, p.reason) for p in packets] == [(raw_mqtt.CONNACK, BAD_USER_NAME_OR_PASSWORD_311)], packets
    # Neither the PUBLISH nor the will got through: the next message the watcher sees is ours.
    ok = mqtt_client(broker, username="alice", password="wonderland")
    ok.publish(topic, b"marker", qos=1)
    assert watcher.wait_messages(1)[0].payload == b"marker"
    assert watcher.payloads() == [b"marker"]


def test_mosquitto_clients_with_user_and_password(auth_broker):
    broker = auth_broker()
    topic = unique_topic()
    sub = start_mosquitto_sub(broker.mqtt_port, topic, 1, qos=1, extra=["-u", "alice", "-P", "wonderland"])
    try:
        # The subscription is in place once a retained-free probe is seen; poll by publishing.
        def delivered():
            r = mosquitto_pub(broker.mqtt_port, topic, "hello", qos=1, extra=["-u", "bob", "-P", "builder"])
            assert r.returncode == 0, r.stderr
            return sub.poll() is not None
        wait_for(delivered, 10, "mosquitto_sub to receive", interval=0.2)
        out, err = sub.communicate(timeout=5)
        assert sub.returncode == 0, err
        assert out.splitlines()[0] == f"{topic} hello"
    finally:
        if sub.poll() is None:
            sub.kill()
            sub.wait()
    bad = mosquitto_pub(broker.mqtt_port, topic, "x", extra=["-u", "bob", "-P", "wrong"])
    assert bad.returncode != 0
    assert "not authorised" in bad.stderr.lower() or "bad user" in bad.stderr.lower(), bad.stderr
    bad5 = mosquitto_pub(broker.mqtt_port, topic, "x", version="5", extra=["-u", "bob", "-P", "wrong"])
    assert bad5.returncode != 0, bad5.stderr
    none = mosquitto_pub(broker.mqtt_port, topic, "x")
    assert none.returncode != 0, none.stderr


# --- off the shard ------------------------------------------------------------------------------

@pytest.mark.timeout(120)
def test_password_checks_do_not_hold_up_other_connections(auth_broker, stomp_client, mqtt_client, unique):
    """Many wrong passwords at once keep the verifier busy for seconds; meanwhile anonymous
    clients on every shard are served at once."""
    broker = auth_broker(anonymous=True, extra="max_pending = 1000\n")
    bad = []
    for i in range(24):
        s = socket.create_connection(("127.0.0.1", broker.port), timeout=30)
        s.sendall(stomp_connect_frame("1.2", "alice", f"wrong{i}"))
        bad.append(s)

    def answered():
        done = 0
        for s in bad:
            s.setblocking(False)
            try:
                data = s.recv(65536, socket.MSG_PEEK)
                done += 1 if data is not None else 0
            except BlockingIOError:
                pass
            finally:
                s.setblocking(True)
        return done

    try:
        started = time.monotonic()
        for _ in range(4):  # several connections: both shards
            c = stomp_client(broker)
            dest = unique()
            c.subscribe(dest)
            c.send(dest, "still served")
            assert c.wait_messages(1)[0].body == "still served"
            m = mqtt_client(broker)
            topic = unique_topic()
            m.subscribe(topic, 1)
            m.publish(topic, b"mqtt too", qos=1)
            m.wait_messages(1)
        served_in = time.monotonic() - started
        pending = len(bad) - answered()
        assert pending > 0, f"all {len(bad)} bad logins were answered before the clients were served " \
                            f"({served_in:.2f}s): the checks did not queue"
        # And every bad login does get its ERROR in the end.
        wait_for(lambda: answered() == len(bad), 90, lambda: f"{len(bad) - answered()} bad logins unanswered")
        for s in bad:
            data = b""
            s.settimeout(10)
            while b"\x00" not in data:
                chunk = s.recv(65536)
                assert chunk, f"closed without ERROR: {data!r}"
                data += chunk
            assert data.startswith(b"ERROR\n") and b"message:authentication failed" in data, data
    finally:
        for s in bad:
            s.close()


def test_failure_is_answered_after_the_delay(auth_broker):
    broker = auth_broker(delay_ms=2000)
    started = time.monotonic()
    frame = stomp_refused(broker.port, "1.2", "alice", "wrong")
    assert frame.header("message") == "authentication failed"
    assert time.monotonic() - started >= 1.95
    # Success is not delayed by it (the check itself takes a fraction of a second).
    started = time.monotonic()
    with RawStomp(broker.port) as raw:
        raw.connect("1.2", headers=[("login", "alice"), ("passcode", "wonderland")])
    assert time.monotonic() - started < 1.95


def test_carrier_send_and_recv_log_in(auth_broker, unique):
    broker = auth_broker()
    server = f"127.0.0.1:{broker.port}"
    dest = unique()
    ok = run_cli("send", dest, "--body", "from the cli", "--persistent", "--server", server,
                 "--login", "alice", "--passcode", "wonderland")
    assert ok.returncode == 0, ok.stderr
    got = run_cli("recv", dest, "--server", server, "--login", "bob", "--passcode", "builder")
    assert got.returncode == 0 and got.stdout.strip() == "from the cli", got
    bad = run_cli("send", dest, "--body", "x", "--server", server, "--login", "alice", "--passcode", "nope")
    assert bad.returncode == 1 and "authentication failed" in bad.stderr, bad


def test_passwords_never_reach_the_log(auth_broker, mqtt_client):
    broker = auth_broker(log_level="trace")
    stomp_refused(broker.port, "1.2", "alice", "Pa55-stomp-secret")
    c = mqtt_client(broker, connect=False)
    c.connect(username="alice", password="Pa55-mqtt-secret", expect_rc=None)
    with RawStomp(broker.port) as raw:
        raw.connect("1.2", headers=[("login", "alice"), ("passcode", "wonderland")])
    wait_for(lambda: "authentication failed for client" in broker.log(), 5, "the MQTT failure in the log")
    log = broker.log(tail_lines=100000)
    for secret in ("Pa55-stomp-secret", "Pa55-mqtt-secret", "wonderland"):
        assert secret not in log


# --- configuration errors and carrier passwd ------------------------------------------------------

def refused_to_start(broker):
    broker.spawn()
    code = broker.wait_exit(timeout=30)
    assert code != 0, broker.log()
    assert not port_accepts(broker.port)
    return broker.log()


def test_missing_users_file_is_refused(broker_factory):
    broker = broker_factory(start=False, config='[auth]\nusers_file = "absent-users.txt"\n')
    log = refused_to_start(broker)
    assert "cannot read users file" in log and "absent-users.txt" in log, log


def test_malformed_users_file_is_refused_by_line(auth_broker, users_lines):
    broker = auth_broker(start=False, users_text=users_lines["alice"] + "\nbob has no colon\n")
    log = refused_to_start(broker)
    assert "expected NAME:HASH in" in log and "users.txt:2" in log, log

    broker = auth_broker(start=False, users_text="carol:plain-text-password\n")
    log = refused_to_start(broker)
    assert "users.txt:1" in log and "argon2id" in log, log
    assert "plain-text-password" not in log

    broker = auth_broker(start=False, users_text=users_lines["alice"] + "\n" + users_lines["alice"] + "\n")
    log = refused_to_start(broker)
    assert 'user "alice" is defined twice' in log, log


def test_unusable_hash_and_no_users_are_refused(broker_factory):
    # The right shape, but not something libsodium can read (the salt is too short).
    broker = broker_factory(start=False, config='[[auth.user]]\nname = "dave"\n'
                            'password_hash = "$argon2id$v=19$m=65536,t=2,p=1$c2FsdA$aGFzaA"\n')
    log = refused_to_start(broker)
    assert 'user "dave"' in log and "carrier.toml:1:1" in log, log
    broker = broker_factory(start=False, config="[auth]\nanonymous = false\n")
    log = refused_to_start(broker)
    assert "no client could connect" in log, log


def test_passwd_hash_only_goes_inline(broker_factory, stomp_client, mqtt_client):
    line = passwd("erin", "s3cret pass", "--hash-only")
    assert line.startswith("$argon2id$v=19$m=65536,t=2,p=1$") and ":" not in line
    broker = broker_factory(config=f'[auth]\nfailure_delay_ms = 0\n[[auth.user]]\nname = "erin"\n'
                                   f'password_hash = "{line}"\n')
    stomp_client(broker, connect_headers={"login": "erin", "passcode": "s3cret pass"})
    mqtt_client(broker, version="5", username="erin", password="s3cret pass")
    assert stomp_refused(broker.port, "1.1", "erin", "s3cret").header("message") == "authentication failed"


def test_passwd_refuses_bad_input():
    assert passwd("frank", "pw").startswith("frank:$argon2id$")
    r = subprocess.run([str(carrier_bin()), "passwd", "frank"], input="", capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "no password" in r.stderr and r.stdout == ""
    r = subprocess.run([str(carrier_bin()), "passwd", "frank"], input="\n", capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "empty" in r.stderr and r.stdout == ""
    r = subprocess.run([str(carrier_bin()), "passwd", "a:b"], input="pw\n", capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "':'" in r.stderr
    r = run_cli("passwd")
    assert r.returncode == 2
