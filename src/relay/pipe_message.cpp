#include "relay/pipe_message.hpp"

#include <sodium.h>

namespace carrier::relay {

namespace {

constexpr std::string_view kProxyNamespace = "proxy";
constexpr std::string_view kJxta = "jxta";
// Properties are header lines for STOMP and UTF-8 strings for MQTT 5: longer or binary element
// contents travel only inside jxme-elements.
constexpr std::size_t kMaxPropertyBytes = 4096;

bool is_property_text(std::string_view s) {
  if (s.size() > kMaxPropertyBytes) return false;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

std::string base64(std::string_view bytes) {
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    sodium_base64_VARIANT_ORIGINAL);
  out.resize(out.size() - 1);  // its NUL
  return out;
}

bool unbase64(std::string_view text, std::string& out) {
  out.resize(text.size() / 4 * 3 + 3);
  std::size_t n = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(), text.size(), nullptr, &n,
                        nullptr, sodium_base64_VARIANT_ORIGINAL) != 0) {
    return false;
  }
  out.resize(n);
  return true;
}

bool is_body(const codec::Element& e) { return e.ns.empty() && e.name == "message"; }

}  // namespace

std::vector<codec::Element> application_elements(const codec::Message& request) {
  std::vector<codec::Element> out;
  for (const auto& e : request.elements) {
    if (e.ns == kProxyNamespace) continue;
    if (e.ns == kJxta && (e.name == "EndpointDestinationAddress" || e.name == "EndpointSourceAddress")) continue;
    out.push_back(e);
  }
  return out;
}

void fill_message(const std::vector<codec::Element>& elements, model::Message& m) {
  std::string body;
  bool has_body = false;
  for (const auto& e : elements) {
    if (!has_body && is_body(e)) {
      has_body = true;
      body = e.content;
      if (e.mime_type) m.content_type = *e.mime_type;
      continue;
    }
    std::string name = e.ns.empty() ? e.name : e.ns + ":" + e.name;
    if (name == kElementsProperty || !is_property_text(name) || !is_property_text(e.content)) continue;
    bool seen = false;
    for (const auto& [n, v] : m.properties) seen = seen || n == name;
    if (!seen) m.properties.emplace_back(std::move(name), e.content);
  }
  codec::Message carried;
  carried.elements = elements;
  std::string wire;
  if (encode(carried, wire)) m.properties.emplace_back(std::string(kElementsProperty), base64(wire));
  m.body = std::make_shared<const std::string>(std::move(body));
}

std::vector<codec::Element> elements_of(const model::Message& m) {
  for (const auto& [name, value] : m.properties) {
    if (name != kElementsProperty) continue;
    std::string wire;
    if (!unbase64(value, wire)) break;
    // Written by fill_message: well formed and bounded by the request that carried it.
    auto decoded = codec::decode_one(wire, codec::Limits{.max_message_bytes = wire.size(),
                                                         .max_elements = 65535,
                                                         .max_namespaces = 254});
    if (decoded && decoded->consumed == wire.size()) return std::move(decoded->message.elements);
    break;
  }
  std::vector<codec::Element> out;
  for (const auto& [name, value] : m.properties) {
    if (name == kElementsProperty) continue;
    const auto colon = name.find(':');
    codec::Element e;
    if (colon != std::string::npos) {
      e.ns = name.substr(0, colon);
      e.name = name.substr(colon + 1);
    } else {
      e.name = name;
    }
    e.content = value;
    out.push_back(std::move(e));
  }
  codec::Element body{"", "message", m.body ? *m.body : std::string(), std::nullopt, std::nullopt};
  if (!m.content_type.empty() && m.content_type != codec::kDefaultMimeType) body.mime_type = m.content_type;
  out.push_back(std::move(body));
  return out;
}

}  // namespace carrier::relay
