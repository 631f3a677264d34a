"""The web console (docs/console.md) in Debian's chromium, headless, against a broker with users
and traffic (a STOMP producer, an MQTT publisher and subscriber): login (refused, wrong
password, no admin right, then an admin), each page with the figures it shows compared with the
admin API's, a purge, a dead-letter replay and a connection closed. Screenshots of each page go
to the test's tmp dir, and to $CARRIER_CONSOLE_SCREENSHOTS (docs/console/) when that is set."""

import threading
import urllib.parse

import pytest

from helpers.http import basic, request
from helpers.mqtt_clients import mqtt_client  # noqa: F401 (a fixture)
from helpers.console_browser import ConsoleBrowser, save_screenshot
from helpers.users import broker_with_users
from helpers.wait import wait_for

USERS = {"admin": "s3cret", "bob": "bobpw", "app": "apppw"}
ADMIN = basic("admin", "s3cret")


def api(broker, path):
    r = request(broker.http_port, "GET", f"/admin/v1/{path}", headers=ADMIN)
    assert r.status == 200, r
    return r.json()


def destination(broker, name, kind="queue"):
    page = api(broker, f"destinations?kind={kind}&filter={name}&limit=1000")
    return next((d for d in page["items"] if d["name"] == name), None)


@pytest.fixture
def admin_broker(broker_factory):
    return broker_with_users(broker_factory, USERS, '[admin]\nusers = ["admin"]\n')


@pytest.fixture
def browser():
    b = ConsoleBrowser()
    yield b
    b.close()


@pytest.fixture
def shots(tmp_path):
    return lambda b, name, full_page=False: save_screenshot(b, tmp_path, name, full_page)


class Traffic:
    """Producers running until stop(): STOMP to a queue, MQTT to a topic an MQTT client reads."""

    def __init__(self, broker, stomp_client, mqtt_client, queue):
        self.stop_event = threading.Event()
        self.stomp = stomp_client(broker, connect_headers={"login": "app", "passcode": "apppw"})
        self.publisher = mqtt_client(broker, client_id="console-publisher", username="app", password="apppw")
        self.subscriber = mqtt_client(broker, client_id="console-subscriber", username="app", password="apppw")
        self.subscriber.subscribe("console/sensors/#", qos=1)
        self.sent = 0
        self.threads = [threading.Thread(target=self._stomp, args=(queue,), daemon=True),
                        threading.Thread(target=self._mqtt, daemon=True)]
        for t in self.threads:
            t.start()

    def _stomp(self, queue):
        while not self.stop_event.wait(0.02):
            self.stomp.send(f"/queue/{queue}", f"order {self.sent}", headers={"persistent": "true"})
            self.sent += 1

    def _mqtt(self):
        n = 0
        while not self.stop_event.wait(0.02):
            self.publisher.publish(f"console/sensors/{n % 4}", f"{n}", qos=1)
            n += 1

    def stop(self):
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=10)


def dead_letters(broker, stomp_client, queue, bodies):
    """`bodies` sent to `queue` and NACKed with requeue:false: they land in DLQ.<queue>."""
    producer = stomp_client(broker, connect_headers={"login": "app", "passcode": "apppw"})
    producer.send_many(f"/queue/{queue}", bodies)
    consumer = stomp_client(broker, connect_headers={"login": "app", "passcode": "apppw"})
    consumer.subscribe(f"/queue/{queue}", ack="client-individual")
    for m in consumer.wait_messages(len(bodies)):
        consumer.conn.nack(m.headers["ack"], requeue="false")
    wait_for(lambda: (destination(broker, f"DLQ.{queue}") or {}).get("depth") == len(bodies), 10,
             "the dead letters")
    consumer.disconnect()


