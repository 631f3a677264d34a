#include "mqtt/codec/properties.hpp"

#include <fmt/format.h>

#include "base/assert.hpp"
#include "mqtt/codec/data_types.hpp"
#include "mqtt/codec/topic_syntax.hpp"

namespace carrier::mqtt::codec {

namespace {

enum class Type : std::uint8_t { byte, two_byte, four_byte, variable_int, utf8, binary, utf8_pair };

constexpr std::uint16_t bit(PropertyContext c) { return static_cast<std::uint16_t>(1u << static_cast<unsigned>(c)); }

using C = PropertyContext;
constexpr std::uint16_t kAll = 0x7FF;

struct Spec {
  PropertyId id;
  Type type;
  std::uint16_t contexts;
  const char* name;
};

// Section 2.2.2.2, table 2-4.
constexpr Spec kSpecs[] = {
    {PropertyId::payload_format_indicator, Type::byte, bit(C::publish) | bit(C::will), "payload format indicator"},
    {PropertyId::message_expiry_interval, Type::four_byte, bit(C::publish) | bit(C::will), "message expiry interval"},
    {PropertyId::content_type, Type::utf8, bit(C::publish) | bit(C::will), "content type"},
    {PropertyId::response_topic, Type::utf8, bit(C::publish) | bit(C::will), "response topic"},
    {PropertyId::correlation_data, Type::binary, bit(C::publish) | bit(C::will), "correlation data"},
    {PropertyId::subscription_identifier, Type::variable_int, bit(C::publish) | bit(C::subscribe),
     "subscription identifier"},
    {PropertyId::session_expiry_interval, Type::four_byte, bit(C::connect) | bit(C::connack) | bit(C::disconnect),
     "session expiry interval"},
    {PropertyId::assigned_client_identifier, Type::utf8, bit(C::connack), "assigned client identifier"},
    {PropertyId::server_keep_alive, Type::two_byte, bit(C::connack), "server keep alive"},
    {PropertyId::authentication_method, Type::utf8, bit(C::connect) | bit(C::connack) | bit(C::auth),
     "authentication method"},
    {PropertyId::authentication_data, Type::binary, bit(C::connect) | bit(C::connack) | bit(C::auth),
     "authentication data"},
    {PropertyId::request_problem_information, Type::byte, bit(C::connect), "request problem information"},
    {PropertyId::will_delay_interval, Type::four_byte, bit(C::will), "will delay interval"},
    {PropertyId::request_response_information, Type::byte, bit(C::connect), "request response information"},
    {PropertyId::response_information, Type::utf8, bit(C::connack), "response information"},
    {PropertyId::server_reference, Type::utf8, bit(C::connack) | bit(C::disconnect), "server reference"},
    {PropertyId::reason_string, Type::utf8,
     bit(C::connack) | bit(C::publish_response) | bit(C::suback) | bit(C::unsuback) | bit(C::disconnect) |
         bit(C::auth),
     "reason string"},
    {PropertyId::receive_maximum, Type::two_byte, bit(C::connect) | bit(C::connack), "receive maximum"},
    {PropertyId::topic_alias_maximum, Type::two_byte, bit(C::connect) | bit(C::connack), "topic alias maximum"},
    {PropertyId::topic_alias, Type::two_byte, bit(C::publish), "topic alias"},
    {PropertyId::maximum_qos, Type::byte, bit(C::connack), "maximum qos"},
    {PropertyId::retain_available, Type::byte, bit(C::connack), "retain available"},
    {PropertyId::user_property, Type::utf8_pair, kAll, "user property"},
    {PropertyId::maximum_packet_size, Type::four_byte, bit(C::connect) | bit(C::connack), "maximum packet size"},
    {PropertyId::wildcard_subscription_available, Type::byte, bit(C::connack), "wildcard subscription available"},
    {PropertyId::subscription_identifier_available, Type::byte, bit(C::connack),
     "subscription identifier available"},
    {PropertyId::shared_subscription_available, Type::byte, bit(C::connack), "shared subscription available"},
};

const Spec* find_spec(std::uint8_t id) {
  for (const auto& s : kSpecs) {
    if (static_cast<std::uint8_t>(s.id) == id) return &s;
  }
  return nullptr;
}

const char* context_name(PropertyContext c) {
  switch (c) {
    case C::connect: return "CONNECT";
    case C::connack: return "CONNACK";
    case C::publish: return "PUBLISH";
    case C::will: return "will";
    case C::publish_response: return "PUBACK/PUBREC/PUBREL/PUBCOMP";
    case C::subscribe: return "SUBSCRIBE";
    case C::suback: return "SUBACK";
    case C::unsubscribe: return "UNSUBSCRIBE";
    case C::unsuback: return "UNSUBACK";
    case C::disconnect: return "DISCONNECT";
    case C::auth: return "AUTH";
  }
  return "?";
}

// Sets a single-valued property, refusing a repeat.
template <class T>
bool set_once(Reader& in, std::optional<T>& slot, T value, const Spec& spec, std::size_t at) {
  if (slot) return in.fail(ReasonCode::protocol_error, at, fmt::format("{} appears twice", spec.name));
  slot = std::move(value);
  return true;
}

// Values the spec restricts (a Protocol Error otherwise).
bool check_range(Reader& in, const Spec& spec, std::uint32_t v, std::size_t at) {
  switch (spec.id) {
    case PropertyId::payload_format_indicator:
    case PropertyId::request_problem_information:
    case PropertyId::request_response_information:
    case PropertyId::maximum_qos:
    case PropertyId::retain_available:
    case PropertyId::wildcard_subscription_available:
    case PropertyId::subscription_identifier_available:
    case PropertyId::shared_subscription_available:
      if (v > 1) return in.fail(ReasonCode::protocol_error, at, fmt::format("{} must be 0 or 1, got {}", spec.name, v));
      return true;
    case PropertyId::receive_maximum:
    case PropertyId::maximum_packet_size:
    case PropertyId::topic_alias:
    case PropertyId::subscription_identifier:
      if (v == 0) return in.fail(ReasonCode::protocol_error, at, fmt::format("{} must not be 0", spec.name));
      return true;
    default: return true;
  }
}

bool decode_one(Reader& in, const Spec& spec, std::size_t at, Properties& p) {
  std::uint8_t b = 0;
  std::uint16_t u16 = 0;
  std::uint32_t u32 = 0;
  std::string s;
  switch (spec.type) {
    case Type::byte:
      if (!in.u8(b, spec.name) || !check_range(in, spec, b, at)) return false;
      break;
    case Type::two_byte:
      if (!in.u16(u16, spec.name) || !check_range(in, spec, u16, at)) return false;
      break;
    case Type::four_byte:
      if (!in.u32(u32, spec.name) || !check_range(in, spec, u32, at)) return false;
      break;
    case Type::variable_int:
      if (!in.variable_int(u32, spec.name) || !check_range(in, spec, u32, at)) return false;
      break;
    case Type::utf8:
      if (!in.utf8(s, spec.name)) return false;
      // A response topic is a topic name: no wildcards (MQTT-3.3.2-14), like mosquitto.
      if (spec.id == PropertyId::response_topic && !is_valid_topic_name(s)) {
        return in.fail(ReasonCode::protocol_error, at, "response topic is empty or has wildcards");
      }
      break;
    case Type::binary:
      if (!in.binary(s, spec.name)) return false;
      break;
    case Type::utf8_pair: {
      std::string key, val;
      if (!in.utf8(key, "user property name") || !in.utf8(val, "user property value")) return false;
      p.user_properties.emplace_back(std::move(key), std::move(val));
      return true;
    }
  }
  switch (spec.id) {
    case PropertyId::payload_format_indicator: return set_once(in, p.payload_format_indicator, b, spec, at);
    case PropertyId::message_expiry_interval: return set_once(in, p.message_expiry_interval, u32, spec, at);
    case PropertyId::content_type: return set_once(in, p.content_type, std::move(s), spec, at);
    case PropertyId::response_topic: return set_once(in, p.response_topic, std::move(s), spec, at);
    case PropertyId::correlation_data: return set_once(in, p.correlation_data, std::move(s), spec, at);
    case PropertyId::subscription_identifier:
      p.subscription_identifiers.push_back(u32);
      return true;
    case PropertyId::session_expiry_interval: return set_once(in, p.session_expiry_interval, u32, spec, at);
    case PropertyId::assigned_client_identifier:
      return set_once(in, p.assigned_client_identifier, std::move(s), spec, at);
    case PropertyId::server_keep_alive: return set_once(in, p.server_keep_alive, u16, spec, at);
    case PropertyId::authentication_method: return set_once(in, p.authentication_method, std::move(s), spec, at);
    case PropertyId::authentication_data: return set_once(in, p.authentication_data, std::move(s), spec, at);
    case PropertyId::request_problem_information: return set_once(in, p.request_problem_information, b, spec, at);
    case PropertyId::will_delay_interval: return set_once(in, p.will_delay_interval, u32, spec, at);
    case PropertyId::request_response_information:
      return set_once(in, p.request_response_information, b, spec, at);
    case PropertyId::response_information: return set_once(in, p.response_information, std::move(s), spec, at);
    case PropertyId::server_reference: return set_once(in, p.server_reference, std::move(s), spec, at);
    case PropertyId::reason_string: return set_once(in, p.reason_string, std::move(s), spec, at);
    case PropertyId::receive_maximum: return set_once(in, p.receive_maximum, u16, spec, at);
    case PropertyId::topic_alias_maximum: return set_once(in, p.topic_alias_maximum, u16, spec, at);
    case PropertyId::topic_alias: return set_once(in, p.topic_alias, u16, spec, at);
    case PropertyId::maximum_qos: return set_once(in, p.maximum_qos, b, spec, at);
    case PropertyId::retain_available: return set_once(in, p.retain_available, b, spec, at);
    case PropertyId::user_property: return true;  // handled above
    case PropertyId::maximum_packet_size: return set_once(in, p.maximum_packet_size, u32, spec, at);
    case PropertyId::wildcard_subscription_available:
      return set_once(in, p.wildcard_subscription_available, b, spec, at);
    case PropertyId::subscription_identifier_available:
      return set_once(in, p.subscription_identifier_available, b, spec, at);
    case PropertyId::shared_subscription_available:
      return set_once(in, p.shared_subscription_available, b, spec, at);
  }
  return true;
}

// --- encoding

struct Emitter {
  PropertyContext context;
  std::string& out;

