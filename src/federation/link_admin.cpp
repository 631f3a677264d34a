// Node's links at runtime (added and removed by an operator) and what the admin API and
// /metrics report of them (protocol/federation_links.hpp, docs/federation.md).
#include "base/logging.hpp"
#include "federation/link.hpp"
#include "federation/node.hpp"
#include "federation/node_id.hpp"
#include "federation/log.hpp"

namespace carrier::federation {

namespace {

constexpr model::ShardId kTimerShard{0};
// Outbound links a node keeps, configured and added: each is a dialler, a socket and a line of
// metrics; an operator script gone wrong must not add them without end.
constexpr std::size_t kMaxOutboundLinks = 1000;

}  // namespace

protocol::FederationLinks::Report Node::report() const {
  using Links = protocol::FederationLinks;
  Links::Report r;
  r.node_id = to_hex(id_);
  r.dedup_size = dedup_.size();
  r.dedup_hits = dedup_.duplicates();
  r.reply_routes = replies_.size();
  std::map<std::uint64_t, std::size_t> forwarded;  // link id -> destinations
  for (const auto& [key, f] : forwarding_) ++forwarded[key.first];
  auto describe = [&](const Link& link, Links::Link& out) {
    out.state = link.is_up() ? "up" : "handshake";
    if (link.is_up()) out.peer_node = to_hex(link.peer_id());
    out.session = link.session();
    const auto& c = link.counters();
    out.pushed = c.pushed;
    out.push_failures = c.push_failures;
    out.received = c.received;
    out.replies_sent = c.replies_sent;
    out.bytes_in = c.bytes_in;
    out.bytes_out = c.bytes_out;
    out.in_flight = link.in_flight();
    out.throttled = link.throttled();
    out.forwarding = forwarded.contains(link.id()) ? forwarded.at(link.id()) : 0;
    out.demand = demand_.peer(link.id()).size();
    out.max_rate = link.max_rate();
    out.max_rate_unit = link.max_rate_unit() == codec::RateUnit::messages_per_second ? "messages/s" : "bits/s";
    if (link.is_up()) {
      for (const auto& [target, selector] : paused_) {
        if (target == link.peer_id()) out.paused.push_back(selector);
      }
    }
  };
  for (const auto& d : dialers_) {
    Links::Link out;
    out.name = d->options.name;
    out.direction = "outbound";
    out.connect = d->options.host + ":" + std::to_string(d->options.port);
    out.tls = d->options.tls.enabled;
    out.state = "connecting";
    for (const auto& [id, link] : links_) {
      if (link->outbound() == &d->options && !link->is_closed()) describe(*link, out);
    }
    r.links.push_back(std::move(out));
  }
  for (const auto& [id, link] : links_) {
    if (link->outbound() != nullptr || link->is_closed()) continue;
    Links::Link out;
    out.name = link->name();
    out.direction = "inbound";
    out.connect = link->name();
    out.tls = tls_ != nullptr;
    describe(*link, out);
    r.links.push_back(std::move(out));
  }
  return r;
}

Status Node::add_link(LinkOptions link) {
  if (stopping_) return unexpected(Errc::shutting_down, "the broker is stopping");
  if (dialers_.size() >= kMaxOutboundLinks) {
    return unexpected(Errc::limit_exceeded, "this node already dials " + std::to_string(kMaxOutboundLinks) +
                                                " links, the most it keeps");
  }
  if (auto problem = link_tls_problem(link.tls); !problem.empty()) return unexpected(Errc::invalid_argument, problem);
  for (const auto& d : dialers_) {
    if (d->options.name == link.name) {
      return unexpected(Errc::already_exists, "a link named '" + link.name + "' exists");
    }
  }
  auto d = std::make_shared<Dialer>(
      Dialer{std::move(link), ReconnectBackoff(options_.reconnect_min_ms, options_.reconnect_max_ms), nullptr});
  d->timer = std::make_unique<net::asio::steady_timer>(pool_.context(kTimerShard));
  dialers_.push_back(d);
  log()->info("link '{}' to {}:{}{} added", d->options.name, d->options.host, d->options.port,
              d->options.tls.enabled ? " (TLS)" : "");
  dial(d);
  return ok();
}

Status Node::remove_link(const std::string& name) {
  auto it = std::find_if(dialers_.begin(), dialers_.end(), [&](const auto& d) { return d->options.name == name; });
  if (it == dialers_.end()) return unexpected(Errc::not_found, "no link named '" + name + "'");
  auto d = *it;
  dialers_.erase(it);
  d->removed = true;
  d->timer->cancel();
  std::vector<std::shared_ptr<Link>> open;
  for (const auto& [id, link] : links_) {
    if (link->outbound() == &d->options) open.push_back(link);
  }
  for (auto& link : open) link->close("removed by an operator");
  log()->info("link '{}' removed", name);
  return ok();
}

}  // namespace carrier::federation
