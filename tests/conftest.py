"""Fixtures for the integration suite: the real `carrier` binary on free loopback ports with a
temp data dir (`broker`, `broker_factory`), real python3-stomp clients (`stomp_client`), a
per-test time limit, and the broker's log printed when a test fails.

Run with /usr/bin/python3 -m pytest (the pyenv python3 first on PATH cannot see Debian's
python3-stomp). CARRIER_BIN selects the binary; default <repo>/build/carrier.
"""

import signal
import threading
import uuid

import pytest
import stomp

from helpers import postgres
from helpers.broker import Broker, carrier_bin

DEFAULT_TEST_TIMEOUT = 60  # seconds; @pytest.mark.timeout(N) overrides


def pytest_configure(config):
    config.addinivalue_line("markers", "timeout(seconds): per-test time limit (SIGALRM)")


def pytest_collection_modifyitems(config, items):
    if not carrier_bin().exists():
        skip = pytest.mark.skip(reason=f"carrier binary not found at {carrier_bin()} "
                                       "(set CARRIER_BIN)")
        for item in items:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A hung socket or process must fail the test, not the whole ctest run."""
    marker = item.get_closest_marker("timeout")
    limit = int(marker.args[0]) if marker else DEFAULT_TEST_TIMEOUT

    def on_alarm(signum, frame):
        raise TimeoutError(f"test exceeded its {limit}s limit")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)


def _failed(request):
    return any(getattr(request.node, "rep_" + when, None) is not None
               and getattr(request.node, "rep_" + when).failed for when in ("setup", "call"))


# --- brokers ---------------------------------------------------------------------------------

class BrokerFactory:
    """Makes brokers in the test's temp dir; stops them all at teardown."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.brokers = []

    def __call__(self, start=True, **kwargs):
        broker = Broker(self.tmp_path / f"broker{len(self.brokers)}", **kwargs)
        self.brokers.append(broker)
        if start:
            broker.start()
        return broker


@pytest.fixture
def broker_factory(tmp_path, request):
    factory = BrokerFactory(tmp_path)
    yield factory
    crashed = [b for b in factory.brokers if b.crashed()]
    for broker in factory.brokers:
        try:
            broker.stop()
        except AssertionError as e:
            print(e)
    if _failed(request) or crashed:
        for broker in factory.brokers:
            print(f"===== carrier log ({broker.workdir}) =====\n{broker.all_logs()}")
    assert not crashed, "carrier died during the test: " + ", ".join(
        f"{b.workdir} exit {b.proc.returncode}" for b in crashed)


@pytest.fixture
def broker(broker_factory):
    """A running broker: STOMP on a free port, temp data dir, --shards 2, log store."""
    return broker_factory()


# --- python3-stomp clients -------------------------------------------------------------------

