"""Reading one value off the broker's Prometheus /metrics."""
import urllib.request


def metric(broker, name):
    """The value of the unlabelled sample `name`; fails if /metrics has none."""
    with urllib.request.urlopen(f"http://127.0.0.1:{broker.http_port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise AssertionError(f"no {name} in /metrics")
