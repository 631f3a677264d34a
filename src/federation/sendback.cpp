// Node's sendback: replies to requests that crossed links travel back along the reversed
// stack, hop by hop, to the node the request came from (docs/federation.md "Replies").
//
// Only temporary reply queues go this way. A named reply destination (a queue or topic the
// requester consumes from) is ordinary demand and reaches the requester as any message does;
// a temporary queue belongs to one connection on one node and is never advertised, so nothing
// about it floods the network: only the nodes a request passed learn the way back.
#include "base/logging.hpp"
#include "core/broker.hpp"
#include "federation/codec/message_payload.hpp"
#include "federation/forwarding_consumer.hpp"
#include "federation/link.hpp"
#include "federation/node.hpp"
#include "federation/node_id.hpp"
#include "federation/log.hpp"

namespace carrier::federation {

namespace {

constexpr std::string_view kTempQueueUri = "/temp-queue/";
constexpr std::string_view kPrefix = "carrier-";
constexpr std::size_t kNodeHexDigits = 32;

// "carrier-<32 hex digits>." at the front of a temporary queue's name: one a node prefixed for
// the network. Local names are "carrier-<connection number>.…", never 32 digits long.
bool has_node_prefix(std::string_view name) {
  if (!name.starts_with(kPrefix) || name.size() <= kPrefix.size() + kNodeHexDigits) return false;
  const auto hex = name.substr(kPrefix.size(), kNodeHexDigits);
  return name[kPrefix.size() + kNodeHexDigits] == '.' &&
         hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The temporary queue name a reply-to names, if it names one.
std::optional<std::string> temp_queue_of(std::string_view reply_to) {
  if (!reply_to.starts_with(kTempQueueUri) || reply_to.size() == kTempQueueUri.size()) return std::nullopt;
  return std::string(reply_to.substr(kTempQueueUri.size()));
}

}  // namespace

std::string Node::network_reply_to(const model::Message& m) const {
  auto name = temp_queue_of(m.reply_to);
  if (!name || has_node_prefix(*name)) return m.reply_to;
  return std::string(kTempQueueUri) + reply_prefix_ + *name;
}

Link* Node::link_by_session(std::int32_t session) {
  for (auto& [id, link] : links_) {
    if (link->session() == session && link->is_up()) return link.get();
  }
  return nullptr;
}

void Node::learn_reply_route(const model::Message& m, const std::vector<std::int32_t>& stack) {
  auto name = temp_queue_of(m.reply_to);
  if (!name || !has_node_prefix(*name) || name->starts_with(reply_prefix_) || stack.empty()) return;
  forget_reply_routes(replies_.learn(*name, stack, ReplyRoutes::Clock::now()));
  if (reply_consumers_.contains(*name)) return;
  // The queue exists here from now on, so a responder's send to it is taken (a temporary queue
  // nobody opened refuses sends), and the consumer sends back what arrives.
  const model::Destination queue{model::DestinationKind::temp_queue, *name};
  broker_.open_temp_queue(queue);
  auto consumer = std::make_shared<ForwardingConsumer>(
      0, [this](std::uint64_t, core::ConsumerId id, core::Delivery d) { send_reply(id, std::move(d)); });
  core::SubscribeRequest request;
  request.destination = queue;
  request.ack_mode = core::AckMode::client_individual;
  request.prefetch = options_.max_in_flight;
  request.consumer = consumer;
  request.bridge = true;
  auto id = broker_.subscribe(std::move(request), nullptr);
  if (!id) {
    log()->warn("cannot take replies to {}: {}", *name, id.error().detail);
    return;
  }
  log()->debug("replies to {} go back over session {}", *name, stack.back());
  reply_consumers_.emplace(*name, Forwarding{std::move(consumer), *id});
}

void Node::forget_reply_routes(const std::vector<std::string>& names) {
  if (!names.empty()) flush_acks();  // the replies sent back are acked before their consumer goes
  for (const auto& name : names) {
    auto it = reply_consumers_.find(name);
    if (it == reply_consumers_.end()) continue;
    it->second.consumer->close();
    broker_.unsubscribe(it->second.id, nullptr);
    broker_.delete_queue(model::Destination{model::DestinationKind::temp_queue, name}, nullptr);
    reply_consumers_.erase(it);
    log()->debug("the way back to {} is forgotten", name);
  }
}

void Node::expire_reply_routes() {
  if (stopping_ || !reply_timer_) return;
  forget_reply_routes(replies_.expire(ReplyRoutes::Clock::now()));
  reply_timer_->expires_after(std::chrono::milliseconds(std::min<std::uint32_t>(options_.reply_route_idle_ms, 5000)));
  reply_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (!ec) expire_reply_routes();
  });
}