class StompClient(stomp.ConnectionListener):
    """A python3-stomp connection plus a listener that records what arrives, with bounded waits.

    stomp.py's own connect(wait=True) and disconnect(receipt) can block forever, so this
    wrapper waits on its own conditions instead.
    """

    CLASSES = {"1.0": stomp.StompConnection10, "1.1": stomp.StompConnection11,
               "1.2": stomp.StompConnection12}

    def __init__(self, port, version="1.2", auto_decode=True, heartbeats=None):
        self.version = version
        kwargs = dict(host_and_ports=[("127.0.0.1", port)], auto_decode=auto_decode,
                      reconnect_attempts_max=1, try_loopback_connect=False)
        if heartbeats is not None:
            kwargs["heartbeats"] = heartbeats
        self.conn = self.CLASSES[version](**kwargs)
        self.conn.set_listener("recorder", self)
        self.cond = threading.Condition()
        self.messages = []
        self.errors = []
        self.receipts = []
        self.connected_frame = None
        self.disconnected = False

    # listener callbacks (stomp.py's receiver thread)
    def on_connected(self, frame):
        with self.cond:
            self.connected_frame = frame
            self.cond.notify_all()

    def on_message(self, frame):
        with self.cond:
            self.messages.append(frame)
            self.cond.notify_all()

    def on_receipt(self, frame):
        with self.cond:
            self.receipts.append(frame.headers.get("receipt-id"))
            self.cond.notify_all()

    def on_error(self, frame):
        with self.cond:
            self.errors.append(frame)
            self.cond.notify_all()

    def on_disconnected(self):
        with self.cond:
            self.disconnected = True
            self.cond.notify_all()

    # waiting
    def _wait(self, predicate, timeout, what):
        with self.cond:
            ok = self.cond.wait_for(predicate, timeout)
        if not ok:
            what = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; "
                                 f"errors {self._errors()}")

    def _errors(self):
        return [(e.headers, e.body) for e in self.errors]

    def connect(self, timeout=5.0, with_connect_command=False, **headers):
        kwargs = {}
        if with_connect_command and self.version != "1.0":
            kwargs["with_connect_command"] = True
        self.conn.connect(wait=False, headers=headers or None, **kwargs)
        self._wait(lambda: self.connected_frame is not None or self.errors or self.disconnected,
                   timeout, "CONNECTED")
        assert self.connected_frame is not None, f"not connected: {self._errors()}"
        return self.connected_frame

    def wait_receipt(self, receipt, timeout=5.0):
        self._wait(lambda: receipt in self.receipts, timeout, f"RECEIPT {receipt}")

    def _receipt(self, wait):
        return f"r-{uuid.uuid4().hex[:12]}" if wait else None

    def send(self, destination, body, headers=None, wait=True, timeout=5.0):
        """SEND; with wait=True it carries a receipt and returns once the RECEIPT arrives."""
        headers = dict(headers or {})
        receipt = self._receipt(wait)
        if receipt:
            headers["receipt"] = receipt
        self.conn.send(destination, body, headers=headers)
        if receipt:
            self.wait_receipt(receipt, timeout)

    def send_many(self, destination, bodies, headers=None, timeout=20.0):
        """Pipelined SENDs, each with a receipt; returns once every RECEIPT has arrived."""
        receipts = []
        for body in bodies:
            h = dict(headers or {})
            h["receipt"] = self._receipt(True)
            receipts.append(h["receipt"])
            self.conn.send(destination, body, headers=h)
        wanted = set(receipts)
        self._wait(lambda: wanted.issubset(self.receipts), timeout,
                   lambda: f"{len(wanted - set(self.receipts))} of {len(wanted)} receipts")

    def subscribe(self, destination, id=None, ack="auto", headers=None, wait=True):
        headers = dict(headers or {})
        receipt = self._receipt(wait)
        if receipt:
            headers["receipt"] = receipt
        id = id or f"sub-{uuid.uuid4().hex[:8]}"
        self.conn.subscribe(destination, id=id, ack=ack, headers=headers)
        if receipt:
            self.wait_receipt(receipt)
        return id

    def unsubscribe(self, id, destination=None, wait=True):
        headers = {}
        receipt = self._receipt(wait)
        if receipt:
            headers["receipt"] = receipt
        if self.version == "1.0":
            self.conn.unsubscribe(destination=destination, id=id, headers=headers)
        else:
            self.conn.unsubscribe(id, headers=headers)
        if receipt:
            self.wait_receipt(receipt)

    def ack(self, message, transaction=None, wait=True):
        """ACK `message` the way its protocol version says (1.0 message-id, 1.1 message-id +
        subscription, 1.2 the MESSAGE's `ack` header)."""
        receipt = self._receipt(wait)
        h = message.headers
        if self.version == "1.0":
            self.conn.ack(h["message-id"], transaction=transaction, receipt=receipt)
        elif self.version == "1.1":
            self.conn.ack(h["message-id"], h["subscription"], transaction=transaction,
                          receipt=receipt)
        else:
            self.conn.ack(h["ack"], transaction=transaction, receipt=receipt)
        if receipt:
            self.wait_receipt(receipt)

    def nack(self, message, transaction=None, wait=True):
        receipt = self._receipt(wait)
        h = message.headers
        if self.version == "1.1":
            self.conn.nack(h["message-id"], h["subscription"], transaction=transaction,
                           receipt=receipt)
        else:
            self.conn.nack(h["ack"], transaction=transaction, receipt=receipt)
        if receipt:
            self.wait_receipt(receipt)

    def frame(self, command, headers=None, wait=True):
        """Any other frame (BEGIN, COMMIT, ABORT) with a receipt."""
        headers = dict(headers or {})
        receipt = self._receipt(wait)
        if receipt:
            headers["receipt"] = receipt
        self.conn.send_frame(command, headers)
        if receipt:
            self.wait_receipt(receipt)

    def wait_messages(self, count, timeout=10.0):
        """Waits until at least `count` messages arrived in total; returns a copy of them all."""
        self._wait(lambda: len(self.messages) >= count, timeout,
                   f"{count} messages (have {len(self.messages)})")
        with self.cond:
            return list(self.messages)

    def bodies(self):
        with self.cond:
            return [m.body for m in self.messages]

    def count(self):
        with self.cond:
            return len(self.messages)

    def disconnect(self, timeout=5.0):
        """DISCONNECT with a receipt (stomp.py closes the socket when it arrives)."""
        if self.conn.is_connected():
            self.conn.disconnect()
            self._wait(lambda: self.disconnected, timeout, "the DISCONNECT receipt and close")

    def drop(self):
        """Closes the socket without DISCONNECT (an abrupt client exit)."""
        self.conn.transport.disconnect_socket()
        self._wait(lambda: self.disconnected, 5.0, "the socket to close")

    def close_quietly(self):
        try:
            if self.conn.is_connected():
                self.disconnect(timeout=2.0)
        except Exception:
            pass
        try:
            if not self.disconnected:
                self.conn.transport.disconnect_socket()
        except Exception:
            pass


@pytest.fixture
def stomp_client():
    """Factory: stomp_client(broker_or_port, version="1.2", connect=True, **kwargs)."""
    clients = []

    def make(target, version="1.2", connect=True, connect_headers=None, **kwargs):
        port = getattr(target, "port", target)
        client = StompClient(port, version=version, **kwargs)
        clients.append(client)
        if connect:
            client.connect(**(connect_headers or {}))
        return client

    yield make
    for client in clients:
        client.close_quietly()


@pytest.fixture
def unique():
    """Factory for destination names unique to this test: unique('queue') -> /queue/t-ab12cd."""
    def make(kind="queue", suffix=""):
        return f"/{kind}/t{uuid.uuid4().hex[:10]}{suffix}"
    return make


@pytest.fixture(scope="module")
def postgres_server():
    """A throwaway PostgreSQL cluster for one test module (skipped without the server binaries)."""
    if not postgres.available():
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql)")
    server = postgres.PostgresServer()
    yield server
    server.destroy()
