#include "relay/relay_record.hpp"

#include <charconv>

namespace carrier::relay {

namespace {

constexpr std::string_view kFormatProperty = "relay-format";
constexpr std::string_view kFormat = "1";

model::MessagePtr record(std::string_view queue, model::MessageId id, std::int64_t now_ms, model::Properties props,
                         std::string body = {}) {
  auto m = std::make_shared<model::Message>();
  m->id = id;
  m->destination = model::Destination{model::DestinationKind::queue, std::string(queue)};
  m->persistent = true;
  m->timestamp_ms = now_ms;
  props.insert(props.begin(), {std::string(kFormatProperty), std::string(kFormat)});
  m->properties = std::move(props);
  if (!body.empty()) m->body = std::make_shared<const std::string>(std::move(body));
  return m;
}

// The properties of a record of this format, or nullopt.
const model::Properties* of_format(const model::Message& m) {
  for (const auto& [k, v] : m.properties) {
    if (k == kFormatProperty) return v == kFormat ? &m.properties : nullptr;
  }
  return nullptr;
}

std::optional<std::string> get(const model::Properties& props, std::string_view name) {
  for (const auto& [k, v] : props) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::optional<std::int64_t> number(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

}  // namespace

model::MessagePtr encode_peer(const PeerRecord& r, model::MessageId id, std::int64_t now_ms) {
  return record(kPeersQueue, id, now_ms,
                {{"relay-peer", r.peer},
                 {"relay-user", r.user},
                 {"relay-address", r.relay_address},
                 {"relay-lease-ms", std::to_string(r.lease_ms)},
                 {"relay-expires-ms", std::to_string(r.expires_ms)},
                 {"relay-group", r.group}});
}

std::optional<PeerRecord> decode_peer(const model::Message& m) {
  const auto* p = of_format(m);
  if (p == nullptr) return std::nullopt;
  auto peer = get(*p, "relay-peer");
  auto lease = number(get(*p, "relay-lease-ms"));
  auto expires = number(get(*p, "relay-expires-ms"));
  if (!peer || peer->empty() || !lease || !expires) return std::nullopt;
  return PeerRecord{*peer, get(*p, "relay-user").value_or(""), get(*p, "relay-address").value_or(""), *lease, *expires,
                    get(*p, "relay-group").value_or("")};
}

model::MessagePtr encode_listen(const ListenRecord& r, model::MessageId id, std::int64_t now_ms) {
  return record(kListensQueue, id, now_ms,
                {{"relay-peer", r.peer}, {"relay-pipe", r.pipe_id}, {"relay-request-id", r.request_id}});
}

std::optional<ListenRecord> decode_listen(const model::Message& m) {
  const auto* p = of_format(m);
  if (p == nullptr) return std::nullopt;
  auto peer = get(*p, "relay-peer");
  auto pipe = get(*p, "relay-pipe");
  if (!peer || peer->empty() || !pipe || pipe->empty()) return std::nullopt;
  return ListenRecord{*peer, *pipe, get(*p, "relay-request-id").value_or("")};
}

model::MessagePtr encode_mail(const MailRecord& r, model::MessageId id, std::int64_t now_ms) {
  return record(kMailQueue, id, now_ms, {{"relay-peer", r.peer}}, r.bytes);
}

std::optional<MailRecord> decode_mail(const model::Message& m) {
  const auto* p = of_format(m);
  if (p == nullptr || !m.body || m.body->empty()) return std::nullopt;
  auto peer = get(*p, "relay-peer");
  if (!peer || peer->empty()) return std::nullopt;
  return MailRecord{*peer, *m.body};
}

model::MessagePtr encode_entry(const Directory::Entry& e, model::MessageId id, std::int64_t now_ms) {
  return record(kDirectoryQueue, id, now_ms,
                {{"relay-type", e.type}, {"relay-name", e.name}, {"relay-id", e.id}, {"relay-arg", e.arg}});
}

std::optional<Directory::Entry> decode_entry(const model::Message& m) {
  const auto* p = of_format(m);
  if (p == nullptr) return std::nullopt;
  auto type = get(*p, "relay-type");
  auto id = get(*p, "relay-id");
  if (!type || (*type != "PIPE" && *type != "GROUP") || !id || id->empty()) return std::nullopt;
  return Directory::Entry{*type, get(*p, "relay-name").value_or(""), *id, get(*p, "relay-arg").value_or("")};
}

}  // namespace carrier::relay
