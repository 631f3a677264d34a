"""[metrics] and [admin] in the config file (docs/configuration.md): bad values are refused at
start with the key named."""

import pytest

from helpers.broker import port_accepts


@pytest.mark.parametrize("config, key", [
    ("[metrics]\nmax_destination_series = -1\n", "max_destination_series"),
    ("[metrics]\ndestinations = \"orders.>\"\n", "destinations"),
    ("[metrics]\ndestinations = [1]\n", "destinations[0]"),
    ("[metrics]\nseries = 3\n", "series"),
    ("[admin]\nusers = \"alice\"\n", "users"),
])
def test_bad_metrics_and_admin_values_are_refused_by_name(broker_factory, config, key):
    broker = broker_factory(start=False, config=config)
    broker.spawn()
    assert broker.wait_exit(timeout=10) != 0, broker.log()
    assert not port_accepts(broker.port)
    assert key in broker.log(), broker.log()


def test_valid_sections_are_accepted(broker_factory):
    b = broker_factory(config='[metrics]\ndestinations = ["a.>", "b"]\nmax_destination_series = 0\n'
                              '[admin]\nusers = ["alice"]\n')
    assert b.running()
