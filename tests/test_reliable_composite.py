"""Composite destinations: one SEND to `/queue/a,/queue/b,/topic/c` delivers a copy to each
(one store batch, one receipt) — also the mailbox pattern: one send to several recipients'
queues, read whenever each recipient comes."""

import signal

from helpers.raw_stomp import RawStomp
from helpers.reliable import fresh
from helpers.wait import assert_stays

PERSISTENT = {"persistent": "true"}


def test_send_to_queues_and_a_topic_delivers_to_each(broker, stomp_client):
    qa, qb, tc = fresh(), fresh(), fresh("topic")
    a, b, c = stomp_client(broker), stomp_client(broker), stomp_client(broker)
    a.subscribe(qa)
    b.subscribe(qb)
    c.subscribe(tc)
    stomp_client(broker).send(f"{qa},{qb},{tc}", "to-all", headers={"x-k": "v"})
    for client in (a, b, c):
        [m] = client.wait_messages(1)
        assert (m.body, m.headers.get("x-k")) == ("to-all", "v"), m.headers
    assert_stays(lambda: a.count() == b.count() == c.count() == 1, 0.3,
                 lambda: f"{a.bodies()} {b.bodies()} {c.bodies()}")


def test_each_copy_carries_its_own_destination(broker, stomp_client):
    qa, qb = fresh(), fresh()
    a, b = stomp_client(broker), stomp_client(broker)
    a.subscribe(qa)
    b.subscribe(qb)
    stomp_client(broker).send(f"{qa},{qb}", "m")
    assert a.wait_messages(1)[0].headers.get("destination") == qa
    assert b.wait_messages(1)[0].headers.get("destination") == qb


def test_mailboxes_keep_their_copy_across_restart(broker, stomp_client):
    boxes = [fresh(prefix="mailbox") for _ in range(3)]
    stomp_client(broker).send(",".join(boxes), "letter", headers=PERSISTENT)
    broker.restart(sig=signal.SIGKILL)
    for box in boxes:
        reader = stomp_client(broker)
        reader.subscribe(box)
        assert [m.body for m in reader.wait_messages(1)] == ["letter"]
        assert_stays(lambda: reader.count() == 1, 0.2, lambda: reader.bodies())


def test_one_receipt_for_a_composite_send(broker):
    qa, qb = fresh(), fresh()
    with RawStomp(broker.port) as raw:
        raw.connect("1.2")
        raw.send_frame("SEND", [("destination", f"{qa},{qb}"), ("persistent", "true"),
                                ("receipt", "one")], b"m")
        frame = raw.read_frame()
        assert (frame.command, frame.header("receipt-id")) == ("RECEIPT", "one"), frame
        extra = raw.idle(0.3)
        assert not extra, f"more than one answer to one SEND: {extra!r}"


def test_composite_send_in_a_transaction(broker, stomp_client):
    qa, qb = fresh(), fresh()
    a, b = stomp_client(broker), stomp_client(broker)
    a.subscribe(qa)
    b.subscribe(qb)
    producer = stomp_client(broker)
    producer.frame("BEGIN", {"transaction": "tx"})
    producer.send(f"{qa},{qb}", "in-tx", headers={"transaction": "tx"})
    assert_stays(lambda: a.count() == 0 and b.count() == 0, 0.2, "delivered before COMMIT")
    producer.frame("COMMIT", {"transaction": "tx"})
    assert a.wait_messages(1)[0].body == "in-tx"
    assert b.wait_messages(1)[0].body == "in-tx"


def test_composite_with_wildcard_topic_subscribers(broker, stomp_client):
    base = fresh("topic")
    queue = fresh()
    wild, q = stomp_client(broker), stomp_client(broker)
    wild.subscribe(base + ".*")
    q.subscribe(queue)
    stomp_client(broker).send(f"{base}.x,{base}.y,{queue}", "fan")
    assert [m.body for m in wild.wait_messages(2)] == ["fan", "fan"]
    assert q.wait_messages(1)[0].body == "fan"
