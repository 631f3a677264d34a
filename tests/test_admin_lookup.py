"""One destination by its exact name (GET /admin/v1/queues/{name}, /admin/v1/subscriptions/{name};
docs/admin.md), and the shared snapshots behind the overview and the lists ([admin]
snapshot_max_age_ms): callers within the age share one, an admin call that changes something
makes the next read take a new one."""

import json
import threading
import uuid

from helpers.http import assert_problem, receive, request, send
from helpers.wait import wait_for


def name():
    return f"l{uuid.uuid4().hex[:10]}"


def without_age(page):
    """A page or row without oldest_age_ms (an age: computed when the answer is written)."""
    if "items" in page:
        return {**page, "items": [without_age(i) for i in page["items"]]}
    return {k: v for k, v in page.items() if k != "oldest_age_ms"}


def get(port, path):
    r = request(port, "GET", path)
    assert r.status == 200, r
    return r.json()


def test_a_queue_by_its_exact_name(broker):
    q = name()
    for _ in range(3):
        send(broker.http_port, q, b"x")
    # A name that others contain: the look-up is exact, not a filter.
    send(broker.http_port, q + ".longer", b"y")
    row = get(broker.http_port, f"/admin/v1/queues/{q}")
    assert row["name"] == q and row["kind"] == "queue", row
    assert row["depth"] == 3 and row["bytes"] >= 3 and row["unacked"] == 0 and row["consumers"] == 0, row
    assert row["enqueued"] == 3 and row["durable"] is False and row["oldest_age_ms"] >= 0, row
    # The same figures as the destination list's row.
    listed = get(broker.http_port, f"/admin/v1/destinations?filter={q}&sort=name")["items"][0]
    assert without_age(listed) == without_age(row), (listed, row)

    # Percent-encoded names, and what is not there.
    odd = name() + " x/y"
    send(broker.http_port, odd.replace(" ", "%20").replace("/", "%2F"), b"z")
    assert get(broker.http_port, "/admin/v1/queues/" + odd.replace(" ", "%20").replace("/", "%2F"))["name"] == odd
    r = request(broker.http_port, "GET", f"/admin/v1/queues/{name()}")
    assert_problem(r, 404)
    assert "no queue" in r.json()["detail"]
    assert_problem(request(broker.http_port, "GET", f"/admin/v1/subscriptions/{q}"), 404)
    assert_problem(request(broker.http_port, "GET", "/admin/v1/queues/$mqtt-sessions"), 403)
    assert_problem(request(broker.http_port, "GET", f"/admin/v1/queues/{q}?bogus=1"), 400)
    r = request(broker.http_port, "POST", f"/admin/v1/queues/{q}", body=b"x")
    assert_problem(r, 405)
    assert r.headers["allow"] == "GET, HEAD", r
    assert request(broker.http_port, "HEAD", f"/admin/v1/queues/{q}").status == 200

    # Once drained and without consumers the queue is gone: 404, as for a name never used.
    assert len(receive(broker.http_port, q, "max=10&wait=5s")) == 3
    wait_for(lambda: request(broker.http_port, "GET", f"/admin/v1/queues/{q}").status == 404, 10,
             "the drained queue to be gone")


def test_a_subscription_and_a_temporary_queue_by_name(broker, stomp_client):
    sub = name()
    r = request(broker.http_port, "PUT", f"/v1/subscriptions/{sub}", body=json.dumps({"topic": f"{sub}.t"}).encode(),
                headers={"Content-Type": "application/json"})
    assert r.status == 201, r
    send(broker.http_port, f"{sub}.t", b"event", kind="topics")
    wait_for(lambda: request(broker.http_port, "GET", f"/admin/v1/subscriptions/http:{sub}").status == 200, 10,
             "the subscription's row")
    row = get(broker.http_port, f"/admin/v1/subscriptions/http:{sub}")
    assert row["kind"] == "subscription" and row["name"] == f"http:{sub}" and row["durable"] is True, row
    assert row["depth"] == 1, row
    assert_problem(request(broker.http_port, "GET", f"/admin/v1/queues/http:{sub}"), 404)

    # A temporary queue (STOMP /temp-queue/...) is found under /queues/ too, as the console's
    # queue page asks.
    stomp_client(broker).subscribe("/temp-queue/replies", id="t")
    temps = []
    wait_for(lambda: temps.extend(get(broker.http_port, "/admin/v1/destinations?kind=temp-queue")["items"]) or temps,
             10, "the temporary queue in the list")
    temp = temps[0]
    found = get(broker.http_port, "/admin/v1/queues/" + temp["name"].replace("/", "%2F"))
    assert found["kind"] == "temp-queue" and found["name"] == temp["name"] and found["consumers"] == 1, found


def test_readers_share_a_snapshot_until_an_admin_change(broker_factory):
    broker = broker_factory(config="[admin]\nsnapshot_max_age_ms = 60000\n")
    q = name()
    send(broker.http_port, q, b"1")
    first = get(broker.http_port, f"/admin/v1/destinations?filter={q}")
    assert [d["depth"] for d in first["items"]] == [1]
    overview = get(broker.http_port, "/admin/v1/overview")
    # A minute's age: a message sent now is not in what the lists answer...
    send(broker.http_port, q, b"2")
    assert without_age(get(broker.http_port, f"/admin/v1/destinations?filter={q}")) == without_age(first)
    assert get(broker.http_port, "/admin/v1/overview")["messages"]["published"] == overview["messages"]["published"]
    # ...while the exact look-up and /metrics read the shards now.
    assert get(broker.http_port, f"/admin/v1/queues/{q}")["depth"] == 2
    metrics = request(broker.http_port, "GET", "/metrics").body.decode()
    assert "carrier_messages_published_total 2" in metrics, metrics
    # Concurrent readers are answered from it too.
    answers, errors = [], []

    def read():
        try:
            answers.append(get(broker.http_port, f"/admin/v1/destinations?filter={q}"))
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)
    readers = [threading.Thread(target=read) for _ in range(8)]
    for t in readers:
        t.start()
    for t in readers:
        t.join(30)
    assert not errors and [without_age(a) for a in answers] == [without_age(first)] * 8, (errors, answers)

    # A purge through the admin API: the next read is new.
    r = request(broker.http_port, "DELETE", f"/admin/v1/queues/{q}/messages")
    assert r.status == 200 and r.json() == {"purged": 2}, r
    after = get(broker.http_port, f"/admin/v1/destinations?filter={q}")
    assert [d["depth"] for d in after["items"]] in ([], [0]), after
    assert get(broker.http_port, "/admin/v1/overview")["messages"]["published"] == 2
    # A test message through the admin API likewise.
    assert request(broker.http_port, "POST", f"/admin/v1/queues/{q}/messages", body=b"3").status == 201
    assert [d["depth"] for d in get(broker.http_port, f"/admin/v1/destinations?filter={q}")["items"]] == [1]


def test_with_age_zero_every_read_is_current(broker_factory):
    broker = broker_factory(config="[admin]\nsnapshot_max_age_ms = 0\n")
    q = name()
    for i in range(1, 4):
        send(broker.http_port, q, b"x")
        assert [d["depth"] for d in get(broker.http_port, f"/admin/v1/destinations?filter={q}")["items"]] == [i]
        assert get(broker.http_port, "/admin/v1/overview")["messages"]["published"] == i
