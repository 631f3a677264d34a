"""Browser clients unchanged on GET /ws: @stomp/stompjs and mqtt.js from npm (tests/browser/,
`npm ci` once), run in node and in Debian's chromium driven headless by puppeteer-core. A page
served by the test connects with both to the broker, each sends to itself, then STOMP to MQTT and
back; chromium saves a screenshot of the page into the test's tmp dir."""

import functools
import http.server
import json
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from helpers import console_browser

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
