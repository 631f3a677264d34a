"""Every error status the HTTP API emits, as an RFC 9457 problem document
(application/problem+json with type, title, status, detail), and HTTP Basic authentication
with the users STOMP and MQTT clients use."""

import uuid

import pytest

from helpers.http import alice_line, Raw, basic, receive, request, send  # noqa: F401 (alice_line: a fixture)


def name():
    return f"e{uuid.uuid4().hex[:10]}"


def assert_problem(r, status):
    assert r.status == status, r
    assert r.headers["content-type"] == "application/problem+json", r
    doc = r.json()
    assert doc["status"] == status and doc["title"] and doc["type"] and doc["detail"], doc
    return doc


def test_unknown_path_is_404(broker):
    assert_problem(request(broker.http_port, "GET", "/v1/nothing"), 404)
    assert_problem(request(broker.http_port, "GET", "/v1/queues/a/other"), 404)


def test_wrong_method_is_405_with_allow(broker):
    r = request(broker.http_port, "DELETE", f"/v1/queues/{name()}/messages")
    assert_problem(r, 405)
    assert r.headers["allow"] == "GET, POST"
    r = request(broker.http_port, "GET", f"/v1/topics/{name()}/messages")
    assert_problem(r, 405)
    assert r.headers["allow"] == "POST"


@pytest.mark.parametrize("query", ["max=0", "max=9223372036854775808", "max=99999999999999999999999",
                                   "wait=9223372036854775808s", "wait=9223372036854775808", "wait=61s",
                                   "wait=soon", "ack=later", "colour=red", "max=%zz"])
def test_bad_poll_parameters_are_400(broker, query):
    doc = assert_problem(request(broker.http_port, "GET", f"/v1/queues/{name()}/messages?{query}"), 400)
    assert len(doc["detail"]) < 300


@pytest.mark.parametrize("headers", [{"Carrier-Header-priority": "10"}, {"Carrier-Header-persistent": "maybe"},
                                     {"Carrier-Header-delay": "9223372036854775808"}])
def test_bad_message_headers_are_400(broker, headers):
    assert_problem(request(broker.http_port, "POST", f"/v1/queues/{name()}/messages", body=b"x",
                           headers=headers), 400)


def test_bad_batch_is_400(broker):
    r = request(broker.http_port, "POST", f"/v1/queues/{name()}/messages", body=b'[{"body": 1}]',
                headers={"Content-Type": "application/vnd.carrier.batch+json"})
    assert "batch entry 0" in assert_problem(r, 400)["detail"]


def test_wildcard_name_is_400_and_reserved_name_403(broker):
    assert_problem(request(broker.http_port, "POST", "/v1/queues/a.*/messages", body=b"x"), 400)
    assert_problem(request(broker.http_port, "POST", "/v1/topics/a.%3E/messages", body=b"x"), 400)
    assert_problem(request(broker.http_port, "POST", "/v1/queues/$mqtt-sessions/messages", body=b"x"), 403)
    assert_problem(request(broker.http_port, "GET", "/v1/queues/%24x/messages"), 403)


