"""STOMP connection setup: CONNECT/STOMP, version negotiation, CONNECTED headers, heart-beats,
receipts (DISCONNECT's included)."""

import pytest

from helpers import STOMP_VERSIONS
from helpers.raw_stomp import RawStomp, assert_broker_works, expect_error_and_close
from helpers.wait import assert_stays

HEARTBEAT_CONFIG = "[stomp]\nheartbeat_ms = 100\n"


def heartbeat_pair(frame):
    value = frame.header("heart-beat")
    assert value is not None, f"CONNECTED without heart-beat: {frame!r}"
    sx, sy = (int(part) for part in value.split(","))
    return sx, sy


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_connected_headers_with_stomp_py(broker, stomp_client, version):
    client = stomp_client(broker, version=version)
    headers = client.connected_frame.headers
    assert headers.get("version") == version, headers
    assert headers.get("server", "").startswith("carrier/"), headers
    assert headers.get("session"), headers
    if version != "1.0":
        assert "heart-beat" in headers, headers


@pytest.mark.parametrize("command", ["CONNECT", "STOMP"])
@pytest.mark.parametrize("version", ["1.1", "1.2"])
def test_connect_and_stomp_commands(broker, command, version):
    with RawStomp(broker.port) as raw:
        connected = raw.connect(version, command=command)
        assert connected.header("version") == version, connected
        assert connected.header("server", "").startswith("carrier/"), connected
        assert connected.header("session"), connected
        heartbeat_pair(connected)


def test_sessions_are_distinct(broker):
    with RawStomp(broker.port) as a, RawStomp(broker.port) as b:
        assert a.connect().header("session") != b.connect().header("session")


def test_connect_without_accept_version_is_1_0(broker):
    with RawStomp(broker.port) as raw:
        raw.send(b"CONNECT\nlogin:guest\npasscode:guest\n\n\x00")
        frame = raw.read_frame()
        assert frame.command == "CONNECTED", frame
        assert frame.header("version") in (None, "1.0"), frame
        assert frame.header("session"), frame


@pytest.mark.parametrize("offered, chosen", [
    ("1.0,1.1,2.0", "1.1"),
    ("1.1,1.2", "1.2"),
    ("1.2,1.0", "1.2"),
    ("1.0", "1.0"),
])
def test_version_negotiation_picks_highest_common(broker, offered, chosen):
    with RawStomp(broker.port) as raw:
        raw.send_frame("CONNECT", [("accept-version", offered), ("host", "localhost")])
        frame = raw.read_frame()
        assert frame.command == "CONNECTED", frame
        assert frame.header("version") == chosen, frame


def test_no_common_version_is_an_error(broker):
    with RawStomp(broker.port) as raw:
        raw.send_frame("CONNECT", [("accept-version", "2.0,3.1"), ("host", "localhost")])
        error = expect_error_and_close(raw)
        assert "1.2" in error.header("version", "").split(","), \
            f"ERROR should list the supported versions: {error!r}"
    assert_broker_works(broker.port)


def test_server_sends_heartbeats_when_asked(broker_factory):
    broker = broker_factory(config=HEARTBEAT_CONFIG)
    with RawStomp(broker.port) as raw:
        connected = raw.connect("1.2", heartbeat="0,100")
        sx, _ = heartbeat_pair(connected)
        assert sx > 0, f"broker will not send heart-beats: {connected!r}"
        interval = max(sx, 100) / 1000.0
        assert interval <= 2.0, f"heart-beat every {interval}s ignores heartbeat_ms: {connected!r}"
        raw.wait_heartbeats(3, timeout=4 * interval + 1.0)


def test_no_heartbeats_when_not_asked(broker_factory):
    broker = broker_factory(config=HEARTBEAT_CONFIG)
    with RawStomp(broker.port) as raw:
        raw.connect("1.2", heartbeat="0,0")
        frames = raw.idle(0.5)
        assert (frames, raw.heartbeats, raw.closed) == ([], [], False)


def test_silent_client_is_closed(broker_factory):
    broker = broker_factory(config=HEARTBEAT_CONFIG)
    with RawStomp(broker.port) as raw:
        connected = raw.connect("1.2", heartbeat="100,100")
        _, sy = heartbeat_pair(connected)
        assert sy > 0, f"broker does not expect client heart-beats: {connected!r}"
        expected_every = max(100, sy) / 1000.0
        assert expected_every <= 2.0, connected
        # Say nothing more: the broker must give up on us within a few intervals.
        raw.wait_closed(timeout=4 * expected_every + 2.0)
    assert_broker_works(broker.port)


def test_client_that_heartbeats_stays_connected(broker_factory, stomp_client, unique):
    broker = broker_factory(config=HEARTBEAT_CONFIG)
    client = stomp_client(broker, version="1.2", heartbeats=(100, 500))
    assert_stays(lambda: not client.disconnected, 1.0, "a heart-beating client stays connected")
    queue = unique()
    client.subscribe(queue)
    client.send(queue, "still here")
    assert client.wait_messages(1)[0].body == "still here"


def test_receipts_for_every_frame(broker, unique):
    queue = unique()
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")

        def expect_receipt(command, headers, body=b""):
            receipt = f"rcpt-{command.lower()}-{len(headers)}"
            raw.send_frame(command, headers + [("receipt", receipt)], body)
            frame = raw.read_frame()
            assert (frame.command, frame.header("receipt-id")) == ("RECEIPT", receipt), \
                f"{command}: {frame!r}"

        expect_receipt("SUBSCRIBE", [("destination", queue), ("id", "s1"), ("ack", "client")])
        raw.send_frame("SEND", [("destination", queue), ("receipt", "rcpt-send")], b"one")
        frames = [raw.read_frame(), raw.read_frame()]
        assert sorted(f.command for f in frames) == ["MESSAGE", "RECEIPT"], frames
        receipt = next(f for f in frames if f.command == "RECEIPT")
        message = next(f for f in frames if f.command == "MESSAGE")
        assert receipt.header("receipt-id") == "rcpt-send", receipt
        assert message.body == b"one" and message.header("ack"), message

        expect_receipt("ACK", [("id", message.header("ack"))])
        expect_receipt("BEGIN", [("transaction", "tx1")])
        expect_receipt("COMMIT", [("transaction", "tx1")])
        expect_receipt("BEGIN", [("transaction", "tx2")])
        expect_receipt("ABORT", [("transaction", "tx2")])
        expect_receipt("UNSUBSCRIBE", [("id", "s1")])
        expect_receipt("DISCONNECT", [])
        raw.wait_closed()


@pytest.mark.parametrize("version", STOMP_VERSIONS)
def test_disconnect_receipt_with_stomp_py(broker, stomp_client, version):
    client = stomp_client(broker, version=version)
    client.disconnect()  # waits for the RECEIPT, on which stomp.py closes its socket
    assert client.disconnected
