"""Real MQTT clients for the integration tests: Debian's python3-paho-mqtt 1.6.1 (MQTT 3.1, 3.1.1
and 5.0) behind bounded waits, and mosquitto_pub / mosquitto_sub (mosquitto-clients).

Test modules import the fixtures they use (`from helpers.mqtt_clients import mqtt_client`);
pytest finds fixtures imported into a module.
"""

import subprocess
import threading
import uuid

import paho.mqtt.client as paho
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

VERSIONS = {"3.1": paho.MQTTv31, "3.1.1": paho.MQTTv311, "5": paho.MQTTv5}


def props(packet_type, **values):
    """paho Properties for a packet type: props(PacketTypes.PUBLISH, ContentType="x")."""
    p = Properties(packet_type)
    for k, v in values.items():
        setattr(p, k, v)
    return p


def code(rc):
    """An int from paho's int or ReasonCodes."""
    return rc if isinstance(rc, int) else rc.value


class MqttClient:
    """One paho connection with a recorder and bounded waits. No automatic reconnect: a test
    decides when to connect again."""

    def __init__(self, port, client_id=None, version="3.1.1", clean=True, websocket_path=None):
        """`websocket_path`: MQTT over a WebSocket at that path of `port` (paho's transport)."""
        self.port = port
        self.version = version
        self.client_id = client_id if client_id is not None else f"c-{uuid.uuid4().hex[:10]}"
        kwargs = dict(client_id=self.client_id, protocol=VERSIONS[version], reconnect_on_failure=False)
        if websocket_path is not None:
            kwargs["transport"] = "websockets"
        if version != "5":
            kwargs["clean_session"] = clean
        self.clean = clean
        self.client = paho.Client(**kwargs)
        if websocket_path is not None:
            self.client.ws_set_options(path=websocket_path)
        self.cond = threading.Condition()
        self.messages = []
        self.connack = None
        self.disconnects = []  # reason codes (ints)
        self.disconnect_props = []
        self.subacks = {}
        self.unsubacks = {}
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = self._on_disconnect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_unsubscribe = self._on_unsubscribe
        self.started = False

    # callbacks (paho's network thread)
    def _on_connect(self, client, userdata, flags, rc, properties=None):
        with self.cond:
            self.connack = {"flags": flags, "rc": code(rc), "props": properties}
            self.cond.notify_all()

    def _on_message(self, client, userdata, msg):
        with self.cond:
            self.messages.append(msg)
            self.cond.notify_all()

    def _on_disconnect(self, client, userdata, rc, properties=None):
        with self.cond:
            self.disconnects.append(code(rc))
            self.disconnect_props.append(properties)
            self.cond.notify_all()

    def _on_subscribe(self, client, userdata, mid, granted, properties=None):
        with self.cond:
            self.subacks[mid] = [code(g) for g in granted]
            self.cond.notify_all()

    def _on_unsubscribe(self, client, userdata, mid, *rest):
        with self.cond:
            self.unsubacks[mid] = rest
            self.cond.notify_all()

    def _wait(self, predicate, timeout, what):
        with self.cond:
            ok = self.cond.wait_for(predicate, timeout)
        if not ok:
            raise AssertionError(f"timed out after {timeout}s waiting for {what() if callable(what) else what}; "
                                 f"disconnects {self.disconnects}")

    def connect(self, keepalive=60, properties=None, clean=None, will=None, username=None, password=None,
                timeout=5.0, expect_rc=0):
        """CONNECT and wait for CONNACK; returns {'flags', 'rc', 'props'}."""
        if will:
            self.client.will_set(**will)
        if username is not None:
            self.client.username_pw_set(username, password)
        self.connack = None
        kwargs = dict(keepalive=keepalive)
        if self.version == "5":
            kwargs["clean_start"] = self.clean if clean is None else clean
            if properties is not None:
                kwargs["properties"] = properties
        self.client.connect("127.0.0.1", self.port, **kwargs)
        if not self.started:
            self.client.loop_start()
            self.started = True
        self._wait(lambda: self.connack is not None or self.disconnects, timeout, "CONNACK")
        assert self.connack is not None, f"no CONNACK, disconnects {self.disconnects}"
        if expect_rc is not None:
            assert self.connack["rc"] == expect_rc, f"CONNACK {self.connack}"
        return self.connack

    def reconnect(self, **kwargs):
        """Connects again with the same client (after a disconnect): a new network loop."""
        self.stop_loop()
        self.disconnects.clear()
        return self.connect(**kwargs)

    def subscribe(self, topic, qos=0, options=None, properties=None, timeout=5.0):
        """SUBSCRIBE one filter (or a list of (filter, qos)) and wait for SUBACK; returns codes."""
        if options is not None:
            rc, mid = self.client.subscribe(topic, options=options, properties=properties)
        elif properties is not None:
            rc, mid = self.client.subscribe(topic, qos, properties=properties)
        else:
            rc, mid = self.client.subscribe(topic, qos)
        assert rc == paho.MQTT_ERR_SUCCESS, rc
        self._wait(lambda: mid in self.subacks, timeout, f"SUBACK {mid}")
        return self.subacks[mid]

    def unsubscribe(self, topic, timeout=5.0):
        rc, mid = self.client.unsubscribe(topic)
        assert rc == paho.MQTT_ERR_SUCCESS, rc
        self._wait(lambda: mid in self.unsubacks, timeout, f"UNSUBACK {mid}")
        return self.unsubacks[mid]

    def publish(self, topic, payload, qos=0, retain=False, properties=None, wait=True, timeout=5.0):
        """PUBLISH; with wait=True returns once the QoS flow is done (PUBACK / PUBCOMP)."""
        info = self.client.publish(topic, payload, qos=qos, retain=retain, properties=properties)
        if wait:
            info.wait_for_publish(timeout)
            assert info.is_published(), f"PUBLISH to {topic} not acknowledged within {timeout}s"
        return info

    def wait_messages(self, count, timeout=10.0):
        self._wait(lambda: len(self.messages) >= count, timeout,
                   lambda: f"{count} messages (have {len(self.messages)}: {self.payloads()})")
        with self.cond:
            return list(self.messages)

    def payloads(self):
        with self.cond:
            return [m.payload for m in self.messages]

    def count(self):
        with self.cond:
            return len(self.messages)

    def wait_disconnected(self, timeout=5.0):
        """Waits for the connection to end; returns the reason (paho rc, or MQTT 5 reason code)."""
        self._wait(lambda: self.disconnects, timeout, "the connection to end")
        return self.disconnects[-1]

    def disconnect(self, reasoncode=None, properties=None):
        if self.version == "5" and (reasoncode is not None or properties is not None):
            from paho.mqtt.reasoncodes import ReasonCodes
            rc = ReasonCodes(PacketTypes.DISCONNECT, identifier=reasoncode or 0)
            self.client.disconnect(reasoncode=rc, properties=properties)
        else:
            self.client.disconnect()
        self.wait_disconnected()

    def drop(self):
        """Closes the socket without DISCONNECT: an abnormal end (the will is published)."""
        sock = self.client.socket()
        if sock is not None:
            import socket as _socket
            try:
                sock.shutdown(_socket.SHUT_RDWR)
            except OSError:
                pass
        self.wait_disconnected()

    def stop_loop(self):
        if self.started:
            self.client.loop_stop()
            self.started = False

    def close_quietly(self):
        try:
            if self.client.is_connected():
                self.client.disconnect()
        except Exception:
            pass
        try:
            self.stop_loop()
        except Exception:
            pass


