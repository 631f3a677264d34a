"""/metrics in the Prometheus text format (docs/metrics.md), read by Prometheus itself: promtool
checks the exposition, and a real Prometheus server scrapes a running broker and answers a
query about one of its metrics through its HTTP API."""

import json
import shutil
import subprocess
import urllib.parse
import urllib.request
import uuid

import pytest

from helpers.broker import free_port
from helpers.http import request, send
from helpers.wait import wait_for

pytestmark = pytest.mark.skipif(shutil.which("prometheus") is None or shutil.which("promtool") is None,
                                reason="Debian's prometheus package is not installed (scripts/bootstrap)")

CONFIG = '[metrics]\ndestinations = ["m.>"]\nmax_destination_series = 50\n'


def metrics_text(port):
    r = request(port, "GET", "/metrics")
    assert r.status == 200, r
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4"), r.headers
    return r.body.decode()


def sample(text, series):
    """The value of one series line, e.g. 'carrier_queue_depth{queue="m.a"}'; None if absent."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


def test_promtool_accepts_the_exposition(broker_factory):
    b = broker_factory(config=CONFIG)
    q = f"m.{uuid.uuid4().hex[:8]}"
    send(b.http_port, q, b"x")
    text = metrics_text(b.http_port)
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                            timeout=30)
    # promtool exits 0 for a valid page (lint hints would be printed, and fail it too).
    assert result.returncode == 0, result.stdout + result.stderr
    assert sample(text, f'carrier_queue_depth{{queue="{q}"}}') == 1
    assert sample(text, "carrier_messages_published_total") >= 1
    assert sample(text, 'carrier_connections{protocol="http"}') >= 0


def test_counters_follow_traffic_and_series_are_bounded(broker_factory):
    b = broker_factory(config='[metrics]\ndestinations = ["m.>"]\nmax_destination_series = 2\n')
    for name in ("m.a", "m.b", "m.c", "other"):
        send(b.http_port, name, b"x")
    text = metrics_text(b.http_port)
    assert sample(text, "carrier_messages_published_total") == 4
    assert sample(text, 'carrier_queue_depth{queue="m.a"}') == 1
    assert sample(text, 'carrier_queue_depth{queue="m.b"}') == 1
    assert sample(text, 'carrier_queue_depth{queue="m.c"}') is None, "past max_destination_series"
    assert sample(text, 'carrier_queue_depth{queue="other"}') is None, "not in metrics.destinations"
    assert sample(text, "carrier_destination_series_dropped") == 1
    r = request(b.http_port, "GET", "/v1/queues/m.a/messages?max=1&wait=5s")
    assert r.status == 200, r
    text = metrics_text(b.http_port)
    assert sample(text, "carrier_messages_delivered_total") == 1
    assert sample(text, "carrier_publish_to_deliver_seconds_count") == 1


def prometheus_query(port, promql):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def prometheus_targets(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/targets", timeout=5) as r:
            return json.loads(r.read())["data"]["activeTargets"]
    except OSError:
        return []


@pytest.mark.timeout(90)
def test_prometheus_scrapes_a_running_broker(broker_factory, tmp_path):
    b = broker_factory(config=CONFIG)
    send(b.http_port, "m.scraped", b"one")
    send(b.http_port, "m.scraped", b"two")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n"
        "  - job_name: carrier\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{b.http_port}']\n")
    log = open(tmp_path / "prometheus.log", "w")
    proc = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        def target_up():
            targets = prometheus_targets(port)
            return any(t["health"] == "up" for t in targets) and targets

        wait_for(target_up, timeout=60, interval=0.2,
                 message=lambda: f"prometheus target up: {prometheus_targets(port)} "
                                 f"{(tmp_path / 'prometheus.log').read_text()[-2000:]}")

        def queried():
            result = prometheus_query(port, 'carrier_queue_depth{queue="m.scraped"}')["data"]["result"]
            return result and result[0]["value"][1] == "2"

        wait_for(queried, timeout=30, interval=0.2, message="carrier_queue_depth through Prometheus's API")
        published = prometheus_query(port, "carrier_messages_published_total")["data"]["result"]
        assert float(published[0]["value"][1]) >= 2
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
