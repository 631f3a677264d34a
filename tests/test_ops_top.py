"""`carrier top` and `carrier admin ... --watch` in a real terminal: tmux runs them in a detached
session (its own server socket), the test reads the screen with `capture-pane` while STOMP
traffic runs, checks the numbers against the admin API, and quits with `q` (top) or Ctrl-C
(--watch). docs/cli.md describes both."""

import os
import re
import shutil
import subprocess
import threading
import uuid

import pytest

from helpers.broker import carrier_bin
from helpers.http import request
from helpers.wait import wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


class Tmux:
    """One detached tmux session on a server of its own (-L), killed at the end."""

    def __init__(self, command):
        self.socket = f"carrier-test-{uuid.uuid4().hex[:8]}"
        # tmux 3.3 may mark a pane dead before it has collected the exit status, and then never
        # report it: a shell writes the status to a file instead. `trap : INT` keeps that shell
        # alive through a Ctrl-C while the command itself gets the signal (a trapped signal is
        # reset to its default in the commands the shell starts).
        self.status_file = f"/tmp/{self.socket}.status"
        self.tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "50",
                  f"sh -c 'trap : INT; {command}; echo $? > {self.status_file}.tmp; "
                  f"mv {self.status_file}.tmp {self.status_file}'")
        # The pane stays once its command ends, so the test can read its last screen.
        self.tmux("set-option", "-t", "t", "remain-on-exit", "on")

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10)

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t").stdout

    def keys(self, *keys):
        self.tmux("send-keys", "-t", "t", *keys)

    def dead(self):
        """Once the command has ended: its exit status (128 + N if signal N ended it); else None."""
        try:
            with open(self.status_file) as f:
                return int(f.read().strip())
        except FileNotFoundError:
            return None

    def close(self):
        self.tmux("kill-server")
        for path in (self.status_file, self.status_file + ".tmp"):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass


class Traffic:
    """A STOMP producer sending to `queue` until stopped."""

    def __init__(self, stomp_client, broker, queue):
        self.client = stomp_client(broker)
        self.queue = queue
        self.stopping = threading.Event()
        self.sent = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping.is_set():
            self.client.send_many(f"/queue/{self.queue}", ["tick"] * 20)
            self.sent += 20

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=30)


def api_depth(broker, queue):
    items = request(broker.http_port, "GET", f"/admin/v1/destinations?filter={queue}").json()["items"]
    return items[0]["depth"] if items else 0


def depth_on_screen(screen, queue):
    for line in screen.splitlines():
        fields = line.split()
        if fields and fields[0] == queue:
            return int(fields[1])
    return None


def test_top_shows_live_numbers_and_q_quits(broker, stomp_client):
    queue = f"top{uuid.uuid4().hex[:8]}"
    traffic = Traffic(stomp_client, broker, queue)
    t = Tmux(f"{carrier_bin()} top --server 127.0.0.1:{broker.http_port} --interval 0.3")
    try:
        # While traffic runs: a positive message rate in, and our queue among the deepest.
        def live():
            s = t.screen()
            m = re.search(r"Messages: ([\d.]+)/s in", s)
            return s if m and float(m.group(1)) > 0 and depth_on_screen(s, queue) else None
        screen = wait_for(live, timeout=20, message=lambda: f"a live screen:\n{t.screen()}")
        assert "carrier top - 127.0.0.1:" in screen and "ready" in screen
        assert re.search(r"Connections: \d+ \(.*stomp \d+", screen), screen
        assert "Busiest connections" in screen and "IN/S" in screen
        traffic.stop()
        # Traffic stopped: the screen settles on the broker's own number.
        expected = traffic.sent
        wait_for(lambda: api_depth(broker, queue) == expected, message="the API's depth")
        wait_for(lambda: depth_on_screen(t.screen(), queue) == expected, timeout=10,
                 message=lambda: f"depth {expected} on screen:\n{t.screen()}")
        assert t.dead() is None
        t.keys("q")
        assert wait_for(lambda: t.dead() is not None and (t.dead(),), timeout=10,
                        message="top exits on q") == (0,)
        assert "carrier top" not in t.screen(), "the alternate screen is left on exit"
    finally:
        traffic.stop()
        t.close()


def test_top_says_when_the_broker_cannot_be_reached():
    t = Tmux(f"{carrier_bin()} top --server 127.0.0.1:1 --interval 0.2")
    try:
        wait_for(lambda: "Trying again every 0.2s" in t.screen(), timeout=10,
                 message=lambda: f"the error on screen:\n{t.screen()}")
        t.keys("q")
        wait_for(lambda: t.dead() == 0, timeout=10, message="top exits on q")
    finally:
        t.close()


def test_admin_watch_refreshes_until_interrupted(broker, stomp_client):
    queue = f"watch{uuid.uuid4().hex[:8]}"
    producer = stomp_client(broker)
    producer.send_many(f"/queue/{queue}", ["a"] * 3)
    t = Tmux(f"{carrier_bin()} admin --server 127.0.0.1:{broker.http_port} queues --filter {queue} --watch 0.3")
    try:
        wait_for(lambda: depth_on_screen(t.screen(), queue) == 3, timeout=10,
                 message=lambda: f"depth 3:\n{t.screen()}")
        assert "Every 0.3s: carrier admin queues" in t.screen()
        producer.send_many(f"/queue/{queue}", ["b"] * 4)
        wait_for(lambda: depth_on_screen(t.screen(), queue) == 7, timeout=10,
                 message=lambda: f"the refreshed depth 7:\n{t.screen()}")
        t.keys("C-c")
        wait_for(lambda: t.dead() is not None, timeout=10, message="--watch ends on Ctrl-C")
        assert t.dead() != 0  # interrupted, as `watch` is
    finally:
        t.close()
