"""Queues larger than memory (docs/storage.md, "Paging"): with a 1 MiB `[core]
memory_budget_bytes` and no memory limit, a backlog of persistent messages 100 times the budget
(in a queue and a durable subscription nobody consumes) is paged out of memory, survives a
SIGKILL, and is then drained by real clients: in priority order, nothing lost or duplicated,
expired ones gone, redelivered ones dead-lettered after max_deliveries. A consumer whose
selector matches nothing does not make the broker read the paged backlog on every dispatch.
The journal can scan, so these backlogs go into cold tails (docs/storage.md, "Cold tails: the
core"): the last test checks that their RSS does not grow with the backlog, before and after a
restart.
"""

import time
import uuid

import paho.mqtt.client as mqtt

from helpers.metrics import metric
from helpers.paging import BODY, body, expected_order, index, priority_of, send_numbered
from helpers.reliable import config, core, now_ms, policy, rss_bytes, wait_clock_past
from helpers.wait import wait_for

MiB = 1 << 20
BUDGET = 1 * MiB
COUNT = 6400  # 100 MiB of bodies: 100 times the budget


def paging_config(**extra):
    return config(core(memory_budget_bytes=BUDGET, sweep_interval_ms=200),
                  policy("queue:paging.>", max_deliveries=2, redelivery_delay_ms=0), *extra.values())


def fill(producer, destination, count, expires_every=0, expires_at=0):
    """Persistent messages 0..count-1, priorities in turn, every `expires_every`-th expiring."""
    def headers_of(i):
        headers = {"persistent": "true", "priority": priority_of(i)}
        if expires_every and i % expires_every == 0:
            headers["expires"] = str(expires_at)
        return headers
    send_numbered(producer, destination, range(count), headers_of)


def test_backlog_of_100_budgets_is_paged_survives_sigkill_and_drains_in_order(broker_factory, stomp_client):
    broker = broker_factory(config=paging_config())
    tag = uuid.uuid4().hex[:8]
    queue = f"/queue/paging.q{tag}"
    topic = f"/topic/paging.t{tag}"
    client_id = f"pager-{tag}"
    sub_name = f"s-{tag}"

    # The durable subscription exists, with nobody attached, before the messages arrive.
    subscriber = stomp_client(broker.port, connect_headers={"client-id": client_id})
    subscriber.subscribe(topic, headers={"activemq.subscriptionName": sub_name})
    subscriber.disconnect()

    # Every 10th expires soon: gone by the time the backlog is drained after the restart.
    expires_at = now_ms() + 20_000
    producer = stomp_client(broker.port)
    start_rss = rss_bytes(broker.proc.pid)
    fill(producer, f"{queue},{topic}", COUNT, expires_every=10, expires_at=expires_at)
    wait_for(lambda: metric(broker, "carrier_messages_paged_out_total") >= COUNT, timeout=60,
             message="the backlog to be paged out")
    rss = rss_bytes(broker.proc.pid)
    backlog = COUNT * BODY
    # Held in memory, the bodies alone would be 100 MiB: paged, the broker stays far below it.
    assert rss - start_rss < backlog // 2, \
        f"RSS grew by {(rss - start_rss) // MiB} MiB for a {backlog // MiB} MiB backlog"
    producer.disconnect()

    broker.kill()
    broker.start()
    wait_clock_past(expires_at, timeout=60)
    live = [i for i in range(COUNT) if i % 10 != 0]

    # The queue: a client-individual consumer NACKs the messages i % 97 == 5 each time (two
    # deliveries, then the DLQ); everything else arrives once, priority first, in order.
    nacked = {i for i in live if i % 97 == 5}
    consumer = stomp_client(broker.port)
    consumer.subscribe(queue, ack="client-individual", headers={"activemq.prefetchSize": "200"})
    got = []
    nacks = {}
    cursor = 0
    deadline = time.monotonic() + 240
    while (len(got) < len(live) - len(nacked) or sum(nacks.values()) < 2 * len(nacked)) \
            and time.monotonic() < deadline:
        frame = consumer.wait_messages(cursor + 1, timeout=60)[cursor]
        cursor += 1
        i = index(frame.body)
        if i in nacked:
            nacks[i] = nacks.get(i, 0) + 1
            consumer.nack(frame, wait=False)
        else:
            got.append(i)
            consumer.ack(frame, wait=False)
    assert len(got) == len(set(got)), "a message came twice"
    assert got == expected_order(set(live) - nacked), "out of order, lost, or an expired one delivered"
    assert nacks == {i: 2 for i in nacked}, "each nacked message is delivered max_deliveries times"

    dlq = stomp_client(broker.port)
    dlq.subscribe(f"/queue/DLQ.paging.q{tag}")
    dlq.wait_messages(len(nacked), timeout=60)
    assert sorted(index(f.body) for f in dlq.messages) == sorted(nacked)

    # The durable subscription, through MQTT? It is STOMP's: reattach by client-id and name.
    again = stomp_client(broker.port, connect_headers={"client-id": client_id})
    again.subscribe(topic, headers={"activemq.subscriptionName": sub_name})
    again.wait_messages(len(live), timeout=180)
    from_sub = [index(f.body) for f in again.messages[:len(live)]]
    assert from_sub == expected_order(live)
    assert metric(broker, "carrier_page_in_failures_total") == 0


