#include <algorithm>

#include <fmt/format.h>

#include "stomp/destination_name.hpp"
#include "stomp/send_headers.hpp"
#include "stomp/session.hpp"

namespace carrier::stomp {

std::string Session::qualify_temp_name(std::string_view name) const {
  // Names another connection qualified (a reply-to we were given) are already broker-wide.
  if (name.substr(0, 8) == "carrier-") return std::string(name);
  return session_id_ + "." + std::string(name);
}

bool Session::is_own_temp_name(std::string_view name) const {
  return name.substr(0, 8) != "carrier-" || name.rfind(session_id_ + ".", 0) == 0;
}

Result<model::Destination> Session::resolve_destination(std::string_view text, bool for_subscribe) {
  auto dest = parse_destination(text, for_subscribe);
  if (!dest) return unexpected(dest.error());
  // Each level of a topic filter is a node in every shard's index: a name of thousands of levels
  // must not cost megabytes.
  if (const auto levels = std::count(dest->name.begin(), dest->name.end(), '.') + 1;
      static_cast<std::size_t>(levels) > options_.max_destination_levels) {
    return unexpected(Errc::invalid_argument, fmt::format("destination has {} levels, at most {} are allowed "
                                                          "(stomp.max_destination_levels)",
                                                          levels, options_.max_destination_levels));
  }
  if (dest->kind == model::DestinationKind::temp_queue) {
    const bool ours = is_own_temp_name(dest->name);
    if (for_subscribe && !ours) {
      return unexpected(Errc::permission_denied,
                        fmt::format("temporary queue '{}' belongs to another connection", text));
    }
    dest->name = qualify_temp_name(dest->name);
    if (ours && temp_queues_.insert(dest->name).second) broker_.open_temp_queue(*dest);
  }
  if (auto st = broker_.check_destination(*dest, for_subscribe); !st) return unexpected(st.error());
  return *dest;
}

void Session::subscribe_reply_queue(const std::string& name, std::string_view spelling) {
  for (const auto& [id, sub] : subscriptions_) {
    if (sub.temp_queue == name) return;
  }
  std::string id(spelling);
  if (subscriptions_.contains(id)) return;
  if (!consumer_) {
    consumer_ = std::make_shared<SubscriptionConsumer>(weak_from_this());
  }
  core::SubscribeRequest request{model::Destination{model::DestinationKind::temp_queue, name}, core::AckMode::auto_ack,
                                 0, consumer_};
  auto consumer = broker_.subscribe(std::move(request), nullptr);
  if (!consumer) return;  // the SEND still goes; its replies wait for a SUBSCRIBE
  Subscription sub;
  sub.id = id;
  sub.number = next_subscription_number_++;
  sub.consumer = *consumer;
  sub.temp_queue = name;
  sub.automatic = true;
  by_consumer_.emplace(sub.consumer, id);
  subscriptions_.emplace(std::move(id), std::move(sub));
}

std::variant<std::vector<model::MessagePtr>, Refused> Session::build_messages(codec::Frame& frame) {
  const auto* dest_text = frame.header("destination");
  if (dest_text == nullptr) return Refused{Refusal::missing_header, "destination"};
  std::vector<model::Destination> destinations;
  std::string_view rest(*dest_text);
  while (true) {
    auto comma = rest.find(',');
    auto one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    auto dest = resolve_destination(one, false);
    if (!dest) return Refused{refusal_for(dest.error().code, Operation::send_destination), dest.error().detail};
    if (!permissions_.allows(auth::Right::write, *dest)) {
      return Refused{Refusal::access_denied, auth::access_denied_detail(user_, "send to", one)};
    }
    destinations.push_back(std::move(*dest));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }

  model::Message m;
  m.id = broker_.next_message_id();
  m.timestamp_ms = broker_.now_ms();
  m.origin = id();
  // `deliver-at` and `delay` count from arrival, before a `timestamp` header can replace it.
  if (auto refused = read_send_headers(frame.headers, SendLimits{m.timestamp_ms, broker_.options().max_schedule_delay_ms}, m)) {
    return std::move(*refused);
  }
  if (!m.reply_to.empty()) {
    // A reply to "/temp-queue/x" must reach this connection's own temporary queue.
    auto reply = parse_destination(m.reply_to, false);
    if (reply && reply->kind == model::DestinationKind::temp_queue) {
      const bool ours = is_own_temp_name(reply->name);
      reply->name = qualify_temp_name(reply->name);
      if (ours && temp_queues_.insert(reply->name).second) broker_.open_temp_queue(*reply);
      if (ours) subscribe_reply_queue(reply->name, m.reply_to);
      m.reply_to = format_destination(*reply);
    }
  }
  m.body = std::make_shared<const std::string>(std::move(frame.body));
  std::vector<model::MessagePtr> out;
  out.reserve(destinations.size());
  for (std::size_t i = 0; i < destinations.size(); ++i) {
    auto copy = std::make_shared<model::Message>(m);
    copy->destination = std::move(destinations[i]);
    // Temporary queues live only as long as their connection: nothing to store.
    if (copy->destination.kind == model::DestinationKind::temp_queue) copy->persistent = false;
    out.push_back(std::move(copy));
  }
  return out;
}

void Session::handle_send(codec::Frame& frame) {
  auto built = build_messages(frame);
  if (auto* refused = std::get_if<Refused>(&built)) {
    flush_sends();
    fail(refused->why, refused->detail, &frame);
    return;
  }
  auto* messages = &std::get<std::vector<model::MessagePtr>>(built);
  transport().count_in();
  if (const auto* tx = frame.header("transaction")) {
    auto it = transactions_.find(*tx);
    if (it == transactions_.end()) {
      flush_sends();
      fail(Refusal::unknown_transaction, fmt::format("no transaction '{}' has begun", *tx), &frame);
      return;
    }
    std::size_t bytes = 0;
    for (const auto& m : *messages) bytes += m->footprint();
    flush_sends();  // plain SENDs before this one go ahead of a possible ERROR
    if (!admit_to_transaction(it, bytes, messages->size(), frame)) return;
    for (auto& m : *messages) it->second.work.sends.push_back(std::move(m));
    maybe_receipt(frame);
    return;
  }
  const auto* receipt = frame.header("receipt");
  sends_.push_back(PendingSend{std::move(*messages), receipt ? *receipt : std::string()});
}

void Session::flush_sends() {
  if (sends_.empty()) return;
  std::vector<model::MessagePtr> messages;
  std::vector<std::string> receipts;
  messages.reserve(sends_.size());
  for (auto& s : sends_) {
    for (auto& m : s.messages) messages.push_back(std::move(m));
    if (!s.receipt.empty()) receipts.push_back(std::move(s.receipt));
  }
  sends_.clear();
  ++sends_in_flight_;
  broker_.send(std::move(messages), session::bind_weak(this, [receipts = std::move(receipts)](const auto& self, Status st) {
    --self->sends_in_flight_;
    if (self->is_closed()) return;
    if (!st) {
      // Nothing the client was told is lost: these were never confirmed. Say so and stop.
      codec::Frame cause;
      if (!receipts.empty()) cause.headers.emplace_back("receipt", receipts.front());
      self->fail(refusal_for(st.error().code, Operation::send), st.error().to_string(), &cause);
      return;
    }
    for (const auto& r : receipts) self->send_receipt(r);
    if (self->disconnecting_ && self->sends_in_flight_ == 0) self->complete_disconnect();
    self->flush();
  }));
}

}  // namespace carrier::stomp
