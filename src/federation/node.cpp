#include "federation/node.hpp"

#include "base/logging.hpp"
#include "core/broker.hpp"
#include "federation/codec/message_payload.hpp"
#include "federation/forwarding_consumer.hpp"
#include "federation/link.hpp"
#include "federation/node_id.hpp"
#include "net/connection.hpp"

namespace carrier::federation {

namespace {

constexpr model::ShardId kHome{0};

std::shared_ptr<spdlog::logger> log() {
  static auto logger = logging::get("federation");
  return logger;
}

// Only named queues and topics are demand: temporary queues belong to one connection, and
// `$` names to the broker itself.
bool is_federated(const model::Destination& d) {
  return (d.kind == model::DestinationKind::queue || d.kind == model::DestinationKind::topic) && !d.name.empty() &&
         d.name.front() != '$';
}

}  // namespace

Node::Node(Options options, codec::Id128 id, net::ShardPool& pool, core::Broker& broker, auth::Authenticator& auth)
    : options_(std::move(options)),
      id_(id),
      pool_(pool),
      broker_(broker),
      auth_(auth),
      demand_(options_.ttl),
      dedup_(options_.dedup_window) {
  dialers_.reserve(options_.links.size());
  for (const auto& link : options_.links) {
    dialers_.push_back(Dialer{link, ReconnectBackoff(options_.reconnect_min_ms, options_.reconnect_max_ms), nullptr});
  }
}

Node::~Node() = default;

void Node::start() {
  log()->info("federation node {}: {} configured link(s)", to_hex(id_), dialers_.size());
  for (std::size_t i = 0; i < dialers_.size(); ++i) {
    dialers_[i].timer = std::make_unique<net::asio::steady_timer>(pool_.context(kHome));
    dial(i);
  }
}

void Node::dial(std::size_t index) {
  if (stopping_) return;
  auto& d = dialers_[index];
  boost::system::error_code ec;
  net::tcp::resolver resolver(pool_.context(kHome));
  auto endpoints = resolver.resolve(d.options.host, std::to_string(d.options.port), ec);
  if (ec || endpoints.empty()) {
    log()->warn("link '{}': cannot resolve {}: {}", d.options.name, d.options.host, ec.message());
    redial(index);
    return;
  }
  auto socket = std::make_shared<net::tcp::socket>(pool_.context(kHome));
  const net::tcp::endpoint target = *endpoints.begin();
  socket->async_connect(target, [this, index, socket](const boost::system::error_code& error) {
    if (stopping_) return;
    if (error) {
      log()->debug("link '{}': cannot connect: {}", dialers_[index].options.name, error.message());
      redial(index);
      return;
    }
    start_link(std::move(*socket), &dialers_[index].options);
  });
}

void Node::redial(std::size_t index) {
  if (stopping_) return;
  auto& d = dialers_[index];
  const auto delay = d.backoff.next_delay_ms();
  d.timer->expires_after(std::chrono::milliseconds(delay));
  d.timer->async_wait([this, index](const boost::system::error_code& ec) {
    if (!ec) dial(index);
  });
}

void Node::accept(net::tcp::socket socket) { start_link(std::move(socket), nullptr); }

void Node::start_link(net::tcp::socket socket, const LinkOptions* outbound) {
  auto connection = std::make_shared<net::Connection>(std::move(socket), kHome, "federation");
  const std::uint64_t id = next_link_++;
  const std::int32_t session = next_session_++;
  auto link = std::make_shared<Link>(connection, *this, id, session, outbound);
  links_.emplace(id, link);
  connection->start(link);
  link->begin();
}

void Node::consumer_added(const model::Destination& destination) {
  if (!is_federated(destination)) return;
  pool_.post(kHome, [this, destination] { local_demand(destination, true); });
}

void Node::consumer_removed(const model::Destination& destination) {
  if (!is_federated(destination)) return;
  pool_.post(kHome, [this, destination] { local_demand(destination, false); });
}

void Node::local_demand(const model::Destination& destination, bool added) {
  const auto key = destination.key();
  const bool changed = added ? demand_.add_local(key) : demand_.remove_local(key);
  if (!changed) return;
  log()->debug("local demand for {} {}", key, added ? "began" : "ended");
  demand_changed();
}

codec::RemoteNode Node::self_for(const Link& link) {
  auto demand = demand_.advertised_to(link.id());
  auto property = to_property(demand);
  advertised_[link.id()] = std::move(demand);
  return codec::RemoteNode{id_, std::move(property)};
}

bool Node::advertisement_changed(const Link& link) const {
  auto it = advertised_.find(link.id());
  return it == advertised_.end() || it->second != demand_.advertised_to(link.id());
}

void Node::link_up(Link& link) {
  for (auto& d : dialers_) {
    if (&d.options == link.outbound()) d.backoff.reset();
  }
}

void Node::link_closed(Link& link) {
  const std::uint64_t id = link.id();
  auto held = links_.find(id);
  if (held == links_.end()) return;
  auto keep = held->second;  // alive until this returns
  links_.erase(held);
  advertised_.erase(id);
  demand_.remove_peer(id);
  demand_changed();
  for (std::size_t i = 0; i < dialers_.size(); ++i) {
    if (&dialers_[i].options != link.outbound()) continue;
    if (link.is_up() && !link.misbehaved()) dialers_[i].backoff.reset();
    redial(i);
  }
}

void Node::peer_advertised(Link& link, Demand demand) {
  log()->debug("{} the far node has demand for {} destination(s)", link.log_prefix(), demand.size());
  demand_.set_peer(link.id(), std::move(demand));
  demand_changed();
}

void Node::demand_changed() {
  for (auto& [id, link] : links_) link->advertise();
  refresh_forwarding();
}

void Node::refresh_forwarding() {
  std::map<ForwardingKey, model::Destination> wanted;
  // A queue goes one way only: over the link nearest to a consumer (then the oldest link), so
  // its messages move closer at every hop and never bounce between nodes of a ring or a mesh.
  std::map<std::string, std::pair<std::int32_t, std::uint64_t>> nearest;  // key -> distance, link
  for (const auto& [id, link] : links_) {
    if (!link->is_up()) continue;
    for (const auto& [key, distance] : demand_.peer(id)) {
      auto d = model::Destination::from_key(key);
      if (!d || !is_federated(*d)) continue;
      // A queue stays with this node's own consumers while it has any.
      if (d->kind == model::DestinationKind::queue && demand_.local_count(key) > 0) continue;
      if (paused_.contains({link->peer_id(), key}) || paused_.contains({link->peer_id(), "*"})) continue;
      if (d->kind == model::DestinationKind::queue) {
        auto [best, added] = nearest.emplace(key, std::pair(distance, id));
        if (!added && std::pair(distance, id) < best->second) best->second = {distance, id};
      }
      wanted.emplace(ForwardingKey{id, key}, std::move(*d));
    }
  }
  std::erase_if(wanted, [&nearest](const auto& entry) {
    auto best = nearest.find(entry.first.second);
    return best != nearest.end() && best->second.second != entry.first.first;
  });
  for (auto it = forwarding_.begin(); it != forwarding_.end();) {
    if (wanted.contains(it->first)) {
      ++it;
      continue;
    }
    it->second.consumer->close();
    broker_.unsubscribe(it->second.id, nullptr);
    it = forwarding_.erase(it);
  }
  for (auto& [key, destination] : wanted) {
    if (forwarding_.contains(key)) continue;
    auto consumer = std::make_shared<ForwardingConsumer>(
        key.first, [this](std::uint64_t link, core::ConsumerId id, core::Delivery d) { forward(link, id, std::move(d)); });
    core::SubscribeRequest request;
    request.destination = destination;
    request.ack_mode = core::AckMode::client_individual;
    request.prefetch = options_.max_in_flight;
    request.consumer = consumer;
    request.bridge = true;
    auto id = broker_.subscribe(std::move(request), nullptr);
    if (!id) {
      log()->warn("cannot forward {}: {}", key.second, id.error().detail);
      continue;
    }
    log()->debug("forwarding {} over link {}", key.second, key.first);
    forwarding_.emplace(key, Forwarding{std::move(consumer), *id});
  }
}

void Node::forward(std::uint64_t link_id, core::ConsumerId consumer, core::Delivery delivery) {
  auto it = links_.find(link_id);
  // The link went: its consumer is being removed and the queue takes the message back.
  if (it == links_.end() || !it->second->is_up()) return;
  Link& link = *it->second;
  const model::Message& m = *delivery.message;
  HopInfo here{options_.ttl, 0, id_, id_, {}};
  const HopInfo* hop = dedup_.find(m.id);
  if (hop == nullptr) hop = &here;
  const bool topic = m.destination.kind == model::DestinationKind::topic;
  if (hop->ttl <= 0) {
    // No hop left: a topic copy is simply not forwarded; a queue message cannot wait for a
    // consumer here forever, so it goes the way of a rejected one (dead-letter queue or dropped).
    log()->debug("{} not forwarded, TTL exhausted: {} on {}", link.log_prefix(), m.id.to_string(), m.destination.key());
    settle(consumer, delivery.tag, topic);
    return;
  }
  // A topic message never goes back where it came from (the far side has it).
  if (topic && (hop->previous == link.peer_id() || hop->origin == link.peer_id())) {
    settle(consumer, delivery.tag, true);
    return;
  }
  codec::BasicMessage envelope;
  envelope.ttl = hop->ttl;
  envelope.hops = hop->hops;
  envelope.origin = hop->origin;
  envelope.previous = id_;
  envelope.stack = hop->stack;
  auto wrapped = codec::wrap_message(m, std::move(envelope));
  if (!wrapped) {
    log()->warn("{} cannot forward {}: {}", link.log_prefix(), m.id.to_string(), wrapped.error().detail);
    settle(consumer, delivery.tag, false);
    return;
  }
  codec::PushRequest push{std::move(*wrapped), {}, link.session()};
  link.push(std::move(push), [this, consumer, tag = delivery.tag, prefix = link.log_prefix()](const std::string& result) {
    if (result.starts_with("ok")) {
      settle(consumer, tag, true);
      return;
    }
    log()->warn("{} push refused: {}", prefix, result);
    settle(consumer, tag, false);
  });
}

void Node::settle(core::ConsumerId consumer, std::uint64_t tag, bool delivered) {
  if (delivered) {
    broker_.ack(consumer, {tag}, nullptr);
  } else {
    broker_.reject(consumer, {tag}, nullptr);
  }
}

void Node::set_paused(const codec::Id128& target, const std::string& selector, bool paused) {
  const bool changed = paused ? paused_.emplace(target, selector).second : paused_.erase({target, selector}) != 0;
  if (!changed) return;
  log()->info("forwarding of {} to node {} {}", selector, to_hex(target), paused ? "paused" : "resumed");
  refresh_forwarding();
}

void Node::on_push(Link& link, std::uint32_t request_id, codec::PushRequest request) {
  auto& basic = request.message;
  if (basic.ttl <= 0) {
    link.answer(request_id, "ok dropped: TTL 0");
    return;
  }
  auto message = codec::unwrap_message(basic);
  if (!message) {
    link.answer(request_id, "error: " + message.error().detail);
    return;
  }
  if (!is_federated(message->destination)) {
    link.answer(request_id, "error: only named queues and topics are forwarded");
    return;
  }
  if (auto st = broker_.check_destination(message->destination, false); !st) {
    link.answer(request_id, "error: " + st.error().detail);
    return;
  }
  HopInfo info{basic.ttl - 1, basic.hops + 1, basic.origin, link.peer_id(), std::move(basic.stack)};
  info.stack.push_back(link.session());
  // A stack at its limit could not be pushed again: the message stops here.
  if (info.stack.size() >= options_.limits.max_stack_entries) info.ttl = 0;
  const model::MessageId id = message->id;
  if (!dedup_.insert(id, std::move(info))) {
    link.answer(request_id, "ok duplicate");
    return;
  }
  auto ptr = std::make_shared<model::Message>(std::move(*message));
  ptr->origin = 0;
  std::weak_ptr<Link> weak = links_.contains(link.id()) ? links_[link.id()] : nullptr;
  broker_.send({std::move(ptr)}, [this, weak, request_id, id](Status st) {
    if (!st) dedup_.erase(id);  // not taken: a retry must be
    if (auto l = weak.lock()) l->answer(request_id, st ? std::string("ok") : "error: " + st.error().detail);
  });
}

}  // namespace carrier::federation
