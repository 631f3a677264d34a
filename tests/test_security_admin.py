"""The admin right from the ACL (issue 16; docs/admin.md, docs/auth.md): with an ACL file, `admin`
on every queue and topic opens the whole admin API, `admin` on some queues opens browsing,
purging and moving those (a move's target too), and nothing else; `[admin] users` keep the
whole API whatever the ACL says; loopback alone is no pass once an ACL is in force."""

import uuid

import pytest

from helpers.http import basic, request, send
from helpers.users import passwd_line

PASSWORDS = {"alice": "wonderland", "bob": "builder", "carol": "singer", "dave": "diver"}

ACL = """\
user alice
queue all >
topic all >

user bob
queue readwrite orders.>
queue admin orders.>

user carol
queue readwrite >

user dave
queue readwrite >
"""


@pytest.fixture(scope="module")
def users_text():
    return "".join(passwd_line(n, p) + "\n" for n, p in PASSWORDS.items())


@pytest.fixture
def broker(broker_factory, users_text):
    b = broker_factory(store="memory", start=False, config=(
        '[auth]\nusers_file = "users.txt"\nacl_file = "acl.txt"\nfailure_delay_ms = 0\n'
        '[admin]\nusers = ["dave"]\n'))
    (b.workdir / "users.txt").write_text(users_text)
    (b.workdir / "acl.txt").write_text(ACL)
    b.start()
    return b


def as_(user):
    return basic(user, PASSWORDS[user])


def status(broker, user, method, path):
    r = request(broker.http_port, method, path, headers=as_(user) if user else None)
    if r.status >= 400:
        assert r.headers["content-type"] == "application/problem+json", r
    return r.status


def fill(broker, queue, n=2):
    for i in range(n):
        send(broker.http_port, queue, f"m{i}".encode(), headers=as_("alice"))


def test_admin_everywhere_opens_the_whole_api(broker):
    assert status(broker, "alice", "GET", "/admin/v1/overview") == 200
    assert status(broker, "alice", "GET", "/admin/v1/connections") == 200
    q = f"misc.{uuid.uuid4().hex[:6]}"
    fill(broker, q)
    assert status(broker, "alice", "DELETE", f"/admin/v1/queues/{q}/messages") == 200


def test_admin_users_keep_the_whole_api_without_an_acl_admin_rule(broker):
    assert status(broker, "dave", "GET", "/admin/v1/overview") == 200
    q = f"misc.{uuid.uuid4().hex[:6]}"
    fill(broker, q)
    assert status(broker, "dave", "DELETE", f"/admin/v1/queues/{q}/messages") == 200


def test_admin_on_some_queues_opens_only_their_messages(broker):
    src, dst, other = (f"orders.{uuid.uuid4().hex[:6]}", f"orders.{uuid.uuid4().hex[:6]}",
                       f"misc.{uuid.uuid4().hex[:6]}")
    fill(broker, src, 3)
    fill(broker, other, 1)
    assert status(broker, "bob", "GET", f"/admin/v1/queues/{src}/messages") == 200
    r = request(broker.http_port, "POST", f"/admin/v1/queues/{src}/move?to=/queue/{dst}&limit=1", headers=as_("bob"))
    assert r.status == 200 and r.json() == {"moved": 1}, r
    # A move out of its queues, a purge elsewhere, and the broker-wide calls: refused.
    r = request(broker.http_port, "POST", f"/admin/v1/queues/{src}/move?to={other}", headers=as_("bob"))
    assert r.status == 403 and "bob" in r.json()["detail"], r
    assert status(broker, "bob", "DELETE", f"/admin/v1/queues/{other}/messages") == 403
    assert status(broker, "bob", "GET", "/admin/v1/overview") == 403
    assert status(broker, "bob", "GET", "/admin/v1/destinations") == 403
    r = request(broker.http_port, "DELETE", f"/admin/v1/queues/{src}/messages", headers=as_("bob"))
    assert r.status == 200 and r.json() == {"purged": 2}, r
    # The messages of the queue it could not touch are still there.
    r = request(broker.http_port, "GET", f"/admin/v1/queues/{other}/messages", headers=as_("alice"))
    assert r.status == 200 and len(r.json()) == 1, r


def test_no_admin_right_no_admin_api_even_from_loopback(broker):
    assert status(broker, "carol", "GET", "/admin/v1/overview") == 403
    q = f"orders.{uuid.uuid4().hex[:6]}"
    fill(broker, q)
    assert status(broker, "carol", "DELETE", f"/admin/v1/queues/{q}/messages") == 403
    assert status(broker, None, "GET", "/admin/v1/overview") == 401
    # Health and metrics need no admin right.
    assert status(broker, None, "GET", "/healthz") == 200
    assert status(broker, "carol", "GET", "/metrics") == 200
