"""The lost answer (docs/relay.md, "Polling and delivery"): a poll's answer that never reached the
peer — the connection broke while it was written — is handed out again at the peer's next
poll when the peer names the last answer batch it did receive (Carrier-Relay-Ack, from the
Carrier-Relay-Batch of each answer). A seed client, which sends no such header, keeps the
seed's rule: its next poll acknowledges everything handed out before."""

import uuid

from helpers.http import Raw, request
from helpers.raw_relay import MEDIA_TYPE, Peer, decode
from test_relay_exchanges import create_pipe, listen, send


def name():
    return f"l{uuid.uuid4().hex[:10]}"


def poll(peer, ack=None, wait_ms=0):
    headers = {"Content-Type": MEDIA_TYPE, "Carrier-Relay-Max": "10"}
    if ack is not None:
        headers["Carrier-Relay-Ack"] = str(ack)
    r = request(peer.port, "POST", f"/{peer.id}?{wait_ms},-1,{peer.base}", body=b"", headers=headers)
    assert r.status == 200, r
    batch = r.headers.get("carrier-relay-batch")
    return [m for m in decode(r.body) if m.get("response") == "message"], int(batch) if batch else None


def lose_one_answer(peer, ack):
    """A poll whose answer arrives (its head is read: it was written) and is then dropped with
    the connection, as on a link that breaks mid-answer."""
    raw = Raw(peer.port)
    target = f"/{peer.id}?5000,-1,{peer.base}"
    raw.send(f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Type: {MEDIA_TYPE}\r\nContent-Length: 0\r\n"
             f"Carrier-Relay-Ack: {ack}\r\n\r\n".encode())
    status, headers, body = raw.read_response()
    raw.close()
    assert status == 200 and decode(body), "the answer carried the message"
    return int(headers["carrier-relay-batch"])


def test_an_answer_lost_on_the_way_is_handed_out_again(broker):
    port = broker.http_port
    receiver, sender = Peer(port), Peer(port)
    pipe_id = create_pipe(receiver, name())
    listen(receiver, pipe_id)
    _, received = poll(receiver, ack=0)  # collects what waits (nothing but the listen's answer)
    send(sender, pipe_id)
    lost = lose_one_answer(receiver, received or 0)
    assert lost > (received or 0)
    # The peer says it got only up to `received`: the lost batch comes again, at once.
    again, batch = poll(receiver, ack=received or 0)
    assert [m.get("message", "") for m in again] == ["Hello"]
    assert batch > lost, "a new batch number"
    # Naming that batch acknowledges it: nothing comes a third time.
    third, _ = poll(receiver, ack=batch, wait_ms=300)
    assert third == []


def test_a_seed_client_keeps_the_seeds_rule(broker):
    port = broker.http_port
    receiver, sender = Peer(port), Peer(port)
    pipe_id = create_pipe(receiver, name())
    listen(receiver, pipe_id)
    poll(receiver)
    send(sender, pipe_id)
    lose_one_answer(receiver, 0)
    # Without Carrier-Relay-Ack the next poll takes everything handed out as received (only a
    # peer that stops polling for relay.redeliver_ms gets it again).
    later, _ = poll(receiver, wait_ms=300)
    assert later == []


def test_a_bad_ack_header_is_refused(broker):
    peer = Peer(broker.http_port)
    for bad in ("-1", "x", "18446744073709551616", ""):
        r = request(broker.http_port, "POST", f"/{peer.id}?0,-1,{peer.base}", body=b"",
                    headers={"Content-Type": MEDIA_TYPE, "Carrier-Relay-Ack": bad})
        if bad == "":
            assert r.status == 200  # an empty header is no header
        else:
            assert r.status == 400 and b"Carrier-Relay-Ack" in r.body, (bad, r)
