"""Structured logs (docs/configuration.md, [log]): `--log-format json` and `[log] format = "json"`
write one JSON object per line with time, level, logger and msg, plus protocol, connection,
remote and destination on a connection's lines; repeated lines of the same kind are held back
past a burst, and the next one let through says how many were."""

import json
import re
import time
import uuid

from helpers.http import request
from helpers.wait import wait_for


def records(broker):
    """Every line of the broker's log, each parsed as JSON (a line that is not fails the test)."""
    out = []
    for line in broker.log().splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise AssertionError(f"not a JSON log line: {line!r} ({e})") from None
    return out


def connection_id(broker, client_id):
    def find():
        items = request(broker.http_port, "GET", "/admin/v1/connections?limit=1000").json()["items"]
        ids = [c["id"] for c in items if c["client_id"] == client_id]
        return ids[0] if ids else None
    return wait_for(find, message=f"connection {client_id}")


def test_json_lines_have_the_documented_fields(broker_factory, stomp_client):
    b = broker_factory(extra_args=["--log-format", "json"], log_level="debug")
    client_id = f"j{uuid.uuid4().hex[:8]}"
    c = stomp_client(b, connect_headers={"client-id": client_id})
    # A refused SEND names its destination: a debug line about it.
    c.frame("SEND", {"destination": "/exchange/nosuch/key"}, wait=False)
    wait_for(lambda: c.errors, message="the ERROR for the bad destination")
    wait_for(lambda: any(r.get("destination") == "/exchange/nosuch/key" for r in records(b)),
             message="a line with the destination field")
    recs = records(b)
    for r in recs:
        assert set(r) >= {"time", "level", "logger", "msg"}, r
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r["time"]), r
        assert r["level"] in ("trace", "debug", "info", "warn", "error", "critical"), r
    ready = [r for r in recs if r["msg"].startswith("carrier ready:")]
    assert len(ready) == 1 and ready[0]["level"] == "info" and ready[0]["logger"] == "broker"
    assert "protocol" not in ready[0]
    [bad] = [r for r in recs if r.get("destination") == "/exchange/nosuch/key"]
    assert bad["protocol"] == "stomp" and isinstance(bad["connection"], int)
    assert re.fullmatch(r"127\.0\.0\.1:\d+", bad["remote"]), bad
    assert not bad["msg"].startswith("["), bad  # the prefix became fields


def test_config_file_selects_json(broker_factory):
    b = broker_factory(config='[log]\nformat = "json"\n')
    assert any(r["msg"].startswith("carrier ready:") for r in records(b))


def test_bad_format_is_refused_by_name(broker_factory):
    b = broker_factory(start=False, extra_args=["--log-format", "xml"])
    b.spawn()
    assert b.wait_exit() == 2
    assert "--log-format" in b.log()


def test_repeated_connection_lines_are_held_back_and_counted(broker_factory, stomp_client):
    b = broker_factory(extra_args=["--log-format", "json"])
    # Eight connections closed by an administrator: eight lines of one kind.
    closed = []
    for i in range(8):
        client_id = f"r{uuid.uuid4().hex[:8]}"
        c = stomp_client(b, connect_headers={"client-id": client_id})
        cid = connection_id(b, client_id)
        assert request(b.http_port, "DELETE", f"/admin/v1/connections/{cid}?reason=flood").status == 204
        wait_for(lambda: c.disconnected, message="closed")
        closed.append(cid)
    first_closed = time.monotonic()

    def lines():
        return [r for r in records(b) if r["msg"].startswith("closed by an administrator")]
    # The burst (5 per 10 s) got through; the rest were held back.
    wait_for(lambda: len(lines()) == 5, message="five lines of the burst")
    # Once the window has passed, the next line of the kind says how many were held back.
    wait_for(lambda: time.monotonic() - first_closed > 10.5, timeout=15, interval=0.1,
             message="the repeat window passes")
    client_id = f"r{uuid.uuid4().hex[:8]}"
    c = stomp_client(b, connect_headers={"client-id": client_id})
    cid = connection_id(b, client_id)
    assert request(b.http_port, "DELETE", f"/admin/v1/connections/{cid}?reason=flood").status == 204
    last = wait_for(lambda: len(lines()) == 6 and lines()[-1], message="the line after the window")
    assert "(and 3 more like it held back in the last 10 s)" in last["msg"], last
    assert last["connection"] == cid