@pytest.fixture
def mqtt_client():
    """Factory: mqtt_client(broker_or_port, version="3.1.1", client_id=None, clean=True,
    connect=True, **connect_kwargs)."""
    clients = []

    def make(target, version="3.1.1", client_id=None, clean=True, connect=True, **kwargs):
        port = getattr(target, "mqtt_port", target)
        c = MqttClient(port, client_id=client_id, version=version, clean=clean)
        clients.append(c)
        if connect:
            c.connect(**kwargs)
        return c

    yield make
    for c in clients:
        c.close_quietly()


def unique_topic(prefix="t"):
    return f"{prefix}{uuid.uuid4().hex[:10]}"


# --- mosquitto-clients -----------------------------------------------------------------------

MOSQUITTO_VERSIONS = {"3.1": "mqttv31", "3.1.1": "mqttv311", "5": "mqttv5"}


def mosquitto_pub(port, topic, message, qos=0, version="3.1.1", retain=False, extra=(), timeout=10):
    args = ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-V", MOSQUITTO_VERSIONS[version],
            "-t", topic, "-m", message, "-q", str(qos)]
    if retain:
        args.append("-r")
    return subprocess.run(args + list(extra), capture_output=True, text=True, timeout=timeout)


def start_mosquitto_sub(port, topic, count, qos=0, version="3.1.1", wait_seconds=10, extra=()):
    """mosquitto_sub -C count -W wait_seconds -v: prints '<topic> <payload>' lines, then exits."""
    args = ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-V", MOSQUITTO_VERSIONS[version],
            "-t", topic, "-q", str(qos), "-C", str(count), "-W", str(wait_seconds), "-v"]
    return subprocess.Popen(args + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
