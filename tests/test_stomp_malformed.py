"""Malformed and out-of-order input on raw sockets. Each case must get an ERROR frame with a
`message` header and a body, then the connection closed (STOMP 1.2: the server MUST close just
after sending ERROR), and the broker must keep serving a second, well-behaved connection."""

import pytest

from helpers.raw_stomp import RawStomp, assert_broker_works, expect_error_and_close

LIMITS_CONFIG = "[stomp]\nmax_frame_bytes = 1024\nmax_headers = 10\n"


@pytest.fixture
def limited_broker(broker_factory):
    return broker_factory(config=LIMITS_CONFIG)


def connected(port, version="1.2"):
    raw = RawStomp(port)
    raw.connect(version)
    return raw


def expect_rejected(broker, data, version="1.2", connect=True):
    """Sends `data` (after CONNECT unless connect=False) and checks ERROR + close + health."""
    raw = connected(broker.port, version) if connect else RawStomp(broker.port)
    with raw:
        raw.send(data)
        error = expect_error_and_close(raw)
    assert_broker_works(broker.port)
    return error


def test_unknown_command(broker):
    expect_rejected(broker, b"FROBNICATE\nx:y\n\n\x00")


def test_unknown_command_before_connect(broker):
    expect_rejected(broker, b"HELLO\n\n\x00", connect=False)


def test_header_line_without_colon(broker, unique):
    expect_rejected(broker, b"SEND\ndestination:" + unique().encode() +
                    b"\nthis line has no colon\n\nbody\x00")


def test_bad_escape_in_1_2_header(broker, unique):
    error = expect_rejected(broker, b"SEND\ndestination:" + unique().encode() +
                            b"\nx-bad:a\\tb\n\nbody\x00")
    assert error.command == "ERROR"


def test_backslash_is_literal_in_1_0(broker, unique):
    queue = unique()
    with connected(broker.port, "1.0") as raw:
        raw.send_frame("SUBSCRIBE", [("destination", queue), ("receipt", "s")])
        assert raw.read_frame().command == "RECEIPT"
        raw.send(b"SEND\ndestination:" + queue.encode() + b"\nx-raw:a\\tb\n\nbody\x00")
        message = raw.read_frame()
        assert message.command == "MESSAGE", message
        assert message.header("x-raw") == "a\\tb", message


def test_content_length_longer_than_body(broker, unique):
    # content-length:10, but the NUL arrives after 3 bytes and byte 10 is not a NUL.
    expect_rejected(broker, b"SEND\ndestination:" + unique().encode() +
                    b"\ncontent-length:10\n\nabc\x00defghijkl\x00")


def test_content_length_not_a_number(broker, unique):
    expect_rejected(broker, b"SEND\ndestination:" + unique().encode() +
                    b"\ncontent-length:ten\n\nabc\x00")


@pytest.mark.parametrize("shape", ["content-length body", "nul-terminated body", "huge header"])
def test_frame_over_max_frame_bytes(limited_broker, unique, shape):
    dest = unique().encode()
    if shape == "content-length body":
        data = b"SEND\ndestination:" + dest + b"\ncontent-length:2000\n\n" + b"x" * 2000 + b"\x00"
    elif shape == "nul-terminated body":
        data = b"SEND\ndestination:" + dest + b"\n\n" + b"x" * 2000 + b"\x00"
    else:
        data = b"SEND\ndestination:" + dest + b"\nx-big:" + b"y" * 2000 + b"\n\n\x00"
    expect_rejected(limited_broker, data)


def test_frame_under_max_frame_bytes_is_fine(limited_broker, unique):
    queue = unique()
    body = b"z" * 500
    with connected(limited_broker.port) as raw:
        raw.send_frame("SUBSCRIBE", [("destination", queue), ("id", "0"), ("receipt", "s")])
        assert raw.read_frame().command == "RECEIPT"
        raw.send_frame("SEND", [("destination", queue), ("content-length", "500")], body)
        message = raw.read_frame()
        assert (message.command, message.body) == ("MESSAGE", body), message


def test_too_many_headers(limited_broker, unique):
    headers = b"".join(b"x-h%d:v\n" % i for i in range(20))
    expect_rejected(limited_broker, b"SEND\ndestination:" + unique().encode() + b"\n" +
                    headers + b"\nbody\x00")


def test_send_without_destination(broker):
    expect_rejected(broker, b"SEND\nx-only:header\n\nlost\x00")


def test_subscribe_without_destination(broker):
    expect_rejected(broker, b"SUBSCRIBE\nid:0\n\n\x00")


@pytest.mark.parametrize("version, frame", [
    ("1.2", b"ACK\nid:no-such-ack-id\n\n\x00"),
    ("1.1", b"ACK\nmessage-id:no-such-message\nsubscription:0\n\n\x00"),
])
def test_ack_for_unknown_id(broker, version, frame):
    expect_rejected(broker, frame, version=version)


def test_frame_before_connect(broker, unique):
    expect_rejected(broker, b"SEND\ndestination:" + unique().encode() + b"\n\nhi\x00",
                    connect=False)


def test_commit_of_unknown_transaction(broker):
    expect_rejected(broker, b"COMMIT\ntransaction:never-begun\n\n\x00")


def test_bad_frame_on_one_connection_leaves_others_alone(broker, stomp_client, unique):
    queue = unique()
    bystander = stomp_client(broker)
    bystander.subscribe(queue)
    with connected(broker.port) as raw:
        raw.send(b"BOGUS\n\n\x00")
        expect_error_and_close(raw)
    bystander.send(queue, "unaffected")
    assert bystander.wait_messages(1)[0].body == "unaffected"
    assert not bystander.disconnected
