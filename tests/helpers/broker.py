"""Starts and stops the real `carrier` binary (Dragonfly's df_server, Mosquitto's start_broker).

A `Broker` owns one data directory and one STOMP port across restarts, so a test can SIGKILL it
and start it again on the same journal. Its stdout and stderr go to a log file that the
fixtures print when a test fails.
"""

import fcntl
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from helpers.wait import wait_for

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0


def carrier_bin():
    """$CARRIER_BIN (ctest passes $<TARGET_FILE:carrier>) or <repo>/build/carrier."""
    path = os.environ.get("CARRIER_BIN")
    if path:
        return Path(path)
    for candidate in (REPO / "build" / "carrier", REPO / "build" / "src" / "cli" / "carrier"):
        if candidate.exists():
            return candidate
    return REPO / "build" / "carrier"


def _ephemeral_ports():
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


# Ports this process holds: each one's lock file stays open (and flocked) until the process
# exits, so the other test processes that ctest runs side by side skip it, even while its
# broker is stopped between two starts on the same port.
_reserved = {}
_PORT_LOCKS = Path(tempfile.gettempdir()) / "carrier-test-ports"
# The top of the range below the ephemeral ports is left to `carrier bench`'s own picks
# (src/cli/bench_process.cpp, free_port), which cannot see these locks.
BENCH_PORTS = 2000