def test_post_without_length_is_411(broker):
    with Raw(broker.http_port) as raw:
        raw.send(f"POST /v1/queues/{name()}/messages HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        status, headers, body = raw.read_response()
        assert status == 411 and headers["content-type"] == "application/problem+json"
        # The connection goes on: a well-formed request without a body is only refused.
        raw.send(b"GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n")
        assert raw.read_response()[0] == 200


def test_content_encoding_is_415(broker):
    r = request(broker.http_port, "POST", f"/v1/queues/{name()}/messages", body=b"x",
                headers={"Content-Encoding": "gzip"})
    assert_problem(r, 415)


def test_body_over_the_limit_is_413(broker_factory):
    b = broker_factory(config="[http]\nmax_body_bytes = 1024\n")
    assert_problem(request(b.http_port, "POST", f"/v1/queues/{name()}/messages", body=b"x" * 1025), 413)
    assert request(b.http_port, "POST", f"/v1/queues/{name()}/messages", body=b"x" * 1024).status == 201
    with Raw(b.http_port) as raw:  # 2^63 announced: refused before any of it is read
        raw.send(f"POST /v1/queues/{name()}/messages HTTP/1.1\r\nHost: x\r\n"
                 f"Content-Length: 9223372036854775808\r\n\r\n".encode())
        status, headers, _ = raw.read_response()
        assert status == 413 and headers["connection"] == "close"
    with Raw(b.http_port) as raw:  # past 2^64: not a length at all
        raw.send(f"POST /v1/queues/{name()}/messages HTTP/1.1\r\nHost: x\r\n"
                 f"Content-Length: 99999999999999999999999\r\n\r\n".encode())
        assert raw.read_response()[0] == 400
    with Raw(b.http_port) as raw:  # chunked: counted as it comes
        raw.send(f"POST /v1/queues/{name()}/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                 f"400\r\n{'y' * 1024}\r\n1\r\nz\r\n0\r\n\r\n".encode())
        assert raw.read_response()[0] == 413
    with Raw(b.http_port) as raw:  # a chunk of 2^63 bytes announced: refused from its size line
        raw.send(f"POST /v1/queues/{name()}/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                 f"8000000000000000\r\n".encode())
        status, headers, _ = raw.read_response()
        assert status == 413 and headers["connection"] == "close", (status, headers)
    with Raw(b.http_port) as raw:  # a chunk size past 2^64
        raw.send(f"POST /v1/queues/{name()}/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                 f"1{'0' * 20}\r\n".encode())
        assert raw.read_response()[0] == 400
    # Everyone else is still served.
    assert request(b.http_port, "POST", f"/v1/queues/{name()}/messages", body=b"still here").status == 201


def test_oversized_headers_are_431(broker):
    r = request(broker.http_port, "GET", "/v1/openapi.json", headers={"X-Big": "a" * 20000})
    assert_problem(r, 431)
    assert request(broker.http_port, "GET", "/v1/openapi.json").status == 200


def test_too_many_message_headers_are_431(broker_factory):
    b = broker_factory(config="[http]\nmax_message_headers = 3\n")
    headers = {f"Carrier-Header-h{i}": "v" for i in range(4)}
    assert_problem(request(b.http_port, "POST", f"/v1/queues/{name()}/messages", body=b"x", headers=headers), 431)


def test_full_blocking_queue_is_429_with_retry_after(broker_factory):
    b = broker_factory(store="memory", shards=1, config=(
        '[[policy]]\nmatch = "queue:full.>"\nmax_messages = 3\noverflow = "block"\n'))
    q = f"full.{name()}"
    statuses = []
    for _ in range(10):
        r = request(b.http_port, "POST", f"/v1/queues/{q}/messages", body=b"m")
        statuses.append(r.status)
        if r.status == 429:
            assert r.headers["retry-after"] == "1"
            assert_problem(r, 429)
            break
    assert statuses[-1] == 429, statuses
    # Drained, the queue takes messages again.
    receive(b.http_port, q, "max=100&wait=1s")
    from helpers.wait import wait_for
    wait_for(lambda: request(b.http_port, "POST", f"/v1/queues/{q}/messages", body=b"m").status == 201, 10,
             "the queue to take messages again")


def test_malformed_request_line_is_400_and_closes(broker):
    for line in (b"NONSENSE\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n", b"GET /v1/openapi.json HTTP/1.1\r\nBad Header\r\n\r\n"):
        with Raw(broker.http_port) as raw:
            raw.send(line)
            status, headers, body = raw.read_response()
            assert status == 400 and headers["connection"] == "close", (line, status, body)
            assert raw.closed()


# --- authentication ---------------------------------------------------------------------------



@pytest.fixture
def auth_http(broker_factory, alice_line):
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\nfailure_delay_ms = 0\n')
    (b.workdir / "users.txt").write_text(alice_line + "\n")
    b.start()
    return b


def test_basic_auth_with_the_brokers_users(auth_http, stomp_client):
    port = auth_http.http_port
    q = name()
    r = request(port, "POST", f"/v1/queues/{q}/messages", body=b"x")
    assert_problem(r, 401)
    assert r.headers["www-authenticate"] == 'Basic realm="carrier"'
    assert_problem(request(port, "POST", f"/v1/queues/{q}/messages", body=b"x",
                           headers=basic("alice", "wrong")), 401)
    assert_problem(request(port, "POST", f"/v1/queues/{q}/messages", body=b"x",
                           headers={"Authorization": "Bearer abc"}), 401)
    send(auth_http.http_port, q, b"authorized", headers=basic("alice", "wonderland"))
    [m] = receive(port, q, headers=basic("alice", "wonderland"))
    assert m["body"] == "authorized"


def test_without_users_everyone_is_let_in(broker):
    send(broker.http_port, name(), b"x", headers=basic("nobody", "anything"))


def test_failed_logins_from_one_address_are_throttled_with_429(broker_factory, alice_line):
    # The failure ledger STOMP and MQTT share: past source_failure_limit wrong passwords, the
    # address is refused without a check (429), and even the right password waits.
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\nfailure_delay_ms = 0\n'
                                           'source_failure_limit = 3\nfailure_window_ms = 600000\n')
    (b.workdir / "users.txt").write_text(alice_line + "\n")
    b.start()
    statuses = [request(b.http_port, "GET", "/v1/openapi.json", headers=basic("alice", f"bad{i}")).status
                for i in range(5)]
    assert statuses[:3] == [401, 401, 401] and statuses[3:] == [429, 429], statuses
    r = request(b.http_port, "GET", "/v1/openapi.json", headers=basic("alice", "wonderland"))
    assert_problem(r, 429)
    assert r.headers["retry-after"] == "5"


def test_unknown_queue_is_404_when_queues_are_not_created_on_use(broker_factory):
    b = broker_factory(config='[core]\nauto_create = false\nqueues = ["known"]\n')
    doc = assert_problem(request(b.http_port, "POST", "/v1/queues/unknown/messages", body=b"x"), 404)
    assert "unknown" in doc["detail"]
    assert_problem(request(b.http_port, "GET", "/v1/queues/unknown/messages"), 404)
    send(b.http_port, "known", b"x")


def test_request_smuggling_shapes_and_other_codings(broker):
    cases = {
        b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n": 400,
        b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd": 400,
        b"Content-Length: -1\r\n\r\n": 400,
        b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n": 501,
    }
    for headers, status in cases.items():
        with Raw(broker.http_port) as raw:
            raw.send(f"POST /v1/queues/{name()}/messages HTTP/1.1\r\nHost: x\r\n".encode() + headers)
            got = raw.read_response()
            assert got[0] == status, (headers, got)
            assert got[1]["content-type"] == "application/problem+json"


def test_absolute_form_target_is_the_same_resource(broker):
    with Raw(broker.http_port) as raw:
        raw.send(b"GET http://127.0.0.1/v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert raw.read_response()[0] == 200
