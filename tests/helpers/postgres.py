"""A throwaway PostgreSQL server for the storage tests, driven by scripts/postgres-test-server
(Debian's postgresql package: initdb + pg_ctl in a temp dir on a free loopback port).

Tests that need it skip only when the server binaries are not installed; CI has them.
"""

import subprocess
import uuid

from helpers.broker import REPO

SCRIPT = REPO / "scripts" / "postgres-test-server"


def available():
    """True when the PostgreSQL server binaries are installed."""
    return subprocess.run([str(SCRIPT), "available"], capture_output=True).returncode == 0


def _run(*args, timeout=60):
    done = subprocess.run([str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"postgres-test-server {' '.join(map(str, args))} failed "
                             f"({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


class PostgresServer:
    """One cluster: `url`, `stop()` (data kept), `start()` again on the same port, `destroy()`."""

    def __init__(self):
        lines = _run("start").split()
        self.url, self.dir = lines[0], lines[1]

    def stop(self):
        _run("stop", self.dir)

    def start(self):
        _run("start", self.dir)

    def destroy(self):
        _run("destroy", self.dir)

    def log(self, tail_lines=50):
        try:
            with open(f"{self.dir}/server.log", errors="replace") as f:
                return "".join(f.readlines()[-tail_lines:])
        except OSError:
            return "(no server log)"


def unique_schema():
    """A schema name no other test uses: each broker gets empty tables on the shared server."""
    return "t_" + uuid.uuid4().hex[:16]


def broker_config(schema, extra=""):
    """carrier.toml text putting the broker's tables in `schema`."""
    return f'[postgres]\nschema = "{schema}"\n{extra}'