def _reserve(port):
    """Takes `port` for this process unless another test process holds it."""
    _PORT_LOCKS.mkdir(mode=0o777, exist_ok=True)
    fd = os.open(_PORT_LOCKS / str(port), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _reserved[port] = fd
    return True


def free_port():
    """A port nobody listens on right now and no other test process holds, below the kernel's
    ephemeral range.

    Port 0 would hand out an ephemeral port, the very range the kernel also takes the source
    ports of outgoing connections from: a parallel test's client could hold it by the time the
    broker binds (EADDRINUSE). Below that range only another test's pick can collide: each pick
    is random, reserved across processes with a lock file (a broker restarted on its port keeps
    it while it is down) and checked bindable on every address."""
    low, _ = _ephemeral_ports()
    first = 20000 if low > 21000 + BENCH_PORTS else 10000
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(first, low - BENCH_PORTS)
        if port in _reserved:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
        if _reserve(port):
            return port
    raise AssertionError(f"no free port in {first}..{low - BENCH_PORTS - 1}")


def port_accepts(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def run_cli(*args, timeout=20.0, cwd=None):
    """Runs `carrier ARGS...` to completion; returns the CompletedProcess (text mode)."""
    return subprocess.run([str(carrier_bin()), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


class Broker:
    """One `carrier serve` process, restartable on the same data dir and port.

    `config` is TOML text written to <workdir>/carrier.toml and passed with --config.
    `stomp_flag=False` leaves --stomp out (the config file or the default decides);
    MQTT listens on `mqtt_port` (a free one by default) unless `mqtt_flag=False` leaves --mqtt
    out, so parallel brokers never compete for the default 1883; HTTP likewise on `http_port`
    (`http_flag=False` leaves --http out; the default is 8080);
    `bare=True` runs plain `carrier serve` + extra_args in workdir (zero config).
    """

    def __init__(self, workdir, port=None, config=None, store="log", shards=2, log_level=None,
                 extra_args=(), stomp_flag=True, data_dir=None, bare=False, mqtt_port=None,
                 mqtt_flag=True, preexec_fn=None, http_port=None, http_flag=True):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port if port is not None else free_port()
        self.auto_port = port is None
        self.data_dir = Path(data_dir) if data_dir else self.workdir / "data"
        self.config_path = None
        if config is not None:
            self.config_path = self.workdir / "carrier.toml"
            self.config_path.write_text(config)
        self.store = store
        self.shards = shards
        self.log_level = log_level or os.environ.get("CARRIER_TEST_LOG_LEVEL", "info")
        self.extra_args = list(extra_args)
        self.stomp_flag = stomp_flag
        self.mqtt_port = mqtt_port if mqtt_port is not None else free_port()
        self.auto_mqtt_port = mqtt_port is None
        self.mqtt_flag = mqtt_flag
        self.http_port = http_port if http_port is not None else free_port()
        self.auto_http_port = http_port is None
        self.http_flag = http_flag
        self.bare = bare
        self.preexec_fn = preexec_fn  # runs in the child before exec (e.g. to lower a limit)
        if bare:
            self.data_dir = self.workdir / "carrier-data"
        self.proc = None
        self.log_path = None
        self.starts = 0
        self.expected_exit = True  # False while running: a death we did not cause is a crash

    @property
    def journal_dir(self):
        return self.data_dir / "journal"

    def command(self, extra_args=()):
        args = [str(carrier_bin()), "serve"]
        if self.bare:
            return args + self.extra_args + list(extra_args)
        if self.stomp_flag:
            args += ["--stomp", f"127.0.0.1:{self.port}"]
        if self.mqtt_flag:
            args += ["--mqtt", f"127.0.0.1:{self.mqtt_port}"]
        if self.http_flag:
            args += ["--http", f"127.0.0.1:{self.http_port}"]
        args += ["--data-dir", str(self.data_dir), "--store", self.store,
                 "--shards", str(self.shards), "--log-level", self.log_level]
        if self.config_path:
            args += ["--config", str(self.config_path)]
        return args + self.extra_args + list(extra_args)

    def spawn(self, extra_args=()):
        """Starts the process without waiting for it to accept connections."""
        assert self.proc is None or self.proc.poll() is not None, "broker already running"
        self.starts += 1
        self.log_path = self.workdir / f"carrier-{self.starts}.log"
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.command(extra_args), stdout=log, stderr=log,
                                     stdin=subprocess.DEVNULL, cwd=self.workdir,
                                     preexec_fn=self.preexec_fn)
        log.close()
        self.expected_exit = False
        return self.proc

    def start(self, extra_args=(), timeout=START_TIMEOUT):
        """Starts the broker and waits until it is ready (every listener open).

        free_port() can only say a port was free a moment ago: on a first start whose port was
        taken in between (EADDRINUSE), ports picked here are picked again, up to three times."""
        for attempt in range(3):
            self.spawn(extra_args)
            try:
                self.wait_ready(timeout)
                return self
            except AssertionError:
                if (attempt == 2 or self.starts != attempt + 1 or self.proc.poll() is None
                        or "Address already in use" not in self.log()
                        or not (self.auto_port or self.auto_mqtt_port or self.auto_http_port)):
                    raise
                if self.auto_port:
                    self.port = free_port()
                if self.auto_mqtt_port:
                    self.mqtt_port = free_port()
                if self.auto_http_port:
                    self.http_port = free_port()
        return self

    def wait_ready(self, timeout=START_TIMEOUT):
        """Waits for this start's "carrier ready" line, written once every listener is open.

        A TCP probe of one port is not enough: the broker opens its listeners one after the
        other, and a probe is itself a connection that has not finished its handshake (it
        would count against max_connecting until the broker sees it close). Only when the
        log level hides info lines are all the ports probed instead."""
        quiet = self.log_level in ("warn", "warning", "err", "error", "critical", "off")

        def ready():
            if self.proc.poll() is not None:
                self.expected_exit = True
                raise AssertionError(f"carrier exited with {self.proc.returncode} while starting:\n"
                                     f"{self.log()}")
            if not quiet:
                return "carrier ready:" in self.log_path.read_text(errors="replace")
            ports = [self.port] if self.stomp_flag or self.bare else []
            if self.mqtt_flag and not self.bare:
                ports.append(self.mqtt_port)
            if self.http_flag and not self.bare:
                ports.append(self.http_port)
            return all(port_accepts(port) for port in ports)
        wait_for(ready, timeout, lambda: f"carrier to be ready (ports {self.port}, {self.mqtt_port}):\n"
                                         f"{self.log()}", interval=0.02)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=STOP_TIMEOUT):
        """Signals the broker and waits for it; returns its exit code (-N for signal N)."""
        if self.proc is None:
            return None
        self.expected_exit = True
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"carrier did not exit within {timeout}s of signal {sig}:\n"
                                     f"{self.log()}") from None
        return self.proc.returncode

    def kill(self):
        """SIGKILL: no shutdown code runs, like a power cut for the journal's purposes."""
        return self.stop(signal.SIGKILL)

    def restart(self, extra_args=(), sig=signal.SIGTERM):
        self.stop(sig)
        return self.start(extra_args)

    def wait_exit(self, timeout=STOP_TIMEOUT):
        """Waits for a broker that should exit by itself (bad config, corrupt journal)."""
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"carrier still running after {timeout}s:\n{self.log()}") from None
        self.expected_exit = True
        return code

    def log(self, tail_lines=200):
        """The current process's stdout+stderr (its last lines)."""
        if not self.log_path or not self.log_path.exists():
            return "(no log)"
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-tail_lines:])

    def all_logs(self):
        parts = []
        for i in range(1, self.starts + 1):
            path = self.workdir / f"carrier-{i}.log"
            if path.exists():
                parts.append(f"--- {path} ---\n" + "\n".join(
                    path.read_text(errors="replace").splitlines()[-200:]))
        return "\n".join(parts)

    def crashed(self):
        """True if the process died although no test asked it to."""
        return (self.proc is not None and not self.expected_exit
                and self.proc.poll() is not None)

    @property
    def checkpoint(self):
        """The journal's live-set checkpoint (docs/storage.md, "Live-set checkpoint"): with it a
        start replays only what was written after it, and reads no closed segment or index."""
        return self.journal_dir / "live.ckpt"

    def segments(self):
        """The journal's segment files (DATA/journal/*.log) in log order."""
        def key(path):
            digits = "".join(ch for ch in path.stem if ch.isdigit())
            return (int(digits) if digits else -1, path.name)
        if not self.journal_dir.exists():
            return []
        return sorted(self.journal_dir.glob("*.log"), key=key)


def wait_port_closed(port, timeout=5.0):
    wait_for(lambda: not port_accepts(port), timeout, f"port {port} to stop accepting")


def now_ms():
    return int(time.time() * 1000)
