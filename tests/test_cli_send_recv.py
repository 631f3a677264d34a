"""`carrier send` / `carrier recv` against a running broker, checked with python3-stomp."""

import signal

from helpers.broker import free_port, run_cli
from helpers.wait import assert_stays


def server(broker):
    return ["--server", f"127.0.0.1:{broker.port}"]


def test_send_then_recv(broker, unique):
    queue = unique()
    sent = run_cli("send", queue, "--body", "hello", *server(broker))
    assert sent.returncode == 0, sent.stderr
    got = run_cli("recv", queue, *server(broker))
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == ["hello"], got.stdout


def test_send_reaches_a_stomp_py_consumer_with_headers(broker, stomp_client, unique):
    queue = unique()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    result = run_cli("send", queue, "--body", "with headers", "--header", "x-colour=blue",
                     "--header", "x-size=7", *server(broker))
    assert result.returncode == 0, result.stderr
    [m] = consumer.wait_messages(1)
    assert m.body == "with headers"
    assert m.headers.get("x-colour") == "blue", m.headers
    assert m.headers.get("x-size") == "7", m.headers


def test_send_count(broker, stomp_client, unique):
    queue = unique()
    result = run_cli("send", queue, "--body", "again", "--count", "5", *server(broker))
    assert result.returncode == 0, result.stderr
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    assert consumer.wait_messages(5) and consumer.bodies() == ["again"] * 5
    assert_stays(lambda: consumer.count() == 5, 0.3, lambda: consumer.bodies())


def test_recv_count_takes_that_many(broker, stomp_client, unique):
    queue = unique()
    producer = stomp_client(broker)
    for i in range(4):
        producer.send(queue, f"line {i}")
    got = run_cli("recv", queue, "--count", "3", *server(broker))
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines() == ["line 0", "line 1", "line 2"], got.stdout
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    assert [m.body for m in consumer.wait_messages(1)] == ["line 3"]
    assert_stays(lambda: consumer.count() == 1, 0.3, "recv acked the three it printed")


def test_recv_gets_a_stomp_py_message(broker, stomp_client, unique):
    queue = unique()
    stomp_client(broker).send(queue, "from python")
    got = run_cli("recv", queue, *server(broker))
    assert (got.returncode, got.stdout.splitlines()) == (0, ["from python"]), got.stderr


def test_persistent_send_survives_sigkill(broker, stomp_client, unique):
    queue = unique()
    result = run_cli("send", queue, "--body", "durable", "--persistent", *server(broker))
    assert result.returncode == 0, result.stderr
    broker.restart(sig=signal.SIGKILL)
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    [m] = consumer.wait_messages(1)
    assert m.body == "durable"
    assert m.headers.get("persistent") == "true", m.headers


def test_recv_times_out_with_exit_1(broker, unique):
    got = run_cli("recv", unique(), "--timeout", "1", *server(broker), timeout=15)
    assert got.returncode == 1, (got.returncode, got.stdout, got.stderr)
    assert got.stdout == "", got.stdout


def test_send_to_a_dead_server_fails(unique):
    result = run_cli("send", unique(), "--body", "x", "--server", f"127.0.0.1:{free_port()}",
                     timeout=15)
    assert result.returncode != 0
    assert result.stderr.strip(), "a failure should say why on stderr"


def test_version():
    result = run_cli("version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("carrier "), result.stdout
