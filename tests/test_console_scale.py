"""The console's destination page on a broker with 100,000 queues (docs/console.md): it shows
one page of rows that the broker filtered, sorted and cut, searches and sorts through the
admin API, and pages on. Asserted on what the page asks for and shows, not on time."""

import urllib.parse

import pytest

from helpers.console_browser import ConsoleBrowser, save_screenshot
from helpers.http import request
from helpers.raw_stomp import RawStomp, encode_frame

QUEUES = 100_000


def make_queues(broker):
    """bulk.00000 ... bulk.99999 with one message each (bulk.07777 with six), pipelined over
    one STOMP connection; the receipt of a last SEND says every one before it is in."""
    with RawStomp(broker.port, timeout=30) as s:
        s.send_frame("CONNECT", [("accept-version", "1.2"), ("host", "/")])
        assert s.read_frame(timeout=10).command == "CONNECTED"
        chunk = []
        for i in range(QUEUES):
            chunk.append(encode_frame("SEND", [("destination", f"/queue/bulk.{i:05d}")], b"x"))
            if len(chunk) == 5000:
                s.send(b"".join(chunk))
                chunk = []
        s.send(b"".join(chunk))
        for _ in range(4):  # with the one above and the last: six
            s.send_frame("SEND", [("destination", "/queue/bulk.07777")], b"more")
        s.send_frame("SEND", [("destination", "/queue/bulk.07777"), ("receipt", "done")], b"more")
        frame = s.read_frame(timeout=180)
        assert frame.command == "RECEIPT", frame


@pytest.mark.timeout(420)
def test_destinations_page_with_100k_queues(broker_factory, tmp_path):
    broker = broker_factory()
    make_queues(broker)
    r = request(broker.http_port, "GET", "/admin/v1/destinations?kind=queue&filter=bulk.&limit=1", timeout=60)
    assert r.status == 200 and r.json()["total"] == QUEUES, r

    b = ConsoleBrowser()
    try:
        b.goto(f"http://127.0.0.1:{broker.http_port}/console/#/destinations")
        b.wait("document.querySelector('[data-k=range]') && "
               f"Number(document.querySelector('[data-k=range]').dataset.total) >= {QUEUES}", 60)
        assert b.eval("document.querySelectorAll('#destinations tbody tr').length") == 50
        assert b.text("#destinations tbody tr td[data-k=name]") == "bulk.00000"

        # Paging asks the broker for the next 50 rows.
        b.click(".pager .next")
        b.wait("document.getElementById('view').dataset.loaded === '||name|asc|50'", 60)
        assert b.text("#destinations tbody tr td[data-k=name]") == "bulk.00050"

        # A search: the broker filters the 100k names, the page shows what matched.
        b.type("#destination-search", "bulk.0424")
        b.wait("document.getElementById('view').dataset.loaded === 'bulk.0424||name|asc|0'", 60)
        names = b.eval("[...document.querySelectorAll('#destinations td[data-k=name]')].map(td => td.textContent)")
        assert names == [f"bulk.0424{i}" for i in range(10)]
        assert b.text("[data-k=range]") == "1–10 of 10"

        # Sorting by depth over every queue: the one with six messages comes first.
        b.type("#destination-search", "bulk.")
        b.wait("document.getElementById('view').dataset.loaded === 'bulk.||name|asc|0'", 60)
        b.click("#destinations th[data-sort=depth]")
        b.wait("document.getElementById('view').dataset.loaded === 'bulk.||depth|desc|0'", 60)
        assert b.text("#destinations tbody tr td[data-k=name]") == "bulk.07777"
        assert b.text("#destinations tbody tr td[data-k=depth]") == "6"
        assert b.text("[data-k=range]") == "1–50 of 100,000"
        save_screenshot(b, tmp_path, "destinations")

        # Every list call asked for one page, never the whole table.
        calls = [urllib.parse.urlparse(u) for u in b.events()["requests"] if "/admin/v1/destinations" in u]
        assert calls and all(urllib.parse.parse_qs(c.query).get("limit") == ["50"] for c in calls), calls
        assert b.events()["pageErrors"] == []
    finally:
        b.close()