@pytest.mark.timeout(300)
def test_console_login_pages_and_operations(admin_broker, browser, stomp_client, mqtt_client, shots):  # noqa: F811
    b = browser
    base = f"http://127.0.0.1:{admin_broker.http_port}/console/"
    traffic = Traffic(admin_broker, stomp_client, mqtt_client, "console.orders")
    try:
        # --- login: nothing shown without it, each refusal says why -------------------------
        assert b.goto(base) == 200
        b.wait("!document.getElementById('login').hidden")
        assert "Log in" in b.text("#login-error")
        assert b.eval("document.getElementById('view').children.length") == 0
        shots(b, "login")
        b.type("#login-user", "admin")
        b.type("#login-password", "wrong")
        b.click("#login-submit")
        b.wait("document.getElementById('login-error').textContent.includes('Login failed')")
        b.type("#login-user", "bob")
        b.type("#login-password", "bobpw")
        b.click("#login-submit")
        b.wait("document.getElementById('login-error').textContent.includes('Access denied')")
        assert "admin right" in b.text("#login-error")
        b.type("#login-user", "admin")
        b.type("#login-password", "s3cret")
        b.click("#login-submit")
        b.wait("document.getElementById('login').hidden && location.hash === '#/overview'")
        assert b.text("#who") == "Signed in as admin"

        # --- overview: live figures and charts ---------------------------------------------
        wait_for(lambda: traffic.sent > 20, 20, "STOMP traffic")
        b.wait("Number(document.querySelector('[data-chart=rates]').dataset.samples) >= 3", 30)
        b.wait("Number(document.querySelector('[data-k=\"rate.published\"]').dataset.value) > 0", 30)
        o = api(admin_broker, "overview")
        assert b.value("version") == o["version"]
        assert b.value("shards") == str(o["shards"])
        assert int(b.value("connections.total")) >= 4  # the clients above and this page
        shots(b, "overview")
        traffic.stop()
        # Quiet now: what the page shows settles on what the API answers.
        for key in ("messages.published", "messages.delivered", "messages.ready", "destinations.queues"):
            section, field = key.split(".")

            def same():
                return b.value(key) == str(api(admin_broker, "overview")[section][field])
            wait_for(same, 15, lambda: f"{key}: page {b.value(key)}, API {api(admin_broker, 'overview')}")
        assert int(b.value("messages.published")) >= traffic.sent

        # --- destinations: search, sort, the API's figures ---------------------------------
        dead_letters(admin_broker, stomp_client, "console.work", ["first", "second", "third"])
        b.click("a[data-page=destinations]")
        b.wait("document.querySelector('#destinations tbody tr td[data-k=name]')")
        b.type("#destination-search", "console.")
        b.wait("document.getElementById('view').dataset.loaded === 'console.||name|asc|0'")
        page = api(admin_broker, "destinations?filter=console.&sort=name")
        shown = b.eval("[...document.querySelectorAll('#destinations tbody tr')].map(r => "
                       "[...r.querySelectorAll('td')].slice(0, 3).map(td => td.textContent))")
        assert [row[0] for row in shown] == [d["name"] for d in page["items"]]
        assert {"console.orders", "DLQ.console.work"} <= {row[0] for row in shown}
        assert b.eval("document.querySelector('[data-k=range]').dataset.total") == str(page["total"])
        b.click("#destinations th[data-sort=depth]")
        b.wait("document.getElementById('view').dataset.loaded === 'console.||depth|desc|0'")
        deepest = api(admin_broker, "destinations?filter=console.&sort=depth&order=desc&limit=1")["items"][0]
        assert b.text("#destinations tbody tr td[data-k=name]") == deepest["name"]
        assert "order=desc" in b.eval("location.hash")

        # --- a queue: figures, depth chart, browse, purge ----------------------------------
        orders = destination(admin_broker, "console.orders")
        assert orders["depth"] > 0
        b.click("#destinations a[href='#/queue/console.orders']")
        b.wait("document.getElementById('destination-name').textContent === 'console.orders'")
        b.wait(f"document.querySelector('[data-k=depth]').dataset.value === '{orders['depth']}'")
        b.wait("Number(document.querySelector('[data-chart=depth]').dataset.samples) >= 2", 20)
        b.wait("document.getElementById('view').dataset.browsed === '20'")
        # Its figures come from the exact-name look-up, not from a filtered destination list.
        asked = [urllib.parse.urlparse(u) for u in b.events()["requests"]]
        assert any(u.path == "/admin/v1/queues/console.orders" for u in asked), asked
        assert not any(u.path == "/admin/v1/destinations" and "console.orders" in u.query for u in asked), asked
        first = b.text("#messages tbody tr td.body pre")
        assert first == "order 0", first
        shots(b, "queue")
        b.click("#purge")
        b.wait("!document.getElementById('confirm').hidden")
        assert "console.orders" in b.text("#confirm")
        b.click("#confirm-yes")
        b.wait("document.getElementById('action-result').textContent.startsWith('Purged')")
        assert b.text("#action-result") == f"Purged {orders['depth']:,} messages from console.orders."
        # Empty and without consumers, the queue is gone from the list; the page says so.
        assert (destination(admin_broker, "console.orders") or {"depth": 0})["depth"] == 0
        b.wait("document.querySelector('[data-k=depth]').dataset.value === '0'")
        b.wait("!document.getElementById('missing').hidden")
        b.wait("document.getElementById('view').dataset.browsed === '0'")

        # --- the dead-letter queue: replay into the queue the letters came from ------------
        b.eval("location.hash = '#/queue/' + encodeURIComponent('DLQ.console.work')")
        b.wait("document.getElementById('view').dataset.browsed === '3'")
        assert b.eval("document.getElementById('move-to').value") == "console.work"
        assert b.text("#move") == "Replay…"
        assert "dlq-reason: rejected" in b.text("#messages tbody tr td.headers")
        shots(b, "dead-letters", full_page=True)
        b.click("#move")
        b.click("#confirm-yes")
        b.wait("document.getElementById('action-result').textContent.startsWith('Moved')")
        assert b.text("#action-result") == "Moved 3 messages to console.work."
        assert (destination(admin_broker, "DLQ.console.work") or {"depth": 0})["depth"] == 0
        assert destination(admin_broker, "console.work")["depth"] == 3

        # --- connections: the list as the API has it, close one ----------------------------
        b.click("a[data-page=connections]")
        b.wait("document.querySelector('#connections tbody tr td[data-k=id]')")
        # The STOMP and MQTT clients as the API lists them (HTTP ones come and go with each call).
        def clients(rows):
            return sorted((str(r["id"]), r["protocol"], r["peer"]) for r in rows if r["protocol"] != "http")

        def shown_clients():
            rows = b.eval("[...document.querySelectorAll('#connections tbody tr')].map(r => ({id: "
                          "r.querySelector('[data-k=id]').textContent, protocol: r.querySelector('[data-k=protocol]')"
                          ".textContent, peer: r.querySelector('[data-k=peer]').textContent}))")
            return clients(rows)
        wait_for(lambda: shown_clients() == clients(api(admin_broker, "connections?limit=1000")["items"]), 15,
                 lambda: f"page {shown_clients()}, API {api(admin_broker, 'connections')}")
        mqtt_rows = api(admin_broker, "connections?filter=mqtt")["items"]
        assert len(mqtt_rows) == 2
        shots(b, "connections")
        victim = mqtt_rows[0]["id"]
        b.click(f"#connections button.close[data-id='{victim}']")
        b.wait("!document.getElementById('confirm').hidden")
        b.click("#confirm-yes")
        b.wait(f"document.getElementById('action-result').textContent === 'Connection {victim} closed.'")
        wait_for(lambda: all(c["id"] != victim for c in api(admin_broker, "connections")["items"]), 10,
                 "the connection gone from the API")
        b.wait(f"!document.querySelector(\"#connections button.close[data-id='{victim}']\")", 10)
        wait_for(lambda: traffic.publisher.disconnects or traffic.subscriber.disconnects, 10,
                 "the MQTT client told of the close")

        # --- logging out forgets the credentials ------------------------------------------
        b.click("#logout")
        b.wait("!document.getElementById('login').hidden")
        assert b.eval("sessionStorage.length") == 0

        events = b.events()
        assert events["pageErrors"] == [] and events["dialogs"] == [], events
        origin = f"http://127.0.0.1:{admin_broker.http_port}/"
        assert all(u.startswith(origin) for u in events["requests"]), events["requests"]
        assert all("Authorization" not in u and "s3cret" not in u for u in events["requests"])
    finally:
        traffic.stop()


def test_console_without_admin_users_needs_no_login(broker, browser):
    """Loopback with no [admin] users: the API answers without credentials, so does the page."""
    b = browser
    b.goto(f"http://127.0.0.1:{broker.http_port}/console/#/connections")
    b.wait("document.querySelector('#connections tbody tr td[data-k=protocol]')")
    assert b.text("#who").startswith("No login needed")
    assert b.eval("document.getElementById('login').hidden") is True
    assert "http" in b.eval("[...document.querySelectorAll('#connections td[data-k=protocol]')]"
                            ".map(td => td.textContent).join(' ')")
