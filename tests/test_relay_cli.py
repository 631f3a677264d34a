"""`carrier relay` (docs/cli.md, docs/relay.md): the C++ thin client (client::RelayClient) end
to end against a running broker, reproducing seed 000's demos, and a relay peer exchanging
messages with STOMP and MQTT clients both ways."""

import subprocess
import threading
import uuid

from helpers.broker import carrier_bin, run_cli
from helpers.mqtt_clients import mqtt_client  # noqa: F401
from helpers.wait import wait_for


def name():
    return f"c{uuid.uuid4().hex[:10]}"


def relay(broker, *args, timeout=30.0):
    r = run_cli("relay", *args, "--server", f"127.0.0.1:{broker.http_port}", timeout=timeout)
    return r


def ok(r):
    assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    return r.stdout


def peer_of(r):
    [line] = [ln for ln in r.stderr.splitlines() if ln.startswith("peer: ")]
    return line.split(": ", 1)[1]


class Listener:
    """`carrier relay listen` in the background: its stdout lines, and when it said it listens."""

    def __init__(self, broker, *args):
        self.proc = subprocess.Popen(
            [str(carrier_bin()), "relay", "listen", *args, "--server", f"127.0.0.1:{broker.http_port}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines, self.errors = [], []
        self._threads = [threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, self.errors), daemon=True)]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(stream, into):
        for line in stream:
            into.append(line.rstrip("\n"))

    def wait_listening(self, timeout=15.0):
        wait_for(lambda: any(ln.startswith("listening on") for ln in self.errors) or self.proc.poll() is not None,
                 timeout, "the listener to listen")
        assert self.proc.poll() in (None, 0), f"listener failed: {self.errors}"
        return next(ln for ln in self.errors if ln.startswith("peer: ")).split(": ", 1)[1]

    def finish(self, timeout=20.0):
        code = self.proc.wait(timeout)
        for t in self._threads:
            t.join(5)
        assert code == 0, f"listener exit {code}: {self.errors}"
        return self.lines

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def test_pid_create_listen_search_send_poll(broker):
    pid = ok(relay(broker, "pid")).strip()
    assert pid.startswith("uuid-59616261646162614A78746150325033") and pid.endswith("03"), pid
    pipe = name()
    created = ok(relay(broker, "create", "pipe", pipe)).split()
    assert created[:2] == ["PIPE", pipe] and created[3] == "JxtaUnicast", created
    pipe_id = created[2]
    listener = Listener(broker, pipe_id, "--count", "2", "--elements")
    try:
        listener.wait_listening()
        found = ok(relay(broker, "search", "pipe", pipe[:4] + "*")).splitlines()
        assert f"PIPE {pipe} {pipe_id} JxtaUnicast" in found, found
        by_id = ok(relay(broker, "search", "pipe", pipe_id, "--attr", "id")).splitlines()
        assert by_id == [f"PIPE {pipe} {pipe_id} JxtaUnicast"]
        ok(relay(broker, "send", pipe_id, "--body", "Hello", "--element", "sender=tester",
                 "--element", "records:fileReference=3"))
        ok(relay(broker, "send", pipe_id, "--body", "again"))
        lines = listener.finish()
    finally:
        listener.kill()
    # --elements: each message's application elements, then a blank line.
    assert lines == ["sender=tester", "records:fileReference=3", "message=Hello", "", "message=again", ""], lines


def test_the_seeds_pipe_and_group_demos(broker):
    out = ok(relay(broker, "demo", name(), "--body", "Hello from the demo")).splitlines()
    steps = [ln.split()[0] for ln in out]
    assert steps == ["pipe", "found", "listen", "sent", "polled"], out
    assert "Hello from the demo from carrier relay demo" in out[-1]
    out = ok(relay(broker, "demo", name(), "--group", "--propagate")).splitlines()
    assert [ln.split()[0] for ln in out] == ["group", "found", "joined", "pipe", "found", "listen", "sent", "polled"]
    assert "JxtaPropagate" in out[3]


