"""--store postgres when PostgreSQL goes away: the server is stopped mid-run and started again.
While it is down, persistent SENDs are refused with an ERROR (never receipted and then lost),
the broker keeps running and serving what it holds, and once the server is back persistent
SENDs are receipted again without restarting the broker; every receipted message survives.
Also: a broker cannot start without its database, and two brokers cannot share a schema.

Uses its own throwaway server (scripts/postgres-test-server), since it stops it; skipped only
when the PostgreSQL server binaries are not installed.
"""

import uuid

import pytest

from helpers import postgres
from helpers.wait import wait_for

PERSISTENT = {"persistent": "true"}


@pytest.fixture(scope="module")
def pg():
    if not postgres.available():
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql)")
    server = postgres.PostgresServer()
    yield server
    server.destroy()


@pytest.fixture
def pg_broker(pg, broker_factory):
    def make(start=True, schema=None, **kwargs):
        config = postgres.broker_config(schema or postgres.unique_schema())
        return broker_factory(start=start, store="postgres", config=config,
                              extra_args=["--postgres", pg.url], **kwargs)
    return make


def refused_send(stomp_client, broker, queue, body):
    """A persistent SEND with a receipt on a fresh connection; returns the ERROR frame it got."""
    client = stomp_client(broker)
    receipt = "r-" + uuid.uuid4().hex[:8]
    client.conn.send(queue, body, headers={**PERSISTENT, "receipt": receipt})
    client._wait(lambda: client.errors or receipt in client.receipts, 10, "ERROR or RECEIPT")
    assert receipt not in client.receipts, "a persistent SEND was receipted while PostgreSQL was down"
    return client.errors[0]


def try_send(stomp_client, broker, queue, body):
    """True if a persistent SEND on a fresh connection is receipted, False if refused."""
    client = stomp_client(broker)
    receipt = "r-" + uuid.uuid4().hex[:8]
    client.conn.send(queue, body, headers={**PERSISTENT, "receipt": receipt})
    client._wait(lambda: client.errors or receipt in client.receipts, 10, "ERROR or RECEIPT")
    ok = receipt in client.receipts
    client.close_quietly()
    return ok


@pytest.mark.timeout(90)
def test_postgres_stopped_and_started_mid_run(pg, pg_broker, stomp_client, unique):
    broker = pg_broker()
    queue = unique()
    before = [f"before-{i}" for i in range(30)]
    stomp_client(broker).send_many(queue, before, headers=PERSISTENT)

    pg.stop()
    try:
        error = refused_send(stomp_client, broker, queue, "during-1")
        assert "not stored" in error.headers.get("message", ""), error.headers
        assert "unavailable" in error.body or "postgres" in error.body, error.body
        # Still refused on the next try, and the broker stays up serving what it holds.
        refused_send(stomp_client, broker, queue, "during-2")
        assert broker.running(), broker.log()
        reader = stomp_client(broker)
        reader.subscribe(unique(), wait=True)  # the broker still answers with receipts
        reader.disconnect()
    finally:
        pg.start()

    # Back without restarting the broker: poll until a persistent SEND is receipted again.
    after = []

    def send_works():
        body = f"after-{len(after)}"
        if try_send(stomp_client, broker, queue, body):
            after.append(body)
            return True
        return False

    wait_for(send_works, 20, lambda: f"persistent SENDs still refused after PostgreSQL came back:\n"
                                     f"{broker.log()}", interval=0.1)
    stomp_client(broker).send_many(queue, ["after-more"], headers=PERSISTENT)

    broker.kill()
    broker.start()
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    wanted = before + after + ["after-more"]
    wait_for(lambda: set(wanted) <= set(consumer.bodies()), 15,
             lambda: f"lost: {sorted(set(wanted) - set(consumer.bodies()))}")
    got = consumer.bodies()
    assert "during-1" not in got and "during-2" not in got, "a refused message was stored"
    assert [b for b in got if b in wanted] == wanted, "order across the outage"


def test_broker_does_not_start_without_its_database(broker_factory, pg):
    broker = broker_factory(start=False, store="postgres",
                            extra_args=["--postgres", "postgresql://carrier@127.0.0.1:1/carrier?connect_timeout=3"])
    broker.spawn()
    code = broker.wait_exit(timeout=15)
    assert code != 0
    assert "postgres" in broker.log() and "connect" in broker.log(), broker.log()


def test_two_brokers_cannot_share_a_schema(pg_broker):
    schema = postgres.unique_schema()
    first = pg_broker(schema=schema)
    second = pg_broker(start=False, schema=schema)
    second.spawn()
    code = second.wait_exit(timeout=20)
    assert code != 0
    assert "in use by another Carrier broker" in second.log(), second.log()
    assert first.running()
