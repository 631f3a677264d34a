"""[core] memory_budget_bytes changes on SIGHUP (docs/configuration.md, "Reloading"; docs/storage.md,
"Paging"): a backlog held in memory under a large budget goes cold once the budget is lowered,
without a restart, and drains whole and in order once it is raised again."""

import uuid

from helpers.metrics import metric
from helpers.reliable import config, core
from helpers.wait import wait_for

from test_ops_reload import reload, serving, start

MiB = 1 << 20
BODY = 16 * 1024
COUNT = 800  # 12.5 MiB of bodies


def budget(n):
    return config('log_level = "info"\n', core(memory_budget_bytes=n))


def body(i):
    head = f"{i:06d}:"
    return head + "x" * (BODY - len(head))


def test_a_lowered_budget_pages_out_live_and_a_raised_one_drains_whole(broker_factory, stomp_client):
    b = start(serving(broker_factory, budget(256 * MiB)))
    queue = f"/queue/reload.{uuid.uuid4().hex[:8]}"
    producer = stomp_client(b.port)
    for i in range(COUNT - 1):
        producer.send(queue, body(i), headers={"persistent": "true"}, wait=False)
    producer.send(queue, body(COUNT - 1), headers={"persistent": "true"}, timeout=60)
    assert metric(b, "carrier_messages_cold") == 0, "under the budget: held in memory"

    out = reload(b, budget(1 * MiB), f"SIGHUP: core.memory_budget_bytes {1 * MiB} (was {256 * MiB})")
    assert "cannot change while running" not in out
    wait_for(lambda: metric(b, "carrier_messages_cold") >= COUNT * 8 // 10, timeout=60,
             message=lambda: f"{metric(b, 'carrier_messages_cold')} of {COUNT} cold after the budget was lowered")

    reload(b, budget(256 * MiB), f"SIGHUP: core.memory_budget_bytes {256 * MiB} (was {1 * MiB})")
    consumer = stomp_client(b.port)
    consumer.subscribe(queue)
    consumer.wait_messages(COUNT, timeout=120)
    got = [int(f.body.split(":", 1)[0]) for f in consumer.messages]
    assert got == list(range(COUNT)), "lost, duplicated or out of order"
    assert metric(b, "carrier_messages_cold") == 0