def test_mqtt_persistent_session_backlog_is_paged_and_delivered(broker_factory, stomp_client):
    broker = broker_factory(config=paging_config())
    tag = uuid.uuid4().hex[:8]
    topic = f"paging/m{tag}"
    client_id = f"m-{tag}"
    got = []

    def on_message(client, userdata, msg):
        got.append(index(msg.payload.decode()))

    c = mqtt.Client(client_id=client_id, clean_session=False, protocol=mqtt.MQTTv311)
    c.on_message = on_message
    c.connect("127.0.0.1", broker.mqtt_port)
    c.loop_start()
    subscribed = []
    c.on_subscribe = lambda *a: subscribed.append(True)
    c.subscribe(topic, qos=1)
    wait_for(lambda: subscribed, timeout=10)
    c.disconnect()
    c.loop_stop()

    count = 2000  # 32 MiB: 32 budgets
    producer = stomp_client(broker.port)
    for start in range(0, count, 200):
        for i in range(start, min(count, start + 200) - 1):
            producer.send(f"/topic/paging.m{tag}", body(i), headers={"persistent": "true"}, wait=False)
        last = min(count, start + 200) - 1
        producer.send(f"/topic/paging.m{tag}", body(last), headers={"persistent": "true"}, timeout=60)
    wait_for(lambda: metric(broker, "carrier_messages_paged_out_total") >= count // 2, timeout=60)
    broker.kill()
    broker.start()

    c = mqtt.Client(client_id=client_id, clean_session=False, protocol=mqtt.MQTTv311)
    c.on_message = on_message
    c.connect("127.0.0.1", broker.mqtt_port)
    c.loop_start()
    try:
        wait_for(lambda: len(got) >= count, timeout=180, message=lambda: f"{len(got)} of {count}")
    finally:
        c.disconnect()
        c.loop_stop()
    assert sorted(got) == list(range(count))
    assert got == list(range(count)), "in order"


def test_selector_matching_nothing_does_not_reread_a_paged_backlog(broker_factory, stomp_client):
    broker = broker_factory(config=paging_config())
    tag = uuid.uuid4().hex[:8]
    queue = f"/queue/paging.sel{tag}"
    producer = stomp_client(broker.port)
    fill(producer, queue, 1500)  # 24 MiB
    wait_for(lambda: metric(broker, "carrier_messages_paged_out_total") >= 1000, timeout=60)

    picky = stomp_client(broker.port)
    picky.subscribe(queue, headers={"selector": "color = 'none'"})
    # The first match sits behind the whole backlog (priority 0: the lane dispatch walks last):
    # once it arrives, every paged message before it has been read back once and refused.
    first = body(200000)
    producer.send(queue, first, headers={"persistent": "true", "color": "none", "priority": "0"})
    picky.wait_messages(1, timeout=60)
    assert picky.messages[0].body == first
    once = metric(broker, "carrier_messages_paged_in_total")
    assert once >= 1000, "the paged backlog was read back to be evaluated"
    # Every further send is a dispatch: none reads the refused backlog again (only what is new).
    for i in range(50):
        producer.send(queue, body(100000 + i), headers={"persistent": "true", "color": "red", "priority": "0"})
    second = body(200001)
    producer.send(queue, second, headers={"persistent": "true", "color": "none", "priority": "0"})
    picky.wait_messages(2, timeout=60)
    assert picky.messages[1].body == second
    assert metric(broker, "carrier_messages_paged_in_total") - once < 200, "the backlog was read again"


def fill_small(producer, destination, start, count, size):
    """Persistent messages start..start+count-1 of `size` bytes, pipelined, one receipt per 500."""
    for first in range(start, start + count, 500):
        last = min(start + count, first + 500) - 1
        for i in range(first, last):
            head = f"{i:07d}:"
            producer.send(destination, head + "y" * (size - len(head)), headers={"persistent": "true"}, wait=False)
        head = f"{last:07d}:"
        producer.send(destination, head + "y" * (size - len(head)), headers={"persistent": "true"}, timeout=60)


def test_a_cold_backlog_costs_no_memory_per_message_before_and_after_a_restart(broker_factory, stomp_client):
    """docs/storage.md, "Cold tails: the core": past the budget a queue's tail keeps no state per
    message, so three times the messages hold the same core memory (paged entries would add 136
    bytes each to the gauge) and RSS grows by what the journal keeps per live message only
    (~36 bytes of liveness, ~24 of scan catalog), well under what paged entries alone would add;
    a restart folds the recovered summaries into cold tails, and the backlog then drains whole,
    in order, once each."""
    broker = broker_factory(config=paging_config())
    tag = uuid.uuid4().hex[:8]
    queue = f"/queue/paging.cold{tag}"
    step, size = 60_000, 512  # 30 MiB of bodies per step: 30 budgets
    producer = stomp_client(broker.port)

    def cold_at_least(n):
        wait_for(lambda: metric(broker, "carrier_messages_cold") >= n, timeout=120,
                 message=lambda: f"{metric(broker, 'carrier_messages_cold')} cold of {n}")

    fill_small(producer, queue, 0, step, size)
    cold_at_least(step * 9 // 10)
    rss_one = rss_bytes(broker.proc.pid)
    gauge_one = metric(broker, "carrier_memory_used_bytes")
    fill_small(producer, queue, step, 2 * step, size)
    cold_at_least(3 * step * 9 // 10)
    rss_three = rss_bytes(broker.proc.pid)
    gauge_three = metric(broker, "carrier_memory_used_bytes")
    assert metric(broker, "carrier_messages_ready") == 3 * step
    assert gauge_three - gauge_one < 64 * 1024, \
        f"the core's memory grew by {gauge_three - gauge_one} bytes for {2 * step} more cold messages"
    assert rss_three - rss_one < 2 * step * 136, \
        f"RSS grew by {(rss_three - rss_one) / MiB:.1f} MiB for {2 * step} more cold messages"
    producer.disconnect()

    broker.kill()
    broker.start()
    wait_for(lambda: metric(broker, "carrier_messages_ready") == 3 * step, timeout=120,
             message=lambda: f"{metric(broker, 'carrier_messages_ready')} ready after the restart")
    assert metric(broker, "carrier_messages_cold") >= 3 * step * 9 // 10, "recovered into cold tails"
    # The core holds nothing per recovered message (paged entries would be 136 bytes each: 24 MiB
    # in the gauge). RSS also has what recovery itself allocated (the store's index, buffers;
    # measured ~9 MiB over the RSS before the kill), so it is bounded below the paged cost.
    assert metric(broker, "carrier_memory_used_bytes") < 1 * MiB
    rss_restarted = rss_bytes(broker.proc.pid)
    assert rss_restarted < rss_three + 3 * step * 136, \
        f"restarted RSS {rss_restarted / MiB:.0f} MiB against {rss_three / MiB:.0f} MiB before the kill"

    consumer = stomp_client(broker.port)
    consumer.subscribe(queue, headers={"activemq.prefetchSize": "1000"})
    consumer.wait_messages(3 * step, timeout=240)
    got = [int(f.body.split(":", 1)[0]) for f in consumer.messages]
    assert len(got) == len(set(got)), "a message came twice"
    assert got == list(range(3 * step)), "lost or out of order"
    wait_for(lambda: metric(broker, "carrier_messages_ready") == 0, timeout=60)
    assert metric(broker, "carrier_page_in_failures_total") == 0
