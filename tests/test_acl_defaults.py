"""Safe defaults (issue 16, as Mosquitto 2): without users, loopback listeners keep the zero-config
behaviour, and a listener on any other address refuses to start unless [auth] allow_anonymous =
true says so; with users it starts as before."""

import subprocess

import pytest

from helpers.broker import carrier_bin, free_port
from test_auth import passwd


def serve(tmp_path, host, config=None, timeout=15):
    """`carrier serve` with STOMP on HOST; returns the CompletedProcess, or None if it kept running."""
    args = [str(carrier_bin()), "serve", "--stomp", f"{host}:{free_port()}", "--mqtt", "off", "--http", "off",
            "--store", "memory", "--shards", "1"]
    if config is not None:
        (tmp_path / "carrier.toml").write_text(config)
        args += ["--config", str(tmp_path / "carrier.toml")]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return subprocess.CompletedProcess(args, proc.returncode, out, "")
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None


@pytest.mark.parametrize("host", ["0.0.0.0"])
def test_non_loopback_listener_without_users_refuses_to_start(tmp_path, host):
    result = serve(tmp_path, host)
    assert result is not None, "carrier kept running on a non-loopback address without users"
    assert result.returncode == 2, result.stdout
    assert "not a loopback address" in result.stdout and "allow_anonymous" in result.stdout, result.stdout


def test_allow_anonymous_opens_a_non_loopback_listener(broker_factory):
    broker = broker_factory(start=False, config="[auth]\nallow_anonymous = true\n", stomp_flag=False)
    broker.start(extra_args=["--stomp", f"0.0.0.0:{broker.port}"])
    assert "authentication: no users configured" in broker.log()


def test_users_open_a_non_loopback_listener(broker_factory):
    broker = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\n', stomp_flag=False)
    (broker.workdir / "users.txt").write_text(passwd("alice", "wonderland") + "\n")
    broker.start(extra_args=["--stomp", f"0.0.0.0:{broker.port}"])


def test_loopback_keeps_zero_config(tmp_path):
    # Keeps running (no exit within the time given): the zero-config broker of `make run`.
    assert serve(tmp_path, "127.0.0.1", timeout=3) is None


def test_contradicting_anonymous_keys_are_refused(tmp_path):
    result = serve(tmp_path, "127.0.0.1", config="[auth]\nanonymous = true\nallow_anonymous = false\n")
    assert result is not None and result.returncode == 2
    assert "allow_anonymous" in result.stdout


def test_bad_acl_file_stops_start_up_naming_the_line(tmp_path):
    (tmp_path / "acl.txt").write_text("user alice\nqueue read orders.>\nfrobnicate x\n")
    result = serve(tmp_path, "127.0.0.1", config='[auth]\nacl_file = "acl.txt"\n')
    assert result is not None and result.returncode == 2
    assert "acl.txt:3" in result.stdout and "frobnicate" in result.stdout, result.stdout
