#include <charconv>
#include <unordered_set>

#include <fmt/format.h>

#include "stomp/destination_name.hpp"
#include "stomp/session.hpp"

namespace carrier::stomp {

namespace {

// Headers that mean something to the broker itself and are not passed through as properties.
bool is_reserved(std::string_view name) {
  static const std::unordered_set<std::string_view> kReserved{
      "destination", "receipt",        "transaction", "content-length", "persistent", "priority",
      "expires",     "correlation-id", "reply-to",    "type",           "timestamp",  "content-type",
      "message-id",  "subscription",   "ack",         "redelivered"};
  return kReserved.contains(name);
}

template <class T>
bool parse_number(const std::string& text, T& out) {
  auto r = std::from_chars(text.data(), text.data() + text.size(), out);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

}  // namespace

Result<core::MessagePtr> Session::build_message(codec::Frame& frame) {
  const auto* dest_text = frame.header("destination");
  if (dest_text == nullptr) return unexpected(Errc::invalid_argument, "SEND frame has no destination header");
  auto dest = parse_destination(*dest_text);
  if (!dest) return unexpected(Errc::invalid_argument, fmt::format("invalid destination '{}'", *dest_text));
  if (auto st = broker_.check_destination(*dest, false); !st) return unexpected(st.error());

  auto m = std::make_shared<core::Message>();
  m->id = broker_.next_message_id();
  m->destination = std::move(*dest);
  m->timestamp_ms = broker_.now_ms();
  std::unordered_set<std::string_view> seen;
  for (auto& [name, value] : frame.headers) {
    if (!seen.insert(name).second) continue;  // repeated header: the first one wins
    if (name == "persistent") {
      m->persistent = value == "true";
    } else if (name == "priority") {
      int p = 0;
      if (!parse_number(value, p) || p < 0 || p > 9) {
        return unexpected(Errc::invalid_argument, fmt::format("priority must be 0 to 9, got '{}'", value));
      }
      m->priority = static_cast<std::uint8_t>(p);
    } else if (name == "expires") {
      if (!parse_number(value, m->expires_ms) || m->expires_ms < 0) {
        return unexpected(Errc::invalid_argument, fmt::format("expires must be epoch milliseconds, got '{}'", value));
      }
    } else if (name == "timestamp") {
      std::int64_t ts = 0;
      if (parse_number(value, ts)) m->timestamp_ms = ts;
    } else if (name == "correlation-id") {
      m->correlation_id = value;
    } else if (name == "reply-to") {
      m->reply_to = value;
    } else if (name == "type") {
      m->type = value;
    } else if (name == "content-type") {
      m->content_type = value;
    } else if (!is_reserved(name)) {
      m->properties.emplace_back(name, value);
    }
  }
  m->body = std::make_shared<const std::string>(std::move(frame.body));
  return core::MessagePtr(std::move(m));
}

void Session::handle_send(codec::Frame& frame) {
  auto message = build_message(frame);
  if (!message) {
    flush_sends();
    fail(message.error().detail, {}, &frame);
    return;
  }
  if (const auto* tx = frame.header("transaction")) {
    auto it = transactions_.find(*tx);
    if (it == transactions_.end()) {
      flush_sends();
      fail("unknown transaction", fmt::format("no transaction '{}' has begun", *tx), &frame);
      return;
    }
    it->second.work.sends.push_back(std::move(*message));
    maybe_receipt(frame);
    return;
  }
  const auto* receipt = frame.header("receipt");
  sends_.push_back(PendingSend{std::move(*message), receipt ? *receipt : std::string()});
}

void Session::flush_sends() {
  if (sends_.empty()) return;
  std::vector<core::MessagePtr> messages;
  std::vector<std::string> receipts;
  messages.reserve(sends_.size());
  for (auto& s : sends_) {
    messages.push_back(std::move(s.message));
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
      self->fail("message not stored", st.error().to_string(), &cause);
      return;
    }
    for (const auto& r : receipts) self->send_receipt(r);
    if (self->disconnecting_ && self->sends_in_flight_ == 0) self->complete_disconnect();
    self->flush();
  });
}

}  // namespace carrier::stomp
