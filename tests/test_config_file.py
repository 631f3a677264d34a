"""The TOML config file: unknown keys and bad values are refused at start with the key named
on stderr; the file's settings apply; command-line flags override the file."""

import pytest

from helpers.broker import free_port, port_accepts
from helpers.raw_stomp import RawStomp, assert_broker_works


def refused(broker_factory, config, extra_args=()):
    broker = broker_factory(start=False, config=config, extra_args=list(extra_args))
    broker.spawn()
    code = broker.wait_exit(timeout=10)
    assert code != 0, f"carrier accepted a bad config:\n{config}\n{broker.log()}"
    assert not port_accepts(broker.port)
    return broker.log()


@pytest.mark.parametrize("config, key", [
    ("bogus_key = 1\n", "bogus_key"),
    ("[stomp]\nlisten_on = \"127.0.0.1:1\"\n", "listen_on"),
    ("[journal]\nsegment_size = 100\n", "segment_size"),
    ("[nonsense]\nx = 1\n", "nonsense"),
])
def test_unknown_key_is_refused_by_name(broker_factory, config, key):
    assert key in refused(broker_factory, config)


@pytest.mark.parametrize("config, key", [
    ('shards = "x"\n', "shards"),
    ('log_level = "loud"\n', "log_level"),
    ('store = "floppy"\n', "store"),
    ("[stomp]\nmax_frame_bytes = \"big\"\n", "max_frame_bytes"),
    ("[stomp]\nlisten = \"not-an-address\"\n", "listen"),
    ("[core]\nauto_create = 3\n", "auto_create"),
    ("[journal]\nfsync = \"sometimes\"\n", "fsync"),
])
def test_bad_value_is_refused_by_name(broker_factory, config, key):
    assert key in refused(broker_factory, config)


def test_toml_syntax_error_is_refused(broker_factory):
    log = refused(broker_factory, "shards = = 2\n")
    assert "carrier.toml" in log, log


def test_missing_config_file_is_refused(broker_factory, tmp_path):
    broker = broker_factory(start=False, extra_args=["--config", str(tmp_path / "absent.toml")])
    broker.spawn()
    assert broker.wait_exit(timeout=10) != 0
    assert "absent.toml" in broker.log(), broker.log()


def test_bad_flag_value_is_refused(broker_factory):
    broker = broker_factory(start=False, extra_args=["--shards", "many"])
    broker.spawn()
    assert broker.wait_exit(timeout=10) != 0
    assert "shards" in broker.log(), broker.log()


def test_listen_address_from_the_file(broker_factory):
    port = free_port()
    broker = broker_factory(start=False, port=port, stomp_flag=False,
                            config=f'[stomp]\nlisten = "127.0.0.1:{port}"\n')
    broker.start()
    assert_broker_works(port)


def test_flags_override_the_file(broker_factory):
    file_port, flag_port = free_port(), free_port()
    broker = broker_factory(start=False, port=flag_port,
                            config=f'[stomp]\nlisten = "127.0.0.1:{file_port}"\n')
    broker.start()  # with --stomp 127.0.0.1:<flag_port>
    assert_broker_works(flag_port)
    assert not port_accepts(file_port), "the file's listen address should be overridden"


def test_data_dir_from_the_file_and_flag_override(broker_factory, stomp_client, unique, tmp_path):
    file_dir, flag_dir = tmp_path / "from-file", tmp_path / "from-flag"
    broker = broker_factory(start=False, data_dir=flag_dir,
                            config=f'data_dir = "{file_dir}"\nstore = "log"\n')
    broker.start()
    stomp_client(broker).send(unique(), "where am I", headers={"persistent": "true"})
    assert list((flag_dir / "journal").glob("*.log")), "the journal belongs in --data-dir"
    assert not file_dir.exists(), "the file's data_dir should be overridden"


def test_full_config_is_accepted(broker_factory, stomp_client, unique):
    config = """
log_level = "debug"
shards = 2
store = "log"

[stomp]
max_frame_bytes = 65536
max_headers = 50
heartbeat_ms = 5000
heartbeat_min_ms = 2000

[core]
auto_create = true
prefetch_auto = 500
prefetch_client = 50

[journal]
segment_bytes = 1048576
fsync = true
"""
    broker = broker_factory(config=config)
    client = stomp_client(broker)
    queue = unique()
    client.subscribe(queue)
    client.send(queue, "configured")
    assert client.wait_messages(1)[0].body == "configured"
    with RawStomp(broker.port) as raw:
        connected = raw.connect("1.2", heartbeat="1000,1000")
        assert connected.header("heart-beat") == "2000,2000", connected  # raised to the floor
    with RawStomp(broker.port) as raw:
        connected = raw.connect("1.2", heartbeat="0,0")
        assert connected.header("heart-beat") == "5000,5000", connected
