#include "mqtt/session_record.hpp"

#include <charconv>
#include <limits>

namespace carrier::mqtt {

namespace {

constexpr std::string_view kFormat = "1";
// Session records: "1" with their subscriptions inside, "2" without (they have their own).
constexpr std::string_view kSessionFormatLegacy = "1";
constexpr std::string_view kSessionFormat = "2";

// Will records: the will's own properties come first, these three last.
constexpr std::string_view kWillClient = "mqtt-will-client";
constexpr std::string_view kWillDue = "mqtt-will-due";
constexpr std::string_view kWillRetain = "mqtt-will-retain";

template <typename T>
std::optional<T> number(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// Reads "<number> " from the front of `text`.
template <typename T>
std::optional<T> take_number(std::string_view& text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto v = number<T>(text.substr(0, space));
  text.remove_prefix(space + 1);
  return v;
}

// A subscription as one property value: "<qos> <no-local> <retain-as-published>
// <retain-handling> <identifier> <filter>", the filter last (it may hold spaces).
std::string subscription_text(const std::string& filter, const SubscriptionOptions& o) {
  return std::to_string(o.qos) + ' ' + (o.no_local ? '1' : '0') + ' ' + (o.retain_as_published ? '1' : '0') + ' ' +
         std::to_string(o.retain_handling) + ' ' + std::to_string(o.identifier) + ' ' + filter;
}

struct ParsedSubscription {
  std::string filter;
  SubscriptionOptions options;
};

std::optional<ParsedSubscription> parse_subscription(std::string_view rest) {
  auto qos = take_number<unsigned>(rest);
  auto no_local = take_number<unsigned>(rest);
  auto rap = take_number<unsigned>(rest);
  auto handling = take_number<unsigned>(rest);
  auto identifier = take_number<std::uint32_t>(rest);
  if (!qos || *qos > 2 || !no_local || *no_local > 1 || !rap || *rap > 1 || !handling || *handling > 2 ||
      !identifier || rest.empty()) {
    return std::nullopt;
  }
  return ParsedSubscription{std::string(rest),
                            SubscriptionOptions{static_cast<std::uint8_t>(*qos), *no_local == 1, *rap == 1, *identifier,
                                                static_cast<std::uint8_t>(*handling)}};
}

model::MessagePtr record_message(std::string_view queue, model::MessageId id, std::int64_t now_ms,
                                model::Properties props) {
  auto m = std::make_shared<model::Message>();
  m->id = id;
  m->destination = model::Destination{model::DestinationKind::queue, std::string(queue)};
  m->persistent = true;
  m->timestamp_ms = now_ms;
  m->properties = std::move(props);
  return m;
}

}  // namespace

std::optional<std::int64_t> SessionRecord::deadline_ms(std::int64_t now_ms) const {
  if (expiry_seconds == kExpiryNever) return std::nullopt;
  const std::int64_t from = away_since_ms != 0 ? away_since_ms : now_ms;
  return from + std::int64_t(expiry_seconds) * 1000;
}

model::MessagePtr encode_session(const SessionRecord& r, model::MessageId id, std::int64_t now_ms) {
  model::Properties p;
  const bool legacy = r.format == 1;
  p.emplace_back("format", legacy ? kSessionFormatLegacy : kSessionFormat);
  p.emplace_back("client-id", r.client_id);
  p.emplace_back("protocol-level", std::to_string(r.protocol_level));
  p.emplace_back("expiry", std::to_string(r.expiry_seconds));
  p.emplace_back("away-since", std::to_string(r.away_since_ms));
  // Format 1 (tests, and what earlier releases wrote): one property per subscription.
  if (legacy) {
    for (const auto& [filter, o] : r.subscriptions) p.emplace_back("sub", subscription_text(filter, o));
  }
  return record_message(kSessionsQueue, id, now_ms, std::move(p));
}

std::optional<SessionRecord> decode_session(const model::Message& m) {
  SessionRecord r;
  bool format = false, client = false, expiry = false;
  for (const auto& [k, v] : m.properties) {
    if (k == "format") {
      if (v == kSessionFormatLegacy) {
        r.format = 1;
      } else if (v == kSessionFormat) {
        r.format = 2;
      } else {
        return std::nullopt;
      }
      format = true;
    } else if (k == "client-id") {
      r.client_id = v;
      client = true;
    } else if (k == "protocol-level") {
      auto n = number<unsigned>(v);
      if (!n || *n < 3 || *n > 5) return std::nullopt;
      r.protocol_level = static_cast<std::uint8_t>(*n);
    } else if (k == "expiry") {
      auto n = number<std::uint32_t>(v);
      if (!n) return std::nullopt;
      r.expiry_seconds = *n;
      expiry = true;
    } else if (k == "away-since") {
      auto n = number<std::int64_t>(v);
      if (!n || *n < 0) return std::nullopt;
      r.away_since_ms = *n;
    } else if (k == "sub") {
      auto sub = parse_subscription(v);
      if (!sub) return std::nullopt;
      r.subscriptions[std::move(sub->filter)] = sub->options;
    }
  }
  if (!format || !client || !expiry) return std::nullopt;
  // Format 2 keeps its subscriptions in records of their own.
  if (r.format == 2 && !r.subscriptions.empty()) return std::nullopt;
  return r;
}

model::MessagePtr encode_subscription(const SubscriptionRecord& r, model::MessageId id, std::int64_t now_ms) {
  // Built whole: g++ 12 at -O3 misreads emplace_back into an empty vector here (-Warray-bounds).
  model::Properties p{{"format", std::string(kFormat)},
                      {"client-id", r.client_id},
                      {"sub", subscription_text(r.filter, r.options)}};
  return record_message(kSubscriptionsQueue, id, now_ms, std::move(p));
}

std::optional<SubscriptionRecord> decode_subscription(const model::Message& m) {
  SubscriptionRecord r;
  bool format = false, client = false, sub = false;
  for (const auto& [k, v] : m.properties) {
    if (k == "format") {
      if (v != kFormat) return std::nullopt;
      format = true;
    } else if (k == "client-id") {
      r.client_id = v;
      client = true;
    } else if (k == "sub") {
      auto parsed = parse_subscription(v);
      if (!parsed || sub) return std::nullopt;
      r.filter = std::move(parsed->filter);
      r.options = parsed->options;
      sub = true;
    }
  }
  if (!format || !client || !sub) return std::nullopt;
  return r;
}

model::MessagePtr encode_will(const WillRecord& r) {
  auto m = std::make_shared<model::Message>(*r.will);
  m->properties.emplace_back(kWillClient, r.client_id);
  m->properties.emplace_back(kWillDue, std::to_string(r.due_ms));
  m->properties.emplace_back(kWillRetain, r.will->retain ? "1" : "0");
  return m;
}

std::optional<WillRecord> decode_will(const model::Message& m) {
  const auto& p = m.properties;
  const std::size_t n = p.size();
  if (n < 3 || p[n - 3].first != kWillClient || p[n - 2].first != kWillDue || p[n - 1].first != kWillRetain) {
    return std::nullopt;
  }
  auto due = number<std::int64_t>(p[n - 2].second);
  if (!due || m.destination.name.empty()) return std::nullopt;
  WillRecord r;
  r.client_id = p[n - 3].second;
  r.due_ms = *due;
  auto will = std::make_shared<model::Message>(m);
  will->retain = p[n - 1].second == "1";
  will->properties.resize(n - 3);
  r.will = std::move(will);
  return r;
}

model::MessagePtr encode_qos2(const Qos2Record& r, model::MessageId id, std::int64_t now_ms) {
  model::Properties p{{"format", std::string(kFormat)},  // built whole, as in encode_subscription
                      {"client-id", r.client_id},
                      {"direction", r.inbound ? "in" : "out"},
                      {"packet-id", std::to_string(r.packet_id)}};
  return record_message(kQos2Queue, id, now_ms, std::move(p));
}

std::optional<Qos2Record> decode_qos2(const model::Message& m) {
  Qos2Record r;
  bool format = false, client = false, direction = false, packet = false;
  for (const auto& [k, v] : m.properties) {
    if (k == "format") {
      if (v != kFormat) return std::nullopt;
      format = true;
    } else if (k == "client-id") {
      r.client_id = v;
      client = true;
    } else if (k == "direction") {
      if (v != "in" && v != "out") return std::nullopt;
      r.inbound = v == "in";
      direction = true;
    } else if (k == "packet-id") {
      auto n = number<std::uint16_t>(v);
      if (!n || *n == 0) return std::nullopt;
      r.packet_id = *n;
      packet = true;
    }
  }
  if (!format || !client || !direction || !packet) return std::nullopt;
  return r;
}

}  // namespace carrier::mqtt
