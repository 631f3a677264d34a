"""Numbered 16 KiB messages for the paging tests (test_paging_*.py): bodies that say their number,
priorities in turn, pipelined sends, and the order a priority queue hands them back in."""

BODY = 16 * 1024
PRIORITIES = (1, 4, 8)


def body(i):
    head = f"{i:06d}:"
    return head + "x" * (BODY - len(head))


def index(frame_body):
    return int(frame_body.split(":", 1)[0])


def priority_of(i):
    return str(PRIORITIES[i % len(PRIORITIES)])


def send_numbered(producer, destination, numbers, headers_of):
    """Message i with `headers_of(i)` for each of `numbers`, pipelined 200 at a time: one receipt
    per SEND, the last of each 200 waited for, so the broker reads while it writes."""
    numbers = list(numbers)
    for start in range(0, len(numbers), 200):
        chunk = numbers[start:start + 200]
        for i in chunk[:-1]:
            producer.send(destination, body(i), headers=headers_of(i), wait=False)
        producer.send(destination, body(chunk[-1]), headers=headers_of(chunk[-1]), timeout=60)


def expected_order(indices):
    """Priority 8 first, then 4, then 1; arrival order within each."""
    by_priority = {p: [] for p in PRIORITIES}
    for i in sorted(indices):
        by_priority[PRIORITIES[i % len(PRIORITIES)]].append(i)
    return [i for p in sorted(PRIORITIES, reverse=True) for i in by_priority[p]]
