"""The console's files and hostile input (docs/console.md): embedded assets with their content
types, ETag/304, no-cache and a CSP that allows only the console itself, served without
credentials while the API refuses; 404/405 for other paths and methods; and queue names, headers
and bodies made of HTML and script shown as text in chromium, never run."""

import http.client

import pytest

from helpers.console_browser import ConsoleBrowser
from helpers.http import request, send
from helpers.users import broker_with_users


def test_assets_types_caching_and_security_headers(broker_factory):
    broker = broker_with_users(broker_factory, {"admin": "pw"}, '[admin]\nusers = ["admin"]\n')
    port = broker.http_port
    # The API wants credentials; the page that asks for them does not.
    assert request(port, "GET", "/admin/v1/overview").status == 401
    r = request(port, "GET", "/console")
    assert r.status == 308 and r.headers["location"] == "/console/", r
    r = request(port, "GET", "/console/")
    assert r.status == 200, r
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert b'<script type="module" src="js/app.js">' in r.body
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-cache"
    etag = r.headers["etag"]
    assert etag.startswith('"') and etag.endswith('"')

    # Unchanged: 304 with no body, on the same keep-alive connection.
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        r = request(port, "GET", "/console/index.html", headers={"If-None-Match": etag}, conn=c)
        assert r.status == 304 and r.body == b"" and r.headers["etag"] == etag, r
        assert "content-length" not in r.headers
        r = request(port, "GET", "/console/console.css", conn=c)
        assert r.status == 200 and r.headers["content-type"] == "text/css; charset=utf-8", r
    finally:
        c.close()

    for path, kind in (("/console/vendor/uPlot.iife.min.js", "text/javascript; charset=utf-8"),
                       ("/console/vendor/uPlot.min.css", "text/css; charset=utf-8"),
                       ("/console/js/app.js", "text/javascript; charset=utf-8"),
                       ("/console/favicon.svg", "image/svg+xml")):
        r = request(port, "GET", path)
        assert r.status == 200 and r.headers["content-type"] == kind and len(r.body) > 100, (path, r)
    r = request(port, "HEAD", "/console/js/app.js")
    assert r.status == 200 and r.body == b"" and int(r.headers["content-length"]) > 100, r

    for path in ("/console/nothing.js", "/console/../admin/v1/overview", "/console/%2e%2e/x", "/console/js/",
                 "/console/" + "a" * 5000):
        r = request(port, "GET", path)
        assert r.status == 404 and r.headers["content-type"] == "application/problem+json", (path, r)
    r = request(port, "POST", "/console/", body=b"x")
    assert r.status == 405 and r.headers["allow"] == "GET, HEAD", r
    r = request(port, "DELETE", "/console/index.html")
    assert r.status == 405, r


# No '/' (a level separator for some clients) in the name; the body and header have everything.
HOSTILE_NAME = "x<img src=x onerror=window.pwned=1>\"'&amp;<svg onload=window.pwned=2><script>window.pwned=7"
HOSTILE_BODY = "<img src=x onerror=\"window.pwned=3\"><script>window.pwned=4</script>&lt;b&gt;"


@pytest.mark.timeout(180)
def test_hostile_names_headers_and_bodies_are_text(broker, stomp_client):
    producer = stomp_client(broker)
    producer.send(f"/queue/{HOSTILE_NAME}", HOSTILE_BODY,
                  headers={"x-evil": "<svg onload=window.pwned=5>", "persistent": "true"})
    r = request(broker.http_port, "GET", "/admin/v1/destinations?filter=onerror")
    assert r.status == 200 and [d["name"] for d in r.json()["items"]] == [HOSTILE_NAME], r
    send(broker.http_port, "plain.neighbour", b"calm")

    b = ConsoleBrowser()
    try:
        b.goto(f"http://127.0.0.1:{broker.http_port}/console/#/destinations?filter=onerror")
        b.wait("document.querySelector('#destinations td[data-k=name]')", 30)
        assert b.text("#destinations td[data-k=name]") == HOSTILE_NAME
        b.click("#destinations td[data-k=name] a")
        b.wait("document.getElementById('view').dataset.browsed === '1'", 30)
        assert b.text("#destination-name") == HOSTILE_NAME
        assert b.text("#messages td.body pre") == HOSTILE_BODY
        assert "x-evil: <svg onload=window.pwned=5>" in b.text("#messages td.headers")
        # The name in the chart's title and in a confirmation stays text as well.
        b.type("#purge-selector", "x = '<img src=y onerror=window.pwned=6>'")
        b.click("#purge")
        b.wait("!document.getElementById('confirm').hidden")
        assert HOSTILE_NAME in b.text("#confirm")
        b.click("#confirm-no")
        # Nothing ran and nothing was injected: no element from the strings exists.
        assert b.eval("window.pwned === undefined")
        assert b.eval("document.querySelectorAll('main img, main script, main svg').length") == 0
        # A hash naming no queue, or a broken escape, is a message, not a failure.
        b.eval("location.hash = '#/queue/%E0%A4%A'")
        b.wait("document.getElementById('missing') && !document.getElementById('missing').hidden", 30)
        events = b.events()
        assert events["pageErrors"] == [] and events["dialogs"] == [], events
        # Every request stayed on the broker: the failed <img> in a body was never loaded.
        assert all(u.startswith(f"http://127.0.0.1:{broker.http_port}/") for u in events["requests"])
        assert not any(u.endswith("/x") or u.endswith("/y") for u in events["requests"]), events["requests"]
    finally:
        b.close()
