"""The admin API's connection and destination details (docs/admin.md): client id, user and
message rates of each connection, the oldest message's age of each queue, the topics list, and
closing a connection with a reason the client is told (STOMP ERROR, MQTT 5 DISCONNECT 0x98,
MQTT 3.1.1 plain close, WebSocket close frame), through real clients (python3-stomp, paho)."""

import uuid

from helpers.http import basic, request, send
from helpers.mqtt_clients import MqttClient
from helpers.raw_ws import WsStomp
from helpers.users import broker_with_users
from helpers.wait import wait_for

ADMIN = basic("alice", "wonderland")


def name():
    return f"c{uuid.uuid4().hex[:10]}"


def get(port, path, headers=None):
    r = request(port, "GET", path, headers=headers)
    assert r.status == 200, r
    return r.json()


def connection(port, predicate, headers=None, what="the connection"):
    """The one connection row `predicate` picks, once it is there."""
    def find():
        rows = [c for c in get(port, "/admin/v1/connections?limit=1000", headers)["items"] if predicate(c)]
        return rows[0] if len(rows) == 1 else None
    return wait_for(find, message=what)


def test_stomp_connection_has_client_id_user_and_rates(broker_factory, stomp_client):
    b = broker_with_users(broker_factory, {"alice": "wonderland"}, '[admin]\nusers = ["alice"]\n')
    q = name()
    client_id = f"billing-{name()}"
    c = stomp_client(b, connect_headers={"login": "alice", "passcode": "wonderland", "client-id": client_id})
    row = connection(b.http_port, lambda r: r["client_id"] == client_id, ADMIN)
    assert row["protocol"] == "stomp" and row["user"] == "alice"
    assert row["messages_in"] == 0 and row["messages_out"] == 0
    c.send_many(f"/queue/{q}", [f"m{i}" for i in range(30)])
    c.subscribe(f"/queue/{q}")
    c.wait_messages(30)
    # Counts are exact; a rate is over the last sample window, so it is positive while the
    # window holds the traffic (the first one: since connecting).
    row = connection(b.http_port, lambda r: r["client_id"] == client_id and r["messages_out"] == 30, ADMIN,
                     "30 messages out")
    assert row["messages_in"] == 30
    # A rate is taken at most once a second, over the time since the last one: on a slow machine
    # the 30 can fall in a window already closed. Traffic that goes on is seen in the next one.
    sent = [30]

    def rates_positive():
        c.send_many(f"/queue/{q}", ["more"])
        sent[0] += 1
        c.wait_messages(sent[0])
        r = connection(b.http_port, lambda r: r["client_id"] == client_id, ADMIN)
        return r if r["in_per_second"] > 0 and r["out_per_second"] > 0 else None
    wait_for(rates_positive, 10, "positive rates while messages flow")
    # Filter by user and client id, sort by the rates.
    assert get(b.http_port, "/admin/v1/connections?filter=alice", ADMIN)["total"] >= 1
    assert get(b.http_port, f"/admin/v1/connections?filter={client_id}", ADMIN)["total"] == 1
    for key in ("in", "out", "client", "user"):
        get(b.http_port, f"/admin/v1/connections?sort={key}&order=desc", ADMIN)
    # Past a second with no traffic the next sample's rate is zero.
    wait_for(lambda: connection(b.http_port, lambda r: r["client_id"] == client_id, ADMIN)["in_per_second"] == 0,
             timeout=10, message="the rate falls to zero once traffic stops")


def test_mqtt_connection_has_client_id_and_counts(broker):
    topic = f"sensors/{name()}/temp"
    sub = MqttClient(broker.mqtt_port, client_id=f"sub-{name()}", version="5")
    pub = MqttClient(broker.mqtt_port, client_id=f"pub-{name()}", version="3.1.1")
    try:
        sub.connect()
        sub.subscribe(topic, qos=1)
        pub.connect()
        for i in range(10):
            pub.publish(topic, f"t{i}".encode(), qos=1)
        sub.wait_messages(10)
        p = connection(broker.http_port, lambda r: r["client_id"] == pub.client_id and r["messages_in"] == 10)
        assert p["protocol"] == "mqtt" and p["user"] == "" and p["messages_out"] == 0
        s = connection(broker.http_port, lambda r: r["client_id"] == sub.client_id and r["messages_out"] == 10)
        assert s["messages_in"] == 0
    finally:
        sub.close_quietly()
        pub.close_quietly()


def test_oldest_message_age_grows_and_sorts(broker, stomp_client):
    old, young, empty = name(), name(), name()
    send(broker.http_port, old, b"first")
    stomp_client(broker).subscribe(f"/queue/{empty}")  # a queue with a consumer and nothing ready

    def rows():
        page = get(broker.http_port, f"/admin/v1/destinations?filter=c&sort=age&order=desc&limit=10000")
        return {d["name"]: d for d in page["items"] if d["name"] in (old, young, empty)}
    # The age is measured, not faked: wait until it has visibly grown.
    wait_for(lambda: (rows()[old]["oldest_age_ms"] or 0) >= 200, message="the oldest message ages")
    send(broker.http_port, young, b"second")
    r = rows()
    assert r[empty]["oldest_age_ms"] is None
    assert r[old]["oldest_age_ms"] > r[young]["oldest_age_ms"] >= 0
    page = get(broker.http_port, "/admin/v1/destinations?sort=age&order=desc&limit=10000")["items"]
    order = [d["name"] for d in page if d["name"] in (old, young, empty)]
    assert order == [old, young, empty]