def test_a_group_scopes_the_pipes_created_after_joining(broker):
    group = name()
    _, gname, gid = ok(relay(broker, "create", "group", group)).split()
    assert gname == group
    assert ok(relay(broker, "search", "group", group)).split()[2] == gid
    joined = relay(broker, "join", gid)
    assert ok(joined).strip() == f"joined {gid}"
    peer = peer_of(joined)
    pipe_line = ok(relay(broker, "create", "pipe", "inbox", "--peer", peer)).split()
    # The pipe is the queue <group>.inbox: its id carries that name.
    assert pipe_line[1] == "inbox" and bytes.fromhex(pipe_line[2][14:-2]) == f"Q{group}.inbox".encode(), pipe_line
    bad = relay(broker, "join", "urn:jxta:uuid-00")
    assert bad.returncode == 1 and "not a group id" in bad.stderr, bad.stderr


def test_a_peer_listens_in_one_run_and_polls_in_the_next(broker, stomp_client):
    queue = name()
    pipe_id = ok(relay(broker, "create", "pipe", queue)).split()[2]
    listener = Listener(broker, pipe_id, "--count", "1")
    try:
        peer = listener.wait_listening()
        stomp = stomp_client(broker)
        stomp.send(f"/queue/{queue}", "first")
        assert listener.finish() == ["first"]
    finally:
        listener.kill()
    # The peer's listen goes on at the relay: a later run with --peer collects what came since.
    stomp.send(f"/queue/{queue}", "second")
    polled = relay(broker, "poll", "--peer", peer, "--count", "1")
    assert ok(polled).splitlines() == ["second"]


def test_relay_and_stomp_and_mqtt_both_ways(broker, stomp_client, mqtt_client):
    topic = name()
    pipe_id = ok(relay(broker, "create", "pipe", topic, "--propagate")).split()[2]
    stomp = stomp_client(broker)
    stomp.subscribe(f"/topic/{topic}")
    mqtt = mqtt_client(broker, version="5")
    mqtt.subscribe(topic, qos=1)
    listener = Listener(broker, pipe_id, "--count", "3")
    try:
        listener.wait_listening()
        # relay -> STOMP and MQTT (and the listening relay peer itself)
        ok(relay(broker, "send", pipe_id, "--body", "from relay", "--element", "sender=cli"))
        [frame] = stomp.wait_messages(1)
        assert frame.body == "from relay" and frame.headers["sender"] == "cli"
        [m] = mqtt.wait_messages(1)
        assert m.payload == b"from relay"
        assert dict(m.properties.UserProperty)["sender"] == "cli"
        # STOMP and MQTT -> relay
        stomp.send(f"/topic/{topic}", "from stomp")
        mqtt.publish(topic, b"from mqtt", qos=1)
        lines = listener.finish()
    finally:
        listener.kill()
    assert lines[0] == "from relay" and sorted(lines[1:]) == ["from mqtt", "from stomp"], lines
    # A unicast pipe is a queue: a STOMP send waits in it for the relay listener.
    queue = name()
    qid = ok(relay(broker, "create", "pipe", queue)).split()[2]
    stomp.send(f"/queue/{queue}", "from stomp to a queue")
    listener = Listener(broker, qid, "--count", "1")
    try:
        listener.wait_listening()
        assert listener.finish() == ["from stomp to a queue"]
    finally:
        listener.kill()


def test_bad_usage_and_refusals_are_clear(broker):
    r = relay(broker, "send", "urn:jxta:uuid-00", "--body", "x")
    assert r.returncode == 1 and "not a pipe id" in r.stderr, r.stderr
    r = relay(broker, "send", "urn:jxta:uuid-00", "--element", "proxy:request=evil")
    assert r.returncode == 1 and "--element" in r.stderr
    r = relay(broker, "poll")
    assert r.returncode == 1 and "--peer" in r.stderr
    r = relay(broker, "poll", "--peer", "uuid-0123456789abcdef03", "--count", "1", "--timeout", "3")
    assert r.returncode == 1, r.stderr  # never connected: connect makes it, nothing waits
    r = run_cli("relay", "pid", "--server", "127.0.0.1:1")
    assert r.returncode == 1 and "relay at 127.0.0.1:1" in r.stderr, r.stderr
    assert run_cli("relay", "create", "queue", "x").returncode == 2
