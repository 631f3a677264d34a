"""/healthz and /readyz on the HTTP listener (docs/admin.md): answered without credentials, so an
orchestrator's probe needs none, while every other route still asks for them."""

from helpers.http import basic, request
from helpers.users import broker_with_users


def test_healthz_and_readyz_on_a_running_broker(broker):
    r = request(broker.http_port, "GET", "/healthz")
    assert r.status == 200 and r.json() == {"status": "alive"}, r
    r = request(broker.http_port, "GET", "/readyz")
    assert r.status == 200, r
    assert r.json() == {"status": "ready", "reasons": []}
    assert request(broker.http_port, "HEAD", "/readyz").status == 200


def test_probes_allow_only_get(broker):
    r = request(broker.http_port, "POST", "/healthz", body=b"")
    assert r.status == 405 and r.headers["allow"] == "GET, HEAD", r
    assert r.headers["content-type"] == "application/problem+json"


def test_probes_need_no_credentials_when_users_are_configured(broker_factory):
    b = broker_with_users(broker_factory, {"alice": "wonderland"})
    assert request(b.http_port, "GET", "/healthz").status == 200
    assert request(b.http_port, "GET", "/readyz").status == 200
    # The rest of the listener still asks: /metrics included.
    assert request(b.http_port, "GET", "/metrics").status == 401
    assert request(b.http_port, "GET", "/metrics", headers=basic("alice", "wonderland")).status == 200
