"""Network namespaces a test makes for itself (`ip netns`, a veth pair, `tc netem`): two
namespaces joined by one veth pair, with a broker run inside each (preexec_fn enters the
namespace before exec) and clients whose sockets are made inside one (a thread that entered it:
a network namespace is per thread). Nothing outside the namespaces made here is touched."""

import ctypes
import os
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


class Pair:
    """Namespaces `a` and `b`, veth `a_dev` (10.77.0.1) in a and `b_dev` (10.77.0.2) in b."""

    A_ADDR, B_ADDR = "10.77.0.1", "10.77.0.2"

    def __init__(self):
        tag = uuid.uuid4().hex[:6]
        self.a, self.b = f"cfa{tag}", f"cfb{tag}"
        self.a_dev, self.b_dev = f"va{tag}", f"vb{tag}"
        self.made = []
        r = _ip("netns", "add", self.a, check=False)
        if r.returncode != 0:
            pytest.skip(f"cannot make a network namespace here (ip netns add: {r.stderr.strip()})")
        self.made.append(self.a)
        _ip("netns", "add", self.b)
        self.made.append(self.b)
        # The pair is made inside namespace a, then one end moved to b: the host's own
        # namespace never holds either end.
        _ip("-n", self.a, "link", "add", self.a_dev, "type", "veth", "peer", "name", self.b_dev)
        _ip("-n", self.a, "link", "set", self.b_dev, "netns", self.b)
        for ns, dev, addr in ((self.a, self.a_dev, self.A_ADDR), (self.b, self.b_dev, self.B_ADDR)):
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            _ip("-n", ns, "link", "set", "lo", "up")

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

    def close(self):
        for ns in reversed(self.made):
            _ip("netns", "del", ns, check=False)
        self.made.clear()
