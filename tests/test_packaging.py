"""The Debian package (packaging/, docs/install.md): cpack builds it from the build tree this
binary came from; its control files, contents and systemd unit are checked; the unpacked binary
runs with the packaged configuration, every documented default uncommented, and tells the
service manager (sd_notify) when it is ready and when it stops."""

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from helpers.broker import carrier_bin, free_port


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    build = carrier_bin().resolve().parent
    assert (build / "CPackConfig.cmake").exists(), f"{build} has no CPackConfig.cmake: not a CMake build tree"
    out = tmp_path_factory.mktemp("package")
    # cpack installs what `all` built; the generated config and man page are part of `all`.
    run = subprocess.run(["cpack", "--config", str(build / "CPackConfig.cmake"), "-B", str(out)],
                         cwd=build, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    debs = list(out.glob("carrier_*.deb"))
    assert len(debs) == 1, f"expected one .deb in {out}: {list(out.iterdir())}"
    root = out / "root"
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(root)], check=True)
    return debs[0], root


def dpkg_field(deb, field):
    return subprocess.run(["dpkg-deb", "-f", str(deb), field], capture_output=True, text=True, check=True).stdout.strip()


def test_package_holds_binary_config_unit_and_man_page(package):
    deb, root = package
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    for path in ("./usr/bin/carrier", "./etc/carrier/carrier.toml", "./lib/systemd/system/carrier.service",
                 "./usr/share/man/man1/carrier.1.gz"):
        assert path in listing, listing
    assert dpkg_field(deb, "Package") == "carrier"
    depends = dpkg_field(deb, "Depends")
    for lib in ("adduser", "libc6", "libssl3", "libsystemd0", "libsodium23"):
        assert lib in depends, depends
    control = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(deb)], capture_output=True, check=True).stdout
    assert b"./postinst" in subprocess.run(["tar", "-t"], input=control, capture_output=True, check=True).stdout
    info = subprocess.run(["dpkg-deb", "-I", str(deb), "conffiles"], capture_output=True, text=True, check=True).stdout
    assert info.split() == ["/etc/carrier/carrier.toml"]
    version = subprocess.run([str(root / "usr/bin/carrier"), "version"], capture_output=True, text=True, timeout=20)
    assert version.returncode == 0 and dpkg_field(deb, "Version") in version.stdout, version.stdout + version.stderr


def test_packaged_config_lists_every_documented_key(package):
    _, root = package
    text = (root / "etc/carrier/carrier.toml").read_text()
    docs = (Path(__file__).resolve().parent.parent / "docs/configuration.md").read_text()
    keys = docs.split("\n## Keys", 1)[1].split("\n## Flags", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_]+)` ", keys, re.M))
    assert len(documented) > 50, "the docs' key tables were not found"
    listed = set(re.findall(r"^#? ?([a-z_]+)(?: =|:)", text, re.M))
    assert documented <= listed, f"missing from the packaged config: {sorted(documented - listed)}"
    assert re.search(r'^data_dir = "/var/lib/carrier"$', text, re.M)


def test_unit_file_verifies(package, tmp_path):
    _, root = package
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze not found (Debian's systemd package)")
    unit = (root / "lib/systemd/system/carrier.service").read_text()
    assert "Type=notify" in unit and "NoNewPrivileges=yes" in unit and "User=carrier" in unit
    # verify needs the ExecStart binary where the unit says: point it at the unpacked one.
    local = tmp_path / "carrier.service"
    local.write_text(unit.replace("ExecStart=/usr/bin/carrier", f"ExecStart={root}/usr/bin/carrier"))
    run = subprocess.run(["systemd-analyze", "verify", "--man=no", str(local)], capture_output=True, text=True,
                         timeout=60)
    problems = [line for line in (run.stdout + run.stderr).splitlines() if "carrier.service" in line]
    assert run.returncode == 0 and not problems, run.stdout + run.stderr


def test_packaged_binary_runs_every_default_and_notifies_readiness(package, tmp_path):
    _, root = package
    # Every commented `# key = value` uncommented: each documented default must be accepted.
    lines = []
    for line in (root / "etc/carrier/carrier.toml").read_text().splitlines():
        lines.append(line[2:] if re.match(r"^# [a-z_]+ = ", line) else line)
    config = tmp_path / "carrier.toml"
    config.write_text("\n".join(lines) + "\n")
    assert 'log_level = "info"' in config.read_text()

    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify_path = str(tmp_path / "notify.sock")
    notify.bind(notify_path)
    notify.settimeout(0.2)
    stomp_port, mqtt_port, http_port = free_port(), free_port(), free_port()
    env = dict(os.environ, NOTIFY_SOCKET=notify_path)
    proc = subprocess.Popen([str(root / "usr/bin/carrier"), "serve", "--config", str(config),
                             "--data-dir", str(tmp_path / "data"), "--stomp", f"127.0.0.1:{stomp_port}",
                             "--mqtt", f"127.0.0.1:{mqtt_port}", "--http", f"127.0.0.1:{http_port}"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        messages = []
        deadline = time.monotonic() + 30
        while not any("READY=1" in m for m in messages):
            try:
                messages.append(notify.recv(4096).decode())
            except socket.timeout:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"no READY=1 from the broker; got {messages}; log:\n{proc.communicate()[0]}")
        assert any(m.startswith("STATUS=recovering") for m in messages), messages
        with socket.create_connection(("127.0.0.1", http_port), timeout=5) as s:
            s.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert s.recv(64).startswith(b"HTTP/1.1 200"), "ready by sd_notify but not by /readyz"
        proc.send_signal(signal.SIGTERM)
        notify.settimeout(30)
        stopping = notify.recv(4096).decode()
        assert "STOPPING=1" in stopping, stopping
        assert proc.wait(timeout=30) == 0, proc.communicate()[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()
