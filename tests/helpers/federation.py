"""Federated `carrier` nodes for the test_federation_*.py files: each node listens for links on
a free loopback port and dials the links it is given, with short reconnect back-offs."""

import uuid

from helpers.broker import free_port
from helpers.wait import wait_for


class Node:
    """A broker (from broker_factory) plus its federation port; `links` are the nodes it dials."""

    def __init__(self, factory, name, links=(), ttl=None, extra="", link_extra="", users=None, acl=None,
                 host="127.0.0.1", **broker_kwargs):
        """`extra`: more [federation] keys; `link_extra`: more keys for each [[federation.link]];
        `users`: users-file lines (then the node checks credentials, anonymous clients allowed);
        `acl`: the ACL file's text (with `users`); `host`: the address links are accepted on;
        `broker_kwargs` go to the factory (preexec_fn to run it in a network namespace)."""
        self.name = name
        self.host = host
        self.fed_port = free_port()
        text = "[federation]\n" + f'listen = "{host}:{self.fed_port}"\n'
        text += "reconnect_min_ms = 50\nreconnect_max_ms = 500\n"
        if ttl is not None:
            text += f"ttl = {ttl}\n"
        text += extra
        for target in links:
            text += ("[[federation.link]]\n" f'name = "{name}-{target.name}"\n'
                     f'connect = "{target.host}:{target.fed_port}"\n' + link_extra)
        if users is not None:
            text += '[auth]\nusers_file = "users.txt"\nanonymous = true\nfailure_delay_ms = 0\n'
            if acl is not None:
                text += 'acl_file = "acl.txt"\n'
        elif not host.startswith("127."):
            # Inside a namespace the test made: no user, and anyone the veth reaches may link.
            text += "[auth]\nallow_anonymous = true\n"
        self.broker = factory(start=False, config=text, **broker_kwargs)
        if users is not None:
            (self.broker.workdir / "users.txt").write_text("\n".join(users) + "\n")
        if acl is not None:
            (self.broker.workdir / "acl.txt").write_text(acl)
        self.broker.start()

    def established(self):
        """How many links this node's current process has established."""
        return self.broker.log(10000).count("established with node")


def start_line(factory, names, **kwargs):
    """Nodes in a line, each dialling the one before it: A <- B <- C."""
    nodes = []
    for name in names:
        nodes.append(Node(factory, name, links=nodes[-1:], **kwargs))
    return nodes


def wait_links(node, count, timeout=10.0):
    wait_for(lambda: node.established() >= count, timeout,
             lambda: f"{count} link(s) established on {node.name}:\n{node.broker.log()}")


def bodies(client, prefix=""):
    return [m.body for m in client.messages if m.body.startswith(prefix)]


def probe_until_received(producer, consumer, destination, timeout=15.0):
    """Topics forward only once the far side's demand has arrived: sends probes until one gets
    through (the probes are told apart from the test's messages by their prefix)."""
    def arrived():
        producer.send(destination, "probe-" + uuid.uuid4().hex[:6], wait=False)
        return bodies(consumer, "probe-")
    wait_for(arrived, timeout, f"a probe on {destination} to get through", interval=0.1)
