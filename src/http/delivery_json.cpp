#include "http/delivery_json.hpp"

#include "http/codec/body_encoding.hpp"

namespace carrier::http {

nlohmann::json delivery_json(const core::Delivery& d) {
  const model::Message& m = *d.message;
  char id[36];
  m.id.to_chars(id);
  nlohmann::json headers = nlohmann::json::object();
  headers["priority"] = std::to_string(m.priority);
  headers["timestamp"] = std::to_string(m.timestamp_ms);
  if (m.persistent) headers["persistent"] = "true";
  if (m.expires_ms != 0) headers["expires"] = std::to_string(m.expires_ms);
  if (!m.correlation_id.empty()) headers["correlation-id"] = m.correlation_id;
  if (!m.reply_to.empty()) headers["reply-to"] = m.reply_to;
  if (!m.type.empty()) headers["type"] = m.type;
  if (!m.content_type.empty()) headers["content-type"] = m.content_type;
  for (const auto& [name, value] : m.properties) {
    if (!headers.contains(name)) headers[name] = value;
  }
  nlohmann::json out{{"id", std::string(id, sizeof id)},
                     {"destination", m.destination.uri()},
                     {"redelivered", d.redelivered},
                     {"delivery_count", d.delivery_count},
                     {"headers", std::move(headers)}};
  const std::string_view body = m.body ? std::string_view(*m.body) : std::string_view();
  if (codec::is_utf8(body)) {
    out["body"] = std::string(body);
  } else {
    out["body_base64"] = codec::base64_encode(body);
  }
  return out;
}

}  // namespace carrier::http
