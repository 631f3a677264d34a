"""Users-file lines for brokers with [auth] users (docs/auth.md), made by `carrier passwd`."""

import subprocess

from helpers.broker import carrier_bin


def passwd_line(user, password):
    """The `NAME:HASH` line `carrier passwd NAME` prints for `password`."""
    result = subprocess.run([str(carrier_bin()), "passwd", user], input=password + "\n",
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def broker_with_users(broker_factory, users, config=""):
    """A started broker whose users file holds `users` ({name: password}), plus `config`."""
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\nfailure_delay_ms = 0\n' + config)
    (b.workdir / "users.txt").write_text("".join(passwd_line(u, p) + "\n" for u, p in users.items()))
    b.start()
    return b