  void head(PropertyId id) {
    CARRIER_DASSERT(is_allowed(id, context), "property {} not allowed in {}", to_string(id), context_name(context));
    out.push_back(static_cast<char>(id));
  }
  void byte(PropertyId id, const std::optional<std::uint8_t>& v) {
    if (!v) return;
    head(id);
    put_u8(out, *v);
  }
  void two(PropertyId id, const std::optional<std::uint16_t>& v) {
    if (!v) return;
    head(id);
    put_u16(out, *v);
  }
  void four(PropertyId id, const std::optional<std::uint32_t>& v) {
    if (!v) return;
    head(id);
    put_u32(out, *v);
  }
  void str(PropertyId id, const std::optional<std::string>& v) {
    if (!v) return;
    head(id);
    put_string(out, *v);
  }
};

template <class T>
std::size_t opt_size(const std::optional<T>& v, std::size_t n) {
  return v ? 1 + n : 0;
}
std::size_t opt_str_size(const std::optional<std::string>& v) { return v ? 3 + v->size() : 0; }

std::size_t body_size(const Properties& p) {
  std::size_t n = 0;
  n += opt_size(p.payload_format_indicator, 1);
  n += opt_size(p.message_expiry_interval, 4);
  n += opt_str_size(p.content_type);
  n += opt_str_size(p.response_topic);
  n += opt_str_size(p.correlation_data);
  for (auto id : p.subscription_identifiers) n += 1 + variable_int_size(id);
  n += opt_size(p.session_expiry_interval, 4);
  n += opt_str_size(p.assigned_client_identifier);
  n += opt_size(p.server_keep_alive, 2);
  n += opt_str_size(p.authentication_method);
  n += opt_str_size(p.authentication_data);
  n += opt_size(p.request_problem_information, 1);
  n += opt_size(p.will_delay_interval, 4);
  n += opt_size(p.request_response_information, 1);
  n += opt_str_size(p.response_information);
  n += opt_str_size(p.server_reference);
  n += opt_str_size(p.reason_string);
  n += opt_size(p.receive_maximum, 2);
  n += opt_size(p.topic_alias_maximum, 2);
  n += opt_size(p.topic_alias, 2);
  n += opt_size(p.maximum_qos, 1);
  n += opt_size(p.retain_available, 1);
  n += opt_size(p.maximum_packet_size, 4);
  n += opt_size(p.wildcard_subscription_available, 1);
  n += opt_size(p.subscription_identifier_available, 1);
  n += opt_size(p.shared_subscription_available, 1);
  for (const auto& [k, v] : p.user_properties) n += 5 + k.size() + v.size();
  return n;
}

}  // namespace

const char* to_string(PropertyId id) noexcept {
  const Spec* s = find_spec(static_cast<std::uint8_t>(id));
  return s != nullptr ? s->name : "unknown property";
}

bool Properties::empty() const { return body_size(*this) == 0; }  // every present property has an id byte

bool is_allowed(PropertyId id, PropertyContext context) noexcept {
  const Spec* s = find_spec(static_cast<std::uint8_t>(id));
  return s != nullptr && (s->contexts & bit(context)) != 0;
}

bool decode_properties(Reader& in, PropertyContext context, Properties& out) {
  std::uint32_t length = 0;
  if (!in.variable_int(length, "property length")) return false;
  Reader block(std::string_view{}, 0);
  if (!in.sub(length, block, "property block")) return false;
  while (!block.at_end()) {
    const std::size_t at = block.offset();
    // The identifier is a variable byte integer; every defined one fits in its first byte.
    std::uint32_t raw = 0;
    if (!block.variable_int(raw, "property identifier")) break;
    const Spec* spec = raw <= 0xFF ? find_spec(static_cast<std::uint8_t>(raw)) : nullptr;
    if (spec == nullptr) {
      block.fail(ReasonCode::malformed_packet, at, fmt::format("unknown property identifier 0x{:02x}", raw));
      break;
    }
    if ((spec->contexts & bit(context)) == 0) {
      // "Not valid for its packet type" is a Malformed Packet (2.2.2.2), as mosquitto answers.
      block.fail(ReasonCode::malformed_packet, at,
                 fmt::format("{} is not allowed in {}", spec->name, context_name(context)));
      break;
    }
    if (context == C::subscribe && spec->id == PropertyId::subscription_identifier &&
        !out.subscription_identifiers.empty()) {
      block.fail(ReasonCode::protocol_error, at, "subscription identifier appears twice");
      break;
    }
    if (!decode_one(block, *spec, at, out)) break;
  }
  in.take_error_from(block);
  return !in.failed();
}

std::size_t encoded_properties_size(const Properties& p) {
  const std::size_t body = body_size(p);
  return variable_int_size(static_cast<std::uint32_t>(body)) + body;
}

void encode_properties(const Properties& p, PropertyContext context, std::string& out) {
  put_variable_int(out, static_cast<std::uint32_t>(body_size(p)));
  Emitter e{context, out};
  using I = PropertyId;
  e.byte(I::payload_format_indicator, p.payload_format_indicator);
  e.four(I::message_expiry_interval, p.message_expiry_interval);
  e.str(I::content_type, p.content_type);
  e.str(I::response_topic, p.response_topic);
  e.str(I::correlation_data, p.correlation_data);
  for (auto id : p.subscription_identifiers) {
    e.head(I::subscription_identifier);
    put_variable_int(out, id);
  }
  e.four(I::session_expiry_interval, p.session_expiry_interval);
  e.str(I::assigned_client_identifier, p.assigned_client_identifier);
  e.two(I::server_keep_alive, p.server_keep_alive);
  e.str(I::authentication_method, p.authentication_method);
  e.str(I::authentication_data, p.authentication_data);
  e.byte(I::request_problem_information, p.request_problem_information);
  e.four(I::will_delay_interval, p.will_delay_interval);
  e.byte(I::request_response_information, p.request_response_information);
  e.str(I::response_information, p.response_information);
  e.str(I::server_reference, p.server_reference);
  e.str(I::reason_string, p.reason_string);
  e.two(I::receive_maximum, p.receive_maximum);
  e.two(I::topic_alias_maximum, p.topic_alias_maximum);
  e.two(I::topic_alias, p.topic_alias);
  e.byte(I::maximum_qos, p.maximum_qos);
  e.byte(I::retain_available, p.retain_available);
  e.four(I::maximum_packet_size, p.maximum_packet_size);
  e.byte(I::wildcard_subscription_available, p.wildcard_subscription_available);
  e.byte(I::subscription_identifier_available, p.subscription_identifier_available);
  e.byte(I::shared_subscription_available, p.shared_subscription_available);
  for (const auto& [k, v] : p.user_properties) {
    e.head(I::user_property);
    put_string(out, k);
    put_string(out, v);
  }
}

}  // namespace carrier::mqtt::codec
