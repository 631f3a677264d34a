"""SIGHUP reloads what can change live (docs/configuration.md, "Reloading"): the log level, the
destination policies and the users (inline and the users file); each outcome is logged; a key
that cannot change live says so; a broken file keeps everything as it was."""

import signal

from helpers.broker import carrier_bin
from helpers.raw_stomp import RawStomp
from helpers.reliable import fresh, policy
from helpers.users import passwd_line
from helpers.wait import wait_for

from test_reliable_limits import send_until_refused, says_full


def serving(broker_factory, config):
    """A broker whose log level comes from its config file alone (no --log-level flag, which
    would win over the file on every reload)."""
    b = broker_factory(start=False, config=config)
    b.command = lambda extra_args=(): [
        str(carrier_bin()), "serve", "--stomp", f"127.0.0.1:{b.port}", "--mqtt", f"127.0.0.1:{b.mqtt_port}",
        "--http", f"127.0.0.1:{b.http_port}", "--data-dir", str(b.data_dir), "--shards", "2",
        "--config", str(b.config_path)]
    return b


def reload(b, text, wait_line):
    """Writes the config, sends SIGHUP and waits for `wait_line` in the log (what the reload
    logs last in that case); returns the log from this reload on."""
    before = len(b.log())
    b.config_path.write_text(text)
    b.send_signal(signal.SIGHUP)
    wait_for(lambda: wait_line in b.log()[before:], message=lambda: f"{wait_line!r} in:\n{b.log()[before:]}")
    return b.log()[before:]


def login(port, user, password):
    """Whether CONNECT with these credentials gets CONNECTED (else an ERROR)."""
    with RawStomp(port) as raw:
        raw.send_frame("CONNECT", [("accept-version", "1.2"), ("host", "localhost"), ("login", user),
                                   ("passcode", password)])
        return raw.read_frame().command == "CONNECTED"


def start(b):
    b.start()
    return b


def test_log_level_changes_live(broker_factory):
    b = start(serving(broker_factory, 'log_level = "info"\n'))

    def refused_send():
        with RawStomp(b.port) as raw:
            raw.connect("1.2")
            raw.send_frame("SEND", [("destination", "/exchange/nosuch/key")], b"")
            assert raw.read_frame().command == "ERROR"
    refused_send()
    assert "ERROR:" not in b.log()  # a debug line, not shown at info
    out = reload(b, 'log_level = "debug"\n', "SIGHUP: log level debug (was info)")
    assert "cannot change while running" not in out
    refused_send()
    wait_for(lambda: "ERROR:" in b.log(), message=lambda: f"the debug line once the level is debug:\n{b.log()}")


def test_policy_changes_live_and_a_broken_file_keeps_it(broker_factory):
    base = 'log_level = "info"\n'
    b = start(serving(broker_factory, base + policy("queue:lim.>", max_messages=2)))
    queue = fresh(prefix="lim")
    accepted, error = send_until_refused(b.port, queue, ["a", "b", "c"])
    assert accepted == ["a", "b"] and error is not None and says_full(error)
    out = reload(b, base + policy("queue:lim.>", max_messages=4), "destination policy in force (were 1)")
    assert "queue:lim.>" in out
    accepted, error = send_until_refused(b.port, queue, ["c", "d", "e"])
    assert accepted == ["c", "d"] and error is not None and says_full(error)
    # A file that does not parse: the error is logged and the policy in force stays.
    out = reload(b, base + "[[policy]]\nmatch = \n", "not reloaded, everything stays as it was")
    accepted, error = send_until_refused(b.port, fresh(prefix="lim"), ["1", "2", "3", "4", "5"])
    assert len(accepted) == 4 and error is not None
    # A key that needs a restart says so, and the rest still applies.
    out = reload(b, base + "[stomp]\nmax_frame_bytes = 100000\n" + policy("queue:lim.>", max_messages=1),
                 "takes effect at the next restart")
    assert "'stomp.max_frame_bytes' changed" in out, out
    assert "destination policy in force (were 1)" in out, out
    accepted, error = send_until_refused(b.port, fresh(prefix="lim"), ["1", "2"])
    assert accepted == ["1"] and error is not None


def test_users_change_live_and_a_broken_users_file_keeps_them(broker_factory):
    config = '[auth]\nusers_file = "users.txt"\nfailure_delay_ms = 0\n'
    b = serving(broker_factory, config)
    users = b.workdir / "users.txt"
    alice, bob = passwd_line("alice", "wonderland"), passwd_line("bob", "builder")
    users.write_text(alice + "\n")
    start(b)
    assert login(b.port, "alice", "wonderland")
    assert not login(b.port, "bob", "builder")
    out = reload(b, config, "no setting changed")
    assert "user(s) in force" not in out  # nothing changed yet: the users file is the same
    users.write_text(bob + "\n")
    out = reload(b, config, "user(s) in force")
    assert "1 user(s) in force; added [bob], removed [alice]" in out, out
    assert login(b.port, "bob", "builder")
    assert not login(b.port, "alice", "wonderland")
    # A users file with a bad line: nothing changes.
    users.write_text(bob + "\nthis is not a user line\n")
    out = reload(b, config, "not reloaded, everything stays as it was")
    assert login(b.port, "bob", "builder")
    assert not login(b.port, "alice", "wonderland")
