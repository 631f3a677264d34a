"""Browser clients unchanged on GET /ws: @stomp/stompjs and mqtt.js from npm (tests/browser/,
`npm ci` once), run in node and in Debian's chromium driven headless by puppeteer-core. A page
served by the test connects with both to the broker, each sends to itself, then STOMP to MQTT and
back; chromium saves a screenshot of the page into the test's tmp dir. And chromium's own
EventSource on a durable subscription, resuming across a broker restart."""

import functools
import http.server
import json
import queue as queue_module
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from helpers import console_browser
from helpers.http import request, send

BROWSER_DIR = Path(__file__).resolve().parent / "browser"
EXPECTED = {"stomp": "stomp.js to itself", "mqtt": "mqtt.js to itself",
            "stompToMqtt": "stomp.js to mqtt.js", "mqttToStomp": "mqtt.js to stomp.js"}


@pytest.fixture(scope="module")
def npm_project():
    """tests/browser/node_modules as package-lock.json says: `npm ci` when the lock changed."""
    return console_browser.npm_project()


@pytest.fixture
def page_server(npm_project):
    """tests/browser/ over HTTP on a free port (the page and the npm bundles it loads)."""
    handler = functools.partial(QuietHandler, directory=str(npm_project))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def run_node(script, *args, timeout=90):
    p = subprocess.run(["node", script, *map(str, args)], cwd=BROWSER_DIR, capture_output=True, text=True,
                       timeout=timeout)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result from {script}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.returncode, json.loads(lines[-1]), p.stderr


@pytest.mark.timeout(120)
def test_stompjs_and_mqttjs_in_node(broker, npm_project):
    code, result, err = run_node("node.mjs", f"ws://127.0.0.1:{broker.http_port}/ws", uuid.uuid4().hex[:8])
    assert code == 0 and result["ok"], (result, err)
    assert result["got"] == EXPECTED


@pytest.mark.timeout(150)
def test_stompjs_and_mqttjs_in_chromium(broker, page_server, tmp_path):
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("chromium cannot run: /usr/bin/chromium is not installed (scripts/bootstrap installs it)")
    screenshot = tmp_path / "browser.png"
    url = (f"http://127.0.0.1:{page_server}/page.html?url=ws://127.0.0.1:{broker.http_port}/ws"
           f"&tag={uuid.uuid4().hex[:8]}")
    code, result, err = run_node("browser.mjs", url, screenshot, timeout=120)
    if code == 3:
        pytest.skip(f"chromium cannot run here: {result.get('error')}")
    assert code == 0 and result["ok"], (result, err)
    assert result["got"] == EXPECTED
    assert "Chrome" in result["userAgent"], result
    assert result["pageErrors"] == [], result
    assert screenshot.stat().st_size > 1000


@pytest.mark.timeout(150)
def test_an_eventsource_in_chromium_resumes_across_a_broker_restart(broker, npm_project):
    """EventSource reconnects by itself with Last-Event-ID (docs/http.md, "Resuming an event
    stream"): across a restart of the broker it gets every message after the last one it had,
    in order, none twice."""
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("chromium cannot run: /usr/bin/chromium is not installed (scripts/bootstrap installs it)")
    name, topic = f"es{uuid.uuid4().hex[:8]}", f"es.{uuid.uuid4().hex[:8]}"
    r = request(broker.http_port, "PUT", f"/v1/subscriptions/{name}", body=json.dumps({"topic": topic}).encode(),
                headers={"Content-Type": "application/json"})
    assert r.status == 201, r
    node = subprocess.Popen(["node", "eventsource.mjs", f"http://127.0.0.1:{broker.http_port}",
                             f"/v1/subscriptions/{name}/events"], cwd=BROWSER_DIR, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines = queue_module.Queue()
    threading.Thread(target=lambda: [lines.put(json.loads(x)) for x in node.stdout if x.startswith("{")],
                     daemon=True).start()
    got, opens = [], 0

    def read_until(done, timeout):
        nonlocal opens
        deadline = time.monotonic() + timeout
        while not done():
            try:
                item = lines.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue_module.Empty:
                raise AssertionError(f"timed out: events {got}, opens {opens}, node {node.poll()}")
            if item.get("launch"):
                pytest.skip(f"chromium cannot run here: {item.get('error')}")
            if "open" in item:
                opens = item["open"]
            else:
                got.append((item["id"], item["data"]))

    try:
        read_until(lambda: opens >= 1, 60)
        ids = [send(broker.http_port, topic, f"before-{i}".encode(), kind="topics", query="?persistent=true")[0]
               for i in range(3)]
        read_until(lambda: len(got) >= 3, 30)
        broker.restart()
        ids += [send(broker.http_port, topic, f"after-{i}".encode(), kind="topics", query="?persistent=true")[0]
                for i in range(3)]
        read_until(lambda: len(got) >= 6, 60)
        assert opens >= 2, "the EventSource did not reconnect"
        assert [i for i, _ in got] == ids, got
        assert [d for _, d in got] == [f"before-{i}" for i in range(3)] + [f"after-{i}" for i in range(3)]
    finally:
        node.stdin.close()
        try:
            node.wait(timeout=20)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
        node.stdout.close()
