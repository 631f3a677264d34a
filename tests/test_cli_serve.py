"""`carrier serve` as a process: signals, clean shutdown with clients connected, zero config,
--stomp off, --store memory."""

import signal

import pytest

from helpers.broker import port_accepts
from helpers.raw_stomp import RawStomp, assert_broker_works
from helpers.wait import assert_stays, wait_for


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_signal_with_connected_clients_exits_0(broker, stomp_client, unique, sig):
    queue = unique()
    busy = stomp_client(broker)
    busy.subscribe(queue, ack="client")
    busy.send(queue, "in flight")
    busy.wait_messages(1)
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        broker.send_signal(sig)
        # The client hears about it: an ERROR "broker shutting down", or just the close.
        frames = raw.wait_closed(timeout=10)
        for frame in frames:
            assert frame.command == "ERROR", frame
            assert "shutting down" in frame.header("message", ""), frame
        assert broker.stop() == 0, broker.log()
    wait_for(lambda: busy.disconnected, 5, "the stomp.py client to see the close")


def test_sigterm_idle_exits_0_and_releases_the_port(broker):
    assert broker.stop() == 0, broker.log()
    assert not port_accepts(broker.port)


def test_restart_on_same_port(broker):
    broker.restart()
    assert_broker_works(broker.port)


def test_memory_store(broker_factory, stomp_client, unique):
    broker = broker_factory(store="memory")
    queue = unique()
    stomp_client(broker).send(queue, "volatile", headers={"persistent": "true"})
    broker.restart()
    producer = stomp_client(broker)
    producer.send(queue, "marker")
    consumer = stomp_client(broker)
    consumer.subscribe(queue)
    assert consumer.wait_messages(1)[0].body == "marker"
    assert_stays(lambda: consumer.bodies() == ["marker"], 0.3, "memory store forgets")
    assert not broker.journal_dir.exists() or not broker.segments()


def test_stomp_off(broker_factory):
    broker = broker_factory(start=False, stomp_flag=False, extra_args=["--stomp", "off"])
    broker.spawn()
    assert_stays(broker.running, 1.0, lambda: f"carrier exited:\n{broker.log()}")
    assert not port_accepts(broker.port)
    assert broker.stop() == 0, broker.log()


def test_zero_config_defaults(broker_factory, stomp_client, unique):
    if port_accepts(61613):
        pytest.skip("something already listens on the default port 61613")
    broker = broker_factory(start=False, port=61613, bare=True)
    broker.start()
    assert_broker_works(61613)
    stomp_client(61613).send(unique(), "kept", headers={"persistent": "true"})
    assert broker.data_dir.is_dir(), "data goes to ./carrier-data by default"
    assert broker.segments(), "the default store is the log, in ./carrier-data/journal"
    assert broker.stop() == 0, broker.log()
