#include "federation/node.hpp"

#include <algorithm>

#include "base/logging.hpp"
#include "core/broker.hpp"
#include "core/disk_alarm.hpp"
#include "core/memory_gauge.hpp"
#include "federation/codec/message_payload.hpp"
#include "federation/forwarding_consumer.hpp"
#include "federation/link.hpp"
#include "federation/node_id.hpp"
#include "federation/seen_record.hpp"
#include "net/connection.hpp"
#include "federation/log.hpp"

namespace carrier::federation {

namespace {

constexpr model::ShardId kHome{0};

// Only named queues and topics are demand: temporary queues belong to one connection, and
// `$` names to the broker itself.
bool is_federated(const model::Destination& d) {
  return (d.kind == model::DestinationKind::queue || d.kind == model::DestinationKind::topic) && !d.name.empty() &&
         d.name.front() != '$';
}

}  // namespace

Node::Node(Options options, codec::Id128 id, net::ShardPool& pool, core::Broker& broker, auth::Authenticator& auth,
           std::shared_ptr<net::TlsServer> tls)
    : options_(std::move(options)),
      id_(id),
      pool_(pool),
      broker_(broker),
      auth_(auth),
      tls_(std::move(tls)),
      demand_(options_.ttl),
      dedup_(options_.dedup_window),
      replies_(options_.reply_routes, std::chrono::milliseconds(options_.reply_route_idle_ms)),
      reply_prefix_("carrier-" + to_hex(id) + ".") {
  for (const auto& link : options_.links) {
    dialers_.push_back(std::make_shared<Dialer>(
        Dialer{link, ReconnectBackoff(options_.reconnect_min_ms, options_.reconnect_max_ms), nullptr}));
  }
}

Node::~Node() = default;

void Node::remember(const model::MessageId& id) {
  dedup_.insert(id, HopInfo{options_.ttl, 0, id_, id_, {}, {}}, &stale_seen_);
}

void Node::restore_seen(const model::Message& record) {
  auto seen = decode_seen(record);
  if (!seen) {
    log()->warn("a {} record that does not decode is dropped: {}", kSeenQueue, record.id.to_string());
    stale_seen_.push_back(record.id);
    return;
  }
  // The message itself may have been recovered first (remember): the record has its route.
  if (auto* held = dedup_.find(seen->message)) {
    if (!held->record.is_nil() && held->record != seen->info.record) stale_seen_.push_back(held->record);
    *held = std::move(seen->info);
    return;
  }
  dedup_.insert(seen->message, std::move(seen->info), &stale_seen_);
}

void Node::start() {
  log()->info("federation node {}: {} configured link(s), {} message id(s) seen", to_hex(id_), dialers_.size(),
              dedup_.size());
  if (!stale_seen_.empty()) {
    std::vector<core::StateRecord> removals;
    for (const auto& record : stale_seen_) removals.push_back({std::string(kSeenQueue), nullptr, record});
    stale_seen_.clear();
    broker_.write_state(std::move(removals), nullptr);
  }
  for (const auto& d : dialers_) {
    d->timer = std::make_unique<net::asio::steady_timer>(pool_.context(kHome));
    dial(d);
  }
  reply_timer_ = std::make_unique<net::asio::steady_timer>(pool_.context(kHome));
  expire_reply_routes();
}

void Node::dial(const std::shared_ptr<Dialer>& d) {
  if (stopping_ || d->removed) return;
  // The client context is made for each attempt, so a renewed CA or client certificate is
  // taken at the next reconnect; a file that does not load is retried like a refused connect.
  net::TlsAccept tls;
  if (d->options.tls.enabled) {
    auto context = net::make_client_context(d->options.tls);
    if (!context) {
      log()->warn("link '{}': TLS not usable: {}", d->options.name, context.error().detail);
      redial(d);
      return;
    }
    tls.context = std::move(*context);
    tls.as_client = true;
    tls.server_name = d->options.tls.server_name.empty() ? d->options.host : d->options.tls.server_name;
  }
  boost::system::error_code ec;
  net::tcp::resolver resolver(pool_.context(kHome));
  auto endpoints = resolver.resolve(d->options.host, std::to_string(d->options.port), ec);
  if (ec || endpoints.empty()) {
    log()->warn("link '{}': cannot resolve {}: {}", d->options.name, d->options.host, ec.message());
    redial(d);
    return;
  }
  auto socket = std::make_shared<net::tcp::socket>(pool_.context(kHome));
  const net::tcp::endpoint target = *endpoints.begin();
  socket->async_connect(target, [this, d, socket,
                                 tls = std::move(tls)](const boost::system::error_code& error) mutable {
    if (stopping_ || d->removed) return;
    if (error) {
      log()->debug("link '{}': cannot connect: {}", d->options.name, error.message());
      redial(d);
      return;
    }
    start_link(std::move(*socket), d, std::move(tls));
  });
}

void Node::redial(const std::shared_ptr<Dialer>& d) {
  if (stopping_ || d->removed) return;
  const auto delay = d->backoff.next_delay_ms();
  d->timer->expires_after(std::chrono::milliseconds(delay));
  d->timer->async_wait([this, d](const boost::system::error_code& ec) {
    if (!ec) dial(d);
  });
}

void Node::accept(net::tcp::socket socket) {
  start_link(std::move(socket), nullptr, tls_ ? tls_->accept() : net::TlsAccept{});
}

std::shared_ptr<Node::Dialer> Node::dialer_of(const Link& link) const {
  if (link.outbound() == nullptr) return nullptr;
  for (const auto& d : dialers_) {
    if (&d->options == link.outbound()) return d;
  }
  return nullptr;
}

void Node::start_link(net::tcp::socket socket, std::shared_ptr<Dialer> dialer, net::TlsAccept tls) {
  auto connection = std::make_shared<net::Connection>(std::move(socket), kHome, "federation", std::move(tls));
  const std::uint64_t id = next_link_++;
  const std::int32_t session = next_session_++;
  // The link shares its options with the dialer (aliasing): it may outlive a removal.
  std::shared_ptr<const LinkOptions> outbound;
  if (dialer) outbound = std::shared_ptr<const LinkOptions>(dialer, &dialer->options);
  auto link = std::make_shared<Link>(connection, *this, id, session, std::move(outbound));
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
  if (auto d = dialer_of(link)) d->backoff.reset();
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
  if (auto d = dialer_of(link)) {
    if (link.is_up() && !link.misbehaved()) d->backoff.reset();
    redial(d);
  }
}

std::string Node::topic_backlog_name(const codec::Id128& peer, const std::string& filter) {
  return "federation:" + to_hex(peer) + ":" + filter;
}

void Node::peer_advertised(Link& link, Demand demand) {
  // Demand the far node's user may not consume is not taken: nothing is forwarded to it here,
  // nor is the demand passed on (other nodes would send messages here that cannot go on).
  if (auto* p = link.permissions(); p != nullptr) {
    std::erase_if(demand, [p, &link](const auto& entry) {
      auto d = model::Destination::from_key(entry.first);
      if (!d || (d->kind != model::DestinationKind::queue && d->kind != model::DestinationKind::topic)) return false;
      if (p->allows(auth::Right::read, *d)) return false;
      log()->debug("{} demand for {} ignored: {}", link.log_prefix(), entry.first,
                   auth::access_denied_detail(link.user(), "subscribe to", d->uri()));
      return true;
    });
  }
  log()->debug("{} the far node has demand for {} destination(s)", link.log_prefix(), demand.size());
  // Topic demand the far node withdrew (it advertised it on this link before, and not now):
  // its waiting messages are of no use to it. A link's first advertisement withdraws nothing:
  // a restarted node's consumers may not be back yet (the idle expiry cleans up after those
  // that never come back).
  for (const auto& [key, distance] : demand_.peer(link.id())) {
    if (demand.contains(key)) continue;
    auto d = model::Destination::from_key(key);
    if (!d || d->kind != model::DestinationKind::topic) continue;
    withdrawn_.push_back(topic_backlog_name(link.peer_id(), d->name));
  }
  demand_.set_peer(link.id(), std::move(demand));
  demand_changed();
}

void Node::demand_changed() {
  for (auto& [id, link] : links_) link->advertise();
  refresh_forwarding();
  // After refresh_forwarding detached their consumers.
  for (auto& name : withdrawn_) {
    log()->debug("topic backlog {} removed: its demand was withdrawn", name);
    broker_.remove_subscription(std::move(name), nullptr);
  }
  withdrawn_.clear();
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
  flush_acks();  // a consumer's acks reach its queue before it is unsubscribed
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
    if (destination.kind == model::DestinationKind::topic) {
      // Store and forward for topics: the link's messages wait in a durable subscription of
      // its own while the link is down (or paused), and one not attached to for
      // topic_backlog_idle_ms goes with them.
      request.subscription_name = topic_backlog_name(links_.at(key.first)->peer_id(), destination.name);
      request.durable = true;
      request.idle_expiry_ms = options_.topic_backlog_idle_ms;
    }
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
  HopInfo here{options_.ttl, 0, id_, id_, {}, {}};
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
  // A reply-to naming a local temporary queue leaves with this node's prefix (sendback.cpp).
  std::optional<model::Message> renamed;
  if (auto reply_to = network_reply_to(m); reply_to != m.reply_to) {
    renamed.emplace(m);
    renamed->reply_to = std::move(reply_to);
  }
  auto wrapped = codec::wrap_message(renamed ? *renamed : m, std::move(envelope));
  if (!wrapped) {
    log()->warn("{} cannot forward {}: {}", link.log_prefix(), m.id.to_string(), wrapped.error().detail);
    settle(consumer, delivery.tag, false);
    return;
  }
  codec::PushRequest push{std::move(*wrapped), {}, link.session()};
  std::weak_ptr<Link> weak = it->second;
  link.push(std::move(push), [this, weak, consumer, tag = delivery.tag](const std::string& result) {
    auto l = weak.lock();
    if (result.starts_with("ok")) {
      if (l) ++l->counters().pushed;
      settle(consumer, tag, true);
      return;
    }
    if (l) {
      ++l->counters().push_failures;
      log()->warn("{} push refused: {}", l->log_prefix(), result);
    }
    settle(consumer, tag, false);
  });
}

void Node::settle(core::ConsumerId consumer, std::uint64_t tag, bool delivered) {
  if (!delivered) {
    broker_.reject(consumer, {tag}, nullptr);
    return;
  }
  auto it = std::find_if(acks_.begin(), acks_.end(), [consumer](const auto& e) { return e.first == consumer; });
  if (it == acks_.end()) it = acks_.insert(acks_.end(), {consumer, {}});
  it->second.push_back(tag);
  if (acks_posted_) return;
  acks_posted_ = true;
  pool_.post(kHome, [this] { flush_acks(); });
}

void Node::flush_acks() {
  acks_posted_ = false;
  for (auto& [consumer, tags] : acks_) broker_.ack(consumer, std::move(tags), nullptr);
  acks_.clear();
}

void Node::set_paused(const codec::Id128& target, const std::string& selector, bool paused) {
  const bool changed = paused ? paused_.emplace(target, selector).second : paused_.erase({target, selector}) != 0;
  if (!changed) return;
  log()->info("forwarding of {} to node {} {}", selector, to_hex(target), paused ? "paused" : "resumed");
  refresh_forwarding();
}

bool Node::holds_arrivals() const {
  const auto* disk = broker_.disk_alarm();
  if (disk != nullptr && disk->holding()) return true;
  auto* memory = broker_.memory();
  return memory != nullptr && memory->over_limit();
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
  // The far node's user must be allowed to send what it pushes (the ACL's write right).
  if (auto* p = link.permissions(); p != nullptr && !p->allows(auth::Right::write, message->destination)) {
    link.answer(request_id, "error: " + auth::access_denied_detail(link.user(), "send to", message->destination.uri()));
    return;
  }
  if (auto st = broker_.check_destination(message->destination, false); !st) {
    link.answer(request_id, "error: " + st.error().detail);
    return;
  }
  HopInfo info{basic.ttl - 1, basic.hops + 1, basic.origin, link.peer_id(), std::move(basic.stack), {}};
  info.stack.push_back(link.session());
  // A stack at its limit could not be pushed again: the message stops here.
  if (info.stack.size() >= options_.limits.max_stack_entries) info.ttl = 0;
  const model::MessageId id = message->id;
  std::vector<model::MessageId> forgotten;
  HopInfo* taken = dedup_.insert(id, std::move(info), &forgotten);
  if (taken == nullptr) {
    dedup_.count_duplicate();
    link.answer(request_id, "ok duplicate");
    return;
  }
  // A persistent message's id is kept in the store with it (in one batch), so a push repeated
  // after a restart is still a duplicate; the records of ids the window forgets go.
  std::vector<core::StateRecord> state;
  model::MessagePtr seen;
  if (message->persistent) {
    taken->record = broker_.next_message_id();
    seen = encode_seen(id, *taken, broker_.now_ms());
    state.push_back({std::string(kSeenQueue), seen, {}});
  }
  for (const auto& record : forgotten) state.push_back({std::string(kSeenQueue), nullptr, record});
  // Before the send: the reply queue must exist here by the time a responder answers.
  if (!message->reply_to.empty()) learn_reply_route(*message, taken->stack);
  auto ptr = std::make_shared<model::Message>(std::move(*message));
  ptr->origin = 0;
  auto& batch = arrivals_[ptr->destination.key()];
  batch.messages.push_back(std::move(ptr));
  for (auto& record : state) batch.state.push_back(std::move(record));
  std::weak_ptr<Link> weak = links_.contains(link.id()) ? links_[link.id()] : nullptr;
  batch.answers.push_back(Arrival{std::move(weak), request_id, id, std::move(seen)});
  if (arrivals_posted_) return;
  arrivals_posted_ = true;
  pool_.post(kHome, [this] { flush_arrivals(); });
}

void Node::flush_arrivals() {
  arrivals_posted_ = false;
  auto batches = std::move(arrivals_);
  arrivals_.clear();
  for (auto& [key, batch] : batches) {
    broker_.send(std::move(batch.messages), std::move(batch.state),
                 [this, answers = std::move(batch.answers)](Status st) {
                   for (const auto& a : answers) {
                     if (!st) {
                       // Not taken: a retry must be (the record may have been written even so).
                       dedup_.erase(a.id);
                       if (a.seen) {
                         broker_.write_state({core::StateRecord{std::string(kSeenQueue), nullptr, a.seen->id}},
                                             nullptr);
                       }
                     }
                     if (auto l = a.link.lock()) {
                       if (st) ++l->counters().received;
                       l->answer(a.request_id, st ? std::string("ok") : "error: " + st.error().detail);
                     }
                   }
                 });
  }
}

}  // namespace carrier::federation
