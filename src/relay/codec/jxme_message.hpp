#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

// Seed 000's JXME binary message (its Figure 4 and Listings 1-15), integers big-endian:
//   message: "jxmg", version (1 byte, 0), namespace count (2), per namespace its length (2) and
//            name, element count (2), the elements.
//   element: "jxel", namespace id (1), flags (1), name length (2) and name, [MIME type length (2)
//            and text if flags & kHasMimeType], [encoding length (2) and text if
//            flags & kHasEncoding], content length (4) and content.
// Namespace ids: 0 the empty namespace, 1 "jxta", 2.. the declared ones in order.
namespace carrier::relay::codec {

inline constexpr std::string_view kMediaType = "application/x-jxta-msg";
inline constexpr std::string_view kDefaultMimeType = "application/octet-stream";
inline constexpr std::uint8_t kHasMimeType = 0x01;
inline constexpr std::uint8_t kHasEncoding = 0x02;

// Bounds a decoder is given (docs/relay.md; [relay] max_request_bytes bounds the whole body).
struct Limits {
  std::size_t max_message_bytes = 1u << 20;  // one jxmg message, header to last content byte
  std::size_t max_elements = 1024;
  std::size_t max_namespaces = 64;
};

// One element. The namespace is held by name ("" empty, "jxta", or a declared one), so that a
// message's elements can be moved between messages; the encoder numbers the namespaces.
struct Element {
  std::string ns;
  std::string name;
  std::string content;
  std::optional<std::string> mime_type;  // nullopt: application/octet-stream
  std::optional<std::string> encoding;   // nullopt: the default

  bool operator==(const Element&) const = default;
};

struct Message {
  // The declared namespaces, in header order (ids 2..). Encoding a message declares these and
  // then any other namespace its elements use, in order of first use.
  std::vector<std::string> namespaces;
  std::vector<Element> elements;

  bool operator==(const Message&) const = default;

  // The content of the first element named `name` in namespace `ns`, or nullopt.
  std::optional<std::string_view> find(std::string_view ns, std::string_view name) const;
  // Appends an element with the default MIME type.
  void add(std::string ns, std::string name, std::string content);
};

// Appends the encoding of `m` to `out`. Errc::invalid_argument (and `out` unchanged) when a
// field does not fit its length field or more than 254 namespaces are in use.
Status encode(const Message& m, std::string& out);

// A message decoded from the front of a buffer, and how many bytes it took.
struct Decoded {
  Message message;
  std::size_t consumed = 0;
};

// Decodes the message at the front of `bytes` (bytes after it are left for the caller).
// Errc::protocol_error for a malformed message (bad signature or version, a count or length
// past the end, an undeclared namespace id, unknown flag bits) and Errc::limit_exceeded past
// `limits`; the detail names the field and its byte offset. Never reads past `bytes`.
Result<Decoded> decode_one(std::string_view bytes, const Limits& limits);

// Decodes `bytes` as one or more whole messages back to back (a poll's body); empty input is
// no message. Trailing bytes that are not a whole message are an error.
Result<std::vector<Message>> decode_all(std::string_view bytes, const Limits& limits);

}  // namespace carrier::relay::codec
