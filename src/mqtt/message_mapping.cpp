#include "mqtt/message_mapping.hpp"

#include "mqtt/codec/data_types.hpp"
#include "mqtt/topic_map.hpp"

namespace carrier::mqtt {

namespace {

bool is_mqtt_string(std::string_view s) { return s.size() <= codec::kMaxStringBytes && codec::is_valid_utf8(s); }

std::shared_ptr<model::Message> from_fields(std::string_view topic, std::uint8_t qos, bool retain,
                                           const codec::Properties& props, std::string payload, model::MessageId id,
                                           std::int64_t now_ms, std::uint64_t origin) {
  auto m = std::make_shared<model::Message>();
  m->id = id;
  m->destination = model::Destination{model::DestinationKind::topic, to_core_name(topic)};
  m->timestamp_ms = now_ms;
  m->persistent = qos >= 1;
  m->retain = retain;
  if (auto queue = reply_queue_of(topic)) {
    // A reply to a STOMP or HTTP requester: its temporary queue lives only as long as its
    // connection, so nothing is stored or retained.
    m->destination = model::Destination{model::DestinationKind::temp_queue, std::move(*queue)};
    m->persistent = false;
    m->retain = false;
  }
  m->origin = origin;
  if (props.message_expiry_interval) {
    m->expires_ms = now_ms + static_cast<std::int64_t>(*props.message_expiry_interval) * 1000;
  }
  if (props.content_type) m->content_type = *props.content_type;
  if (props.response_topic) m->reply_to = to_reply_to(*props.response_topic);
  if (props.correlation_data) m->correlation_id = *props.correlation_data;
  if (qos == 2) m->properties.emplace_back(kQosProperty, "2");
  if (props.payload_format_indicator == 1) m->properties.emplace_back(kPayloadFormatProperty, "1");
  for (const auto& kv : props.user_properties) m->properties.push_back(kv);
  m->body = std::make_shared<const std::string>(std::move(payload));
  return m;
}

}  // namespace

model::MessagePtr to_core_message(codec::Publish&& p, std::string_view topic, model::MessageId id,
                                 std::int64_t now_ms, std::uint64_t origin) {
  return from_fields(topic, p.qos, p.retain, p.properties, std::move(p.payload), id, now_ms, origin);
}

model::MessagePtr will_message(const codec::Will& w, model::MessageId id, std::int64_t now_ms, std::uint64_t origin) {
  return from_fields(w.topic, w.qos, w.retain, w.properties, w.payload, id, now_ms, origin);
}

std::uint8_t message_qos(const model::Message& m) {
  if (!m.persistent) return 0;
  for (const auto& [k, v] : m.properties) {
    if (k == kQosProperty) return v == "2" ? 2 : 1;
  }
  return 1;
}

std::optional<codec::Publish> to_publish(const model::Message& m, const OutboundOptions& o) {
  auto topic = to_mqtt_name(m.destination.name);
  if (!topic) return std::nullopt;
  auto p = to_publish_header(m, std::move(*topic), o);
  if (p && m.body) p->payload = *m.body;
  return p;
}

std::optional<codec::Publish> to_publish_header(const model::Message& m, std::string topic, const OutboundOptions& o) {
  codec::Publish p;
  p.topic = std::move(topic);
  p.qos = o.qos;
  p.retain = o.retain;
  if (o.version != codec::Version::v5) {
    if (m.expires_ms != 0 && m.expires_ms <= o.now_ms) return std::nullopt;
    return p;
  }
  auto& props = p.properties;
  if (m.expires_ms != 0) {
    const std::int64_t left_ms = m.expires_ms - o.now_ms;
    if (left_ms <= 0) return std::nullopt;
    // The interval the subscriber sees is what is left, rounded up (MQTT 5 3.3.2.3.3).
    props.message_expiry_interval = static_cast<std::uint32_t>(std::min<std::int64_t>((left_ms + 999) / 1000, 0xFFFFFFFF));
  }
  if (!m.content_type.empty() && is_mqtt_string(m.content_type)) props.content_type = m.content_type;
  if (!m.reply_to.empty()) props.response_topic = to_response_topic(m.reply_to);
  if (!m.correlation_id.empty() && m.correlation_id.size() <= codec::kMaxStringBytes) {
    props.correlation_data = m.correlation_id;
  }
  for (const auto& [k, v] : m.properties) {
    if (k == kQosProperty) continue;
    if (k == kPayloadFormatProperty) {
      if (v == "1") props.payload_format_indicator = 1;
      continue;
    }
    if (is_mqtt_string(k) && is_mqtt_string(v)) props.user_properties.emplace_back(k, v);
  }
  if (o.subscription_id != 0) props.subscription_identifiers.push_back(o.subscription_id);
  return p;
}

}  // namespace carrier::mqtt
