#include <algorithm>
#include <charconv>
#include <unordered_set>

#include <fmt/format.h>

#include "core/deadline.hpp"
#include "stomp/destination_name.hpp"
#include "stomp/session.hpp"

namespace carrier::stomp {

namespace {

// Headers that mean something to the broker itself and are not passed through as properties.
bool is_reserved(std::string_view name) {
  static const std::unordered_set<std::string_view> kReserved{
      "destination", "receipt",  "transaction", "content-length", "persistent", "priority", "expires",
      "correlation-id", "reply-to", "type", "timestamp", "content-type", "message-id", "subscription", "ack",
      "redelivered", "delivery-count", "deliver-at", "delay", "AMQ_SCHEDULED_DELAY"};
  return kReserved.contains(name);
}

template <class T>
bool parse_number(const std::string& text, T& out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

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
    consumer_ = std::make_shared<SubscriptionConsumer>(std::static_pointer_cast<Session>(shared_from_this()));
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

Result<std::vector<model::MessagePtr>> Session::build_messages(codec::Frame& frame) {
  const auto* dest_text = frame.header("destination");
  if (dest_text == nullptr) return unexpected(Errc::invalid_argument, "SEND frame has no destination header");
  std::vector<model::Destination> destinations;
  std::string_view rest(*dest_text);
  while (true) {
    auto comma = rest.find(',');
    auto one = rest.substr(0, comma);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    auto dest = resolve_destination(one, false);
    if (!dest) return unexpected(dest.error());
    destinations.push_back(std::move(*dest));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }

  model::Message m;
  m.id = broker_.next_message_id();
  m.timestamp_ms = broker_.now_ms();
  m.origin = id();
  // `deliver-at` and `delay` count from arrival, before a `timestamp` header can replace it.
  const std::int64_t arrival = m.timestamp_ms;
  const std::uint64_t max_delay = broker_.options().max_schedule_delay_ms;
  std::unordered_set<std::string_view> seen;
  for (auto& [name, value] : frame.headers) {
    if (!seen.insert(name).second) continue;  // repeated header: the first one wins
    if (name == "persistent") {
      m.persistent = value == "true";
    } else if (name == "priority") {
      int p = 0;
      if (!parse_number(value, p) || p < 0 || p > 9) {
        return unexpected(Errc::invalid_argument, fmt::format("priority must be 0 to 9, got '{}'", value));
      }
      m.priority = static_cast<std::uint8_t>(p);
    } else if (name == "expires") {
      if (!parse_number(value, m.expires_ms) || m.expires_ms < 0) {
        return unexpected(Errc::invalid_argument, fmt::format("expires must be epoch milliseconds, got '{}'", value));
      }
    } else if (name == "deliver-at") {
      if (!parse_number(value, m.deliver_at_ms) || m.deliver_at_ms < 0) {
        return unexpected(Errc::invalid_argument, fmt::format("deliver-at must be epoch milliseconds, got '{}'", value));
      }
      if (m.deliver_at_ms > core::deadline_after(arrival, max_delay)) {
        return unexpected(Errc::invalid_argument,
                          fmt::format("deliver-at must be at most {} ms ahead (max_schedule_delay_ms), got '{}'",
                                      max_delay, value));
      }
    } else if (name == "delay" || name == "AMQ_SCHEDULED_DELAY") {
      std::uint64_t delay = 0;
      if (!parse_number(value, delay)) {
        return unexpected(Errc::invalid_argument, fmt::format("{} must be milliseconds, got '{}'", name, value));
      }
      if (delay > max_delay) {
        return unexpected(Errc::invalid_argument,
                          fmt::format("{} must be at most {} ms (max_schedule_delay_ms), got '{}'", name,
                                      max_delay, value));
      }
      if (delay > 0) m.deliver_at_ms = core::deadline_after(arrival, delay);
    } else if (name == "timestamp") {
      std::int64_t ts = 0;
      if (parse_number(value, ts)) m.timestamp_ms = ts;
    } else if (name == "correlation-id") {
      m.correlation_id = value;
    } else if (name == "reply-to") {
      // A reply to "/temp-queue/x" must reach this connection's own temporary queue.
      auto reply = parse_destination(value, false);
      if (reply && reply->kind == model::DestinationKind::temp_queue) {
        const bool ours = is_own_temp_name(reply->name);
        reply->name = qualify_temp_name(reply->name);
        if (ours && temp_queues_.insert(reply->name).second) broker_.open_temp_queue(*reply);
        if (ours) subscribe_reply_queue(reply->name, value);
        m.reply_to = format_destination(*reply);
      } else {
        m.reply_to = value;
      }
    } else if (name == "type") {
      m.type = value;
    } else if (name == "content-type") {
      m.content_type = value;
    } else if (!is_reserved(name)) {
      m.properties.emplace_back(name, value);
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
  auto messages = build_messages(frame);
  if (!messages) {
    flush_sends();
    fail(messages.error().detail, {}, &frame);
    return;
  }
  if (const auto* tx = frame.header("transaction")) {
    auto it = transactions_.find(*tx);
    if (it == transactions_.end()) {
      flush_sends();
      fail("unknown transaction", fmt::format("no transaction '{}' has begun", *tx), &frame);
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
  auto weak = std::weak_ptr<Session>(std::static_pointer_cast<Session>(shared_from_this()));
  broker_.send(std::move(messages), [weak, receipts = std::move(receipts)](Status st) {
    auto self = weak.lock();
    if (!self) return;
    --self->sends_in_flight_;
    if (self->is_closed()) return;
    if (!st) {
      // Nothing the client was told is lost: these were never confirmed. Say so and stop.
      codec::Frame cause;
      if (!receipts.empty()) cause.headers.emplace_back("receipt", receipts.front());
      const char* what = st.error().code == Errc::limit_exceeded ? "destination full"
                         : st.error().code == Errc::not_found   ? "destination does not exist"
                                                                : "message not stored";
      self->fail(what, st.error().to_string(), &cause);
      return;
    }
    for (const auto& r : receipts) self->send_receipt(r);
    if (self->disconnecting_ && self->sends_in_flight_ == 0) self->complete_disconnect();
    self->flush();
  });
}

}  // namespace carrier::stomp
