"""Network namespaces a test makes for itself (`ip netns`, veth pairs): two namespaces joined
by one veth pair (`Pair`), or several in a line (`Line`), with a broker run inside each
(preexec_fn enters the namespace before exec) and clients whose sockets are made inside one (a
thread that entered it: a network namespace is per thread). Nothing outside the namespaces made
here is touched.

Impairments: `tc netem` where the kernel has sch_netem (many do not); packet loss with
nftables' `numgen random` (the kernel's random statistic, which works without netem: real
packets dropped inside the namespace, so TCP retransmits as over a lossy network); delay with
`helpers.delay_proxy` where netem is missing."""

import ctypes
import os
import shutil
import subprocess
import threading
import uuid

import pytest

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10, check=check)


def enter(name):
    """Moves the calling thread (or, in preexec_fn, the child process) into namespace `name`."""
    fd = os.open(f"/var/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {name}")
    finally:
        os.close(fd)


def drop_randomly(ns, dev, percent):
    """Drops `percent` % of the packets that arrive on `dev` in namespace `ns`, at random (an
    nftables table of its own there, with a counter). None, or why it cannot (no `nft`)."""
    if shutil.which("nft") is None:
        return "no nft (Debian package nftables)"
    table = f"""table inet carrier_loss {{
  chain input {{
    type filter hook input priority 0; policy accept;
    iifname "{dev}" numgen random mod 100 < {int(percent)} counter drop
  }}
}}
"""
    subprocess.run(["ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "carrier_loss"],
                   capture_output=True, timeout=10)
    if percent <= 0:
        return None
    r = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=table, capture_output=True,
                       text=True, timeout=10)
    return None if r.returncode == 0 else f"nft: {r.stderr.strip()}"


def dropped_packets(ns):
    """How many packets drop_randomly's rule has dropped in namespace `ns` so far."""
    r = subprocess.run(["ip", "netns", "exec", ns, "nft", "list", "table", "inet", "carrier_loss"],
                       capture_output=True, text=True, timeout=10)
    total = 0
    for line in r.stdout.splitlines():
        words = line.split()
        if "counter" in words and "packets" in words:
            total += int(words[words.index("packets") + 1])
    return total


class _Namespaces:
    """Namespaces made for one test, removed by close()."""

    def __init__(self):
        self.tag = uuid.uuid4().hex[:6]
        self.made = []

    def add(self, name):
        r = _ip("netns", "add", name, check=False)
        if r.returncode != 0:
            self.close()
            pytest.skip(f"cannot make a network namespace here (ip netns add: {r.stderr.strip()})")
        self.made.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def veth(self, ns1, dev1, addr1, ns2, dev2, addr2):
        # The pair is made inside ns1, then one end moved to ns2: the host's own namespace
        # never holds either end.
        _ip("-n", ns1, "link", "add", dev1, "type", "veth", "peer", "name", dev2)
        _ip("-n", ns1, "link", "set", dev2, "netns", ns2)
        for ns, dev, addr in ((ns1, dev1, addr1), (ns2, dev2, addr2)):
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")

    def preexec(self, name):
        return lambda: enter(name)

    def run_in(self, name, fn, timeout=30.0):
        """fn() in a thread inside namespace `name`; its result (sockets it makes stay there)."""
        result = {}

        def body():
            try:
                enter(name)
                result["value"] = fn()
            except BaseException as e:  # handed to the caller
                result["error"] = e
        t = threading.Thread(target=body, daemon=True)
        t.start()
        t.join(timeout)
        assert not t.is_alive(), f"{fn} did not finish within {timeout}s in {name}"
        if "error" in result:
            raise result["error"]
        return result.get("value")

    def close(self):
        for ns in reversed(self.made):
            _ip("netns", "del", ns, check=False)
        self.made.clear()


class Pair(_Namespaces):
    """Namespaces `a` and `b`, veth `a_dev` (10.77.0.1) in a and `b_dev` (10.77.0.2) in b."""

    A_ADDR, B_ADDR = "10.77.0.1", "10.77.0.2"

    def __init__(self):
        super().__init__()
        tag = self.tag
        self.a, self.b = f"cfa{tag}", f"cfb{tag}"
        self.a_dev, self.b_dev = f"va{tag}", f"vb{tag}"
        self.add(self.a)
        self.add(self.b)
        self.veth(self.a, self.a_dev, self.A_ADDR, self.b, self.b_dev, self.B_ADDR)

    def loss(self, percent):
        """Packet loss both ways (drop_randomly on both ends); None, or why not."""
        return drop_randomly(self.a, self.a_dev, percent) or drop_randomly(self.b, self.b_dev, percent)

    def link(self, up):
        """Takes the veth pair down (a cut: no packet passes, no connection is told) or up."""
        _ip("-n", self.a, "link", "set", self.a_dev, "up" if up else "down")

    def netem(self, *spec):
        """tc netem on both ends (e.g. "delay", "20ms", "loss", "5%"); no spec: removed. Returns
        None, or why netem is not there (a kernel without sch_netem): the caller goes on over
        the plain veth and says so."""
        for ns, dev in ((self.a, self.a_dev), (self.b, self.b_dev)):
            subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", dev, "root"],
                           capture_output=True, timeout=10)
            if spec:
                r = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "netem",
                                    *spec], capture_output=True, text=True, timeout=10)
                if r.returncode != 0:
                    return f"tc netem {' '.join(spec)}: {r.stderr.strip()}"
        return None


class Line(_Namespaces):
    """`count` namespaces in a line (`names[0]` … `names[count-1]`), each joined to the next by a
    veth pair. Hop i (between names[i] and names[i+1]) is 10.78.i.0/24: names[i] is 10.78.i.1
    there (`left(i)`), names[i+1] is 10.78.i.2 (`right(i)`). No routing: a namespace reaches
    only its neighbours, as a node of a federated line needs."""

    def __init__(self, count=3):
        super().__init__()
        self.names = [f"cl{i}{self.tag}" for i in range(count)]
        self.devs = [(f"vl{i}{self.tag}", f"vr{i}{self.tag}") for i in range(count - 1)]
        for name in self.names:
            self.add(name)
        for i, (left_dev, right_dev) in enumerate(self.devs):
            self.veth(self.names[i], left_dev, self.left(i), self.names[i + 1], right_dev, self.right(i))

    @staticmethod
    def left(hop):
        return f"10.78.{hop}.1"

    @staticmethod
    def right(hop):
        return f"10.78.{hop}.2"

    def loss(self, hop, percent):
        """Packet loss both ways on one hop; None, or why not."""
        left_dev, right_dev = self.devs[hop]
        return (drop_randomly(self.names[hop], left_dev, percent)
                or drop_randomly(self.names[hop + 1], right_dev, percent))

    def dropped(self, hop):
        return dropped_packets(self.names[hop]) + dropped_packets(self.names[hop + 1])