def test_topics_list(broker, stomp_client):
    prefix = name()
    stomp = stomp_client(broker)
    stomp.subscribe(f"/topic/{prefix}.prices.>")
    stomp2 = stomp_client(broker)
    stomp2.subscribe(f"/topic/{prefix}.prices.>")
    mqtt = MqttClient(broker.mqtt_port)
    try:
        mqtt.connect()
        mqtt.subscribe(f"{prefix}/+/temp")
        page = wait_for(lambda: (lambda p: p if p["total"] == 2 else None)(
            get(broker.http_port, f"/admin/v1/topics?filter={prefix}&sort=subscriptions&order=desc")),
            message="both topic filters listed")
        first, second = page["items"]
        assert first["name"] == f"{prefix}.prices.>" and first["subscriptions"] == 2 and first["consumers"] == 2
        assert second["subscriptions"] == 1 and "temp" in second["name"]
        r = request(broker.http_port, "GET", "/admin/v1/topics?sort=colour")
        assert r.status == 400, r
    finally:
        mqtt.close_quietly()


def test_close_stomp_sends_error_with_the_reason(broker, stomp_client):
    client_id = name()
    c = stomp_client(broker, connect_headers={"client-id": client_id})
    row = connection(broker.http_port, lambda r: r["client_id"] == client_id)
    r = request(broker.http_port, "DELETE", f"/admin/v1/connections/{row['id']}?reason=maintenance%20window")
    assert r.status == 204, r
    wait_for(lambda: c.errors, message="an ERROR frame")
    assert c.errors[0].headers["message"] == "closed by an administrator"
    assert c.errors[0].body.rstrip("\n") == "maintenance window"
    wait_for(lambda: c.disconnected, message="the broker closes the connection")


def test_close_mqtt5_sends_disconnect_0x98_with_the_reason(broker):
    m = MqttClient(broker.mqtt_port, version="5")
    try:
        m.connect()
        row = connection(broker.http_port, lambda r: r["client_id"] == m.client_id)
        r = request(broker.http_port, "DELETE", f"/admin/v1/connections/{row['id']}?reason=rebalancing")
        assert r.status == 204, r
        m.wait_disconnected()
        assert m.disconnects[0] == 0x98
        assert m.disconnect_props[0].ReasonString == "rebalancing"
    finally:
        m.close_quietly()


def test_close_mqtt311_closes_plainly(broker):
    m = MqttClient(broker.mqtt_port, version="3.1.1")
    try:
        m.connect()
        row = connection(broker.http_port, lambda r: r["client_id"] == m.client_id)
        assert request(broker.http_port, "DELETE", f"/admin/v1/connections/{row['id']}").status == 204
        m.wait_disconnected()
        assert m.disconnects[0] != 0  # paho's "unexpected disconnect": 3.1.1 has no server DISCONNECT
        wait_for(lambda: not [c for c in get(broker.http_port, "/admin/v1/connections")["items"]
                              if c["client_id"] == m.client_id], message="the connection is gone")
    finally:
        m.close_quietly()


def test_close_websocket_sends_the_reason_in_the_close_frame(broker):
    ws = WsStomp(broker.http_port)
    try:
        ws.send(b"CONNECT\naccept-version:1.2\nhost:localhost\nclient-id:ws-" + b"x" * 4 + b"\n\n\x00")
        row = connection(broker.http_port, lambda r: r["client_id"] == "ws-xxxx")
        assert row["protocol"].startswith("ws-")
        assert request(broker.http_port, "DELETE", f"/admin/v1/connections/{row['id']}?reason=bye%20now").status == 204
        code, reason = ws.ws.expect_close(1000)
        assert reason == "bye now"
    finally:
        ws.ws.close()


def test_close_reason_is_bounded_and_printable(broker, stomp_client):
    client_id = name()
    stomp_client(broker, connect_headers={"client-id": client_id})
    row = connection(broker.http_port, lambda r: r["client_id"] == client_id)
    for bad in ("x" * 121, "a%0Ab", "%FF%FE"):
        r = request(broker.http_port, "DELETE", f"/admin/v1/connections/{row['id']}?reason={bad}")
        assert r.status == 400 and r.json()["detail"], r
    r = request(broker.http_port, "DELETE", f"/admin/v1/connections/{row['id']}?colour=red")
    assert r.status == 400, r
    # Still open: every refusal above left it alone.
    assert connection(broker.http_port, lambda r: r["client_id"] == client_id)


def test_close_http_answers_the_waiting_poll_with_the_reason(broker):
    import http.client
    import threading
    q = name()
    conn = http.client.HTTPConnection("127.0.0.1", broker.http_port, timeout=20)
    conn.connect()
    port = conn.sock.getsockname()[1]
    answer = {}

    def poll():
        conn.request("GET", f"/v1/queues/{q}/messages?max=1&wait=15s")
        r = conn.getresponse()
        answer["status"], answer["body"] = r.status, r.read()
    t = threading.Thread(target=poll, daemon=True)
    t.start()
    row = connection(broker.http_port, lambda r: r["peer"] == f"127.0.0.1:{port}")
    assert row["protocol"] == "http"
    # The poll is waiting once its queue has it as a consumer.
    wait_for(lambda: [d for d in get(broker.http_port, f"/admin/v1/destinations?filter={q}")["items"]
                      if d["consumers"] == 1], message="the poll waits")
    assert request(broker.http_port, "DELETE", f"/admin/v1/connections/{row['id']}?reason=drain").status == 204
    t.join(timeout=10)
    assert answer.get("status") == 503, answer
    assert "closed by an administrator: drain" in answer["body"].decode(), answer
    conn.close()
