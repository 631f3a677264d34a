"""Temporary queues: /temp-queue/NAME is private to the connection using it (rewritten to a
connection-unique name, also in a SEND's reply-to), so request/reply works with reply-to and
correlation-id; deleted when its connection closes."""

from helpers.raw_stomp import RawStomp
from helpers.reliable import config, fresh, policy
from helpers.wait import assert_stays


def serve_one(responder, reply_body):
    """The responder answers the latest request on reply-to with the same correlation-id."""
    request = responder.messages[-1]
    reply_to = request.headers.get("reply-to")
    responder.send(reply_to, reply_body,
                   headers={"correlation-id": request.headers.get("correlation-id")})
    return reply_to


def test_request_reply_through_a_temporary_queue(broker, stomp_client):
    service = fresh(prefix="svc")
    responder = stomp_client(broker)
    responder.subscribe(service)
    requester = stomp_client(broker)
    requester.subscribe("/temp-queue/r")
    requester.send(service, "question",
                   headers={"reply-to": "/temp-queue/r", "correlation-id": "X"})
    [request] = responder.wait_messages(1)
    assert request.headers.get("correlation-id") == "X", request.headers
    reply_to = request.headers.get("reply-to")
    assert reply_to and reply_to != "/temp-queue/r", \
        f"reply-to not rewritten to a connection-unique name: {reply_to!r}"
    serve_one(responder, "answer")
    [reply] = requester.wait_messages(1)
    assert (reply.body, reply.headers.get("correlation-id")) == ("answer", "X"), reply.headers


def test_same_temp_name_on_two_connections_is_two_queues(broker, stomp_client):
    service = fresh(prefix="svc")
    responder = stomp_client(broker)
    responder.subscribe(service)
    first, second = stomp_client(broker), stomp_client(broker)
    reply_tos = []
    for n, requester in enumerate((first, second), 1):
        requester.subscribe("/temp-queue/replies")
        requester.send(service, f"q{n}",
                       headers={"reply-to": "/temp-queue/replies", "correlation-id": f"c{n}"})
        responder.wait_messages(n)
        reply_tos.append(serve_one(responder, f"a{n}"))
    assert reply_tos[0] != reply_tos[1], reply_tos
    assert [m.body for m in first.wait_messages(1)] == ["a1"]
    assert [m.body for m in second.wait_messages(1)] == ["a2"]
    assert_stays(lambda: first.count() == 1 and second.count() == 1, 0.3,
                 lambda: f"first {first.bodies()}, second {second.bodies()}")


def test_sending_to_a_temp_name_reaches_only_the_own_connection(broker, stomp_client):
    owner, stranger = stomp_client(broker), stomp_client(broker)
    owner.subscribe("/temp-queue/private")
    stranger.send("/temp-queue/private", "from-stranger")  # the stranger's own temp queue
    owner.send("/temp-queue/private", "from-owner")
    assert [m.body for m in owner.wait_messages(1)] == ["from-owner"]
    assert_stays(lambda: owner.count() == 1, 0.3, lambda: owner.bodies())


def test_temp_queue_is_deleted_when_its_connection_closes(broker, stomp_client):
    service = fresh(prefix="svc")
    responder = stomp_client(broker)
    responder.subscribe(service)
    requester = stomp_client(broker)
    requester.subscribe("/temp-queue/gone")
    requester.send(service, "q", headers={"reply-to": "/temp-queue/gone"})
    [request] = responder.wait_messages(1)
    reply_to = request.headers["reply-to"]
    requester.disconnect()

    # A reply sent after the close is not kept: the send is refused, or nobody ever gets it.
    with RawStomp(broker.port) as late_responder:
        late_responder.connect("1.2")
        late_responder.send_frame("SEND", [("destination", reply_to), ("receipt", "late")],
                                  b"too-late")
        answer = late_responder.read_frame()
        assert answer.command in ("RECEIPT", "ERROR"), answer
    with RawStomp(broker.port) as snoop:
        snoop.connect("1.2")
        snoop.send_frame("SUBSCRIBE", [("destination", reply_to), ("id", "0"),
                                       ("receipt", "sub")])
        frames = snoop.idle(0.5)
    delivered = [f for f in frames if f.command == "MESSAGE"]
    assert not delivered, f"a deleted temp queue kept a message: {delivered!r}"
    assert all(f.command in ("RECEIPT", "ERROR") for f in frames), frames


def test_temp_queue_messages_go_with_the_connection(broker, stomp_client):
    owner = stomp_client(broker)
    owner.subscribe("/temp-queue/box", ack="client-individual")
    owner.send("/temp-queue/box", "unacked")
    owner.wait_messages(1)
    owner.send("/temp-queue/box", "waiting")
    owner.wait_messages(2)
    owner.disconnect()
    again = stomp_client(broker)  # a new connection's /temp-queue/box is a new, empty queue
    again.subscribe("/temp-queue/box")
    again.send("/temp-queue/box", "fresh")
    assert [m.body for m in again.wait_messages(1)] == ["fresh"]
    assert_stays(lambda: again.count() == 1, 0.3, lambda: again.bodies())


def test_message_destination_is_the_temp_name_or_its_rewrite(broker, stomp_client):
    owner = stomp_client(broker)
    owner.subscribe("/temp-queue/mine")
    owner.send("/temp-queue/mine", "hello")
    [m] = owner.wait_messages(1)
    assert m.body == "hello"
    assert m.headers.get("destination", "").startswith("/temp-queue/") or \
        m.headers.get("destination", "").startswith("/queue/"), m.headers


def test_replies_to_a_closed_temp_queue_do_not_pile_up(broker_factory, stomp_client):
    # A one-message limit on every queue (temporary ones included) makes "kept" observable:
    # if late replies were stored somewhere, the second one would be refused as "full".
    broker = broker_factory(config=config(policy("queue:>", max_messages=1)))
    service = fresh(prefix="svc")
    responder = stomp_client(broker)
    responder.subscribe(service)
    requester = stomp_client(broker)
    requester.subscribe("/temp-queue/gone")
    requester.send(service, "q", headers={"reply-to": "/temp-queue/gone"})
    reply_to = responder.wait_messages(1)[0].headers["reply-to"]
    requester.disconnect()
    answers = []
    for n in range(3):
        with RawStomp(broker.port) as late:
            late.connect("1.2")
            late.send_frame("SEND", [("destination", reply_to), ("receipt", f"late{n}")],
                            f"too-late-{n}".encode())
            answers.append(late.read_frame())
    kept = [a for a in answers if a.command == "ERROR" and "full" in
            (a.header("message", "") + a.body.decode(errors="replace")).lower()]
    assert not kept, (f"replies to the closed temporary queue {reply_to} are being kept "
                      f"(a later one is refused as full): {answers!r}")
