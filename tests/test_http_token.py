"""Bearer tokens for HTTP (docs/auth.md, docs/http.md): `carrier token create` appends a hashed
token to [auth] tokens_file and prints it once; `Authorization: Bearer` is taken where Basic is;
an unknown or expired token is 401 with `WWW-Authenticate: Bearer error="invalid_token"`, and
failures are counted in the same per-address ledger as wrong passwords."""

import hashlib
import subprocess
import time
import uuid

import pytest

from helpers.broker import carrier_bin
from helpers.http import alice_line, basic, receive, request, send  # noqa: F401 (alice_line: a fixture)


def name():
    return f"k{uuid.uuid4().hex[:10]}"


def bearer(token):
    return {"Authorization": f"Bearer {token}"}


def create_token(user, tokens_file, *extra):
    result = subprocess.run([str(carrier_bin()), "token", "create", user, "--file", str(tokens_file), *extra],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()




def token_broker(broker_factory, alice_line, extra="", tokens=None):
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\ntokens_file = "tokens.txt"\n'
                                           'failure_delay_ms = 0\n' + extra)
    (b.workdir / "users.txt").write_text(alice_line + "\n")
    tokens_file = b.workdir / "tokens.txt"
    tokens_file.write_text("# bearer tokens\n")
    made = [create_token("alice", tokens_file, *t) for t in (tokens or [()])]
    b.start()
    return b, made


def test_token_create_prints_a_token_and_stores_only_its_hash(tmp_path):
    f = tmp_path / "tokens.txt"
    token = create_token("alice", f, "--ttl", "1h")
    assert token.startswith("carrier_") and len(token) > 40
    [line] = f.read_text().splitlines()
    user, expires, digest = line.split(":")
    assert user == "alice" and digest == hashlib.sha256(token.encode()).hexdigest()
    assert 3500 < int(expires) - time.time() <= 3600
    assert token not in f.read_text()
    assert f.stat().st_mode & 0o077 == 0, "the tokens file is for the broker's user only"
    assert create_token("alice", f, "--ttl", "never") != token
    assert f.read_text().splitlines()[1].split(":")[1] == "0"
    bad = subprocess.run([str(carrier_bin()), "token", "create", "alice", "--file", str(f), "--ttl", "soon"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "--ttl" in bad.stderr


def test_bearer_token_is_accepted_where_basic_is(broker_factory, alice_line):
    b, [token] = token_broker(broker_factory, alice_line)
    q = name()
    send(b.http_port, q, b"with a token", headers=bearer(token))
    [m] = receive(b.http_port, q, headers=bearer(token))
    assert m["body"] == "with a token"
    send(b.http_port, q, b"basic still works", headers=basic("alice", "wonderland"))
    # curl, as docs/http.md shows it
    out = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", f"Authorization: Bearer {token}",
                          "--data-binary", "curl", f"http://127.0.0.1:{b.http_port}/v1/queues/{q}/messages"],
                         capture_output=True, text=True, timeout=20)
    assert out.stdout == "201", out


@pytest.mark.parametrize("value", ["Bearer carrier_not-a-real-token", "Bearer ", "bearer x"])
def test_wrong_token_is_401_invalid_token(broker_factory, alice_line, value):
    b, _ = token_broker(broker_factory, alice_line)
    r = request(b.http_port, "POST", f"/v1/queues/{name()}/messages", body=b"x", headers={"Authorization": value})
    assert r.status == 401 and r.headers["content-type"] == "application/problem+json", r
    if value.strip().lower() != "bearer":
        assert 'error="invalid_token"' in r.headers["www-authenticate"], r


def test_expired_token_is_401(broker_factory, alice_line):
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\ntokens_file = "tokens.txt"\n'
                                           'failure_delay_ms = 0\n')
    (b.workdir / "users.txt").write_text(alice_line + "\n")
    expired, valid = "carrier_expired-token-for-the-test", "carrier_valid-token-for-the-test"
    digest = lambda t: hashlib.sha256(t.encode()).hexdigest()  # noqa: E731
    (b.workdir / "tokens.txt").write_text(f"alice:{int(time.time()) - 10}:{digest(expired)}\n"
                                          f"alice:{int(time.time()) + 3600}:{digest(valid)}\n")
    b.start()
    r = request(b.http_port, "GET", f"/v1/queues/{name()}/messages", headers=bearer(expired))
    assert r.status == 401 and r.headers["www-authenticate"] == 'Bearer realm="carrier", error="invalid_token"', r
    assert request(b.http_port, "GET", f"/v1/queues/{name()}/messages", headers=bearer(valid)).status == 204


def test_wrong_tokens_count_in_the_failure_ledger(broker_factory, alice_line):
    b, [token] = token_broker(broker_factory, alice_line, extra="source_failure_limit = 3\nfailure_window_ms = 600000\n")
    statuses = [request(b.http_port, "GET", "/v1/openapi.json", headers=bearer(f"carrier_guess{i}")).status
                for i in range(5)]
    assert statuses[:3] == [401, 401, 401] and statuses[3:] == [429, 429], statuses
    # Wrong passwords and wrong tokens are one budget: even the right token waits now.
    r = request(b.http_port, "GET", "/v1/openapi.json", headers=bearer(token))
    assert r.status == 429 and r.headers["retry-after"] == "5", r


def test_a_token_for_an_unknown_user_stops_the_broker_from_starting(broker_factory, alice_line):
    b = broker_factory(start=False, config='[auth]\nusers_file = "users.txt"\ntokens_file = "tokens.txt"\n')
    (b.workdir / "users.txt").write_text(alice_line + "\n")
    create_token("mallory", b.workdir / "tokens.txt")
    b.spawn()
    assert b.wait_exit() != 0
    assert "mallory" in b.log() and "no such user" in b.log(), b.log()