void Node::send_reply(core::ConsumerId consumer, core::Delivery delivery) {
  const model::Message& m = *delivery.message;
  const auto* route = replies_.use(m.destination.name, ReplyRoutes::Clock::now());
  Link* link = nullptr;
  if (route != nullptr && !route->empty()) link = link_by_session(route->back());
  if (link == nullptr) {
    // The way back is gone (forgotten, or its link is down): the reply goes the way of a
    // rejected message, as it would to a requester whose connection closed.
    log()->debug("reply {} to {}: no way back", m.id.to_string(), m.destination.name);
    settle(consumer, delivery.tag, false);
    return;
  }
  codec::BasicMessage envelope;
  envelope.ttl = options_.ttl;
  envelope.hops = 0;
  envelope.origin = id_;
  envelope.previous = id_;
  envelope.stack.assign(route->begin(), route->end() - 1);
  auto wrapped = codec::wrap_message(m, std::move(envelope));
  if (!wrapped) {
    settle(consumer, delivery.tag, false);
    return;
  }
  ++link->counters().replies_sent;
  link->sendback(codec::SendbackRequest{std::move(*wrapped), link->session()},
                 [this, consumer, tag = delivery.tag, prefix = link->log_prefix()](const std::string& result) {
                   const bool ok = result.starts_with("ok");
                   if (!ok) log()->warn("{} sendback refused: {}", prefix, result);
                   settle(consumer, tag, ok);
                 });
}

void Node::on_sendback(Link& link, std::uint32_t request_id, codec::SendbackRequest request) {
  auto& basic = request.message;
  auto message = codec::unwrap_message(basic);
  if (!message) {
    link.answer(request_id, "error: " + message.error().detail);
    return;
  }
  if (message->destination.kind != model::DestinationKind::temp_queue || !has_node_prefix(message->destination.name)) {
    link.answer(request_id, "error: sendback carries replies to temporary queues only");
    return;
  }
  std::weak_ptr<Link> weak = links_.contains(link.id()) ? links_[link.id()] : nullptr;
  if (!basic.stack.empty()) {
    // Not the end of the way yet: pass it on to the link the stack's last entry names.
    const std::int32_t session = basic.stack.back();
    Link* next = link_by_session(session);
    if (next == nullptr) {
      link.answer(request_id, "error: no link for session " + std::to_string(session) + " (the way back is gone)");
      return;
    }
    basic.stack.pop_back();
    basic.hops += 1;
    basic.previous = id_;
    next->sendback(codec::SendbackRequest{std::move(basic), next->session()},
                   [weak, request_id](const std::string& result) {
                     if (auto l = weak.lock()) l->answer(request_id, result);
                   });
    return;
  }
  // The end of the stack: the reply queue must be one of this node's.
  if (!message->destination.name.starts_with(reply_prefix_)) {
    link.answer(request_id, "error: the reply queue is not this node's");
    return;
  }
  const model::MessageId id = message->id;
  if (dedup_.insert(id, HopInfo{0, basic.hops + 1, basic.origin, link.peer_id(), {}, {}}) == nullptr) {
    dedup_.count_duplicate();
    link.answer(request_id, "ok duplicate");
    return;
  }
  auto ptr = std::make_shared<model::Message>(std::move(*message));
  ptr->destination.name.erase(0, reply_prefix_.size());
  ptr->origin = 0;
  broker_.send({std::move(ptr)}, [this, weak, request_id, id](Status st) {
    if (!st) dedup_.erase(id);
    if (auto l = weak.lock()) l->answer(request_id, st ? std::string("ok") : "error: " + st.error().detail);
  });
}

}  // namespace carrier::federation
