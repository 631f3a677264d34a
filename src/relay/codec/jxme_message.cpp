#include "relay/codec/jxme_message.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace carrier::relay::codec {

namespace {

constexpr std::string_view kMessageSignature = "jxmg";
constexpr std::string_view kElementSignature = "jxel";
constexpr std::uint8_t kVersion = 0;
constexpr std::uint8_t kKnownFlags = kHasMimeType | kHasEncoding;
constexpr std::string_view kJxtaNamespace = "jxta";

void put_u16(std::string& out, std::size_t v) {
  out.push_back(static_cast<char>((v >> 8) & 0xff));
  out.push_back(static_cast<char>(v & 0xff));
}

void put_u32(std::string& out, std::size_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// Reads fields from the front of a buffer, never past its end, counting offsets for errors.
class Reader {
 public:
  // `limit`: a message may not reach past it (Errc::limit_exceeded), whether or not the bytes
  // after it have arrived, so that what is read and allocated stays bounded.
  Reader(std::string_view bytes, std::size_t limit) : bytes_(bytes.substr(0, limit)), capped_(bytes.size() > limit) {}

  Result<std::string_view> take(std::size_t n, std::string_view what) {
    if (n > bytes_.size() - at_) {
      if (capped_) return fail(what, fmt::format("the message is longer than {} bytes", bytes_.size()), Errc::limit_exceeded);
      return fail(what, fmt::format("needs {} bytes, {} are left", n, bytes_.size() - at_));
    }
    auto s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  Result<std::uint32_t> uint(std::size_t width, std::string_view what) {
    auto raw = take(width, what);
    if (!raw) return unexpected(raw.error());
    std::uint32_t v = 0;
    for (char c : *raw) v = (v << 8) | static_cast<unsigned char>(c);
    return v;
  }
  // A length field of `width` bytes and the bytes it counts.
  Result<std::string_view> counted(std::size_t width, std::string_view what) {
    const std::size_t at = at_;
    auto n = uint(width, what);
    if (!n) return unexpected(n.error());
    auto s = take(*n, what);
    if (!s) at_ = at;
    return s;
  }
  std::size_t offset() const { return at_; }
  Unexpected fail(std::string_view what, std::string_view problem, Errc code = Errc::protocol_error) const {
    return unexpected(code, fmt::format("jxme message: {} at byte {}: {}", what, at_, problem));
  }

 private:
  std::string_view bytes_;
  bool capped_ = false;
  std::size_t at_ = 0;
};

Result<Element> read_element(Reader& in, const std::vector<std::string>& namespaces) {
  auto signature = in.take(4, "element signature");
  if (!signature) return unexpected(signature.error());
  if (*signature != kElementSignature) return in.fail("element signature", "is not \"jxel\"");
  auto ns_id = in.uint(1, "element namespace id");
  if (!ns_id) return unexpected(ns_id.error());
  if (*ns_id >= namespaces.size() + 2) {
    return in.fail("element namespace id", fmt::format("{} is not declared ({} namespaces)", *ns_id, namespaces.size()));
  }
  auto flags = in.uint(1, "element flags");
  if (!flags) return unexpected(flags.error());
  if ((*flags & ~kKnownFlags) != 0) return in.fail("element flags", fmt::format("unknown bits 0x{:02x}", *flags));
  Element e;
  e.ns = *ns_id == 0 ? std::string() : *ns_id == 1 ? std::string(kJxtaNamespace) : namespaces[*ns_id - 2];
  auto name = in.counted(2, "element name");
  if (!name) return unexpected(name.error());
  e.name = std::string(*name);
  if (*flags & kHasMimeType) {
    auto mime = in.counted(2, "element MIME type");
    if (!mime) return unexpected(mime.error());
    e.mime_type = std::string(*mime);
  }
  if (*flags & kHasEncoding) {
    auto encoding = in.counted(2, "element encoding");
    if (!encoding) return unexpected(encoding.error());
    e.encoding = std::string(*encoding);
  }
  auto content = in.counted(4, "element content");
  if (!content) return unexpected(content.error());
  e.content = std::string(*content);
  return e;
}

}  // namespace

std::optional<std::string_view> Message::find(std::string_view ns, std::string_view name) const {
  for (const auto& e : elements) {
    if (e.ns == ns && e.name == name) return std::string_view(e.content);
  }
  return std::nullopt;
}

void Message::add(std::string ns, std::string name, std::string content) {
  elements.push_back(Element{std::move(ns), std::move(name), std::move(content), std::nullopt, std::nullopt});
}

Status encode(const Message& m, std::string& out) {
  std::vector<std::string_view> declared(m.namespaces.begin(), m.namespaces.end());
  auto id_of = [&declared](std::string_view ns) -> std::size_t {
    if (ns.empty()) return 0;
    if (ns == kJxtaNamespace) return 1;
    auto it = std::find(declared.begin(), declared.end(), ns);
    if (it == declared.end()) {
      declared.push_back(ns);
      return declared.size() + 1;
    }
    return static_cast<std::size_t>(it - declared.begin()) + 2;
  };
  std::vector<std::size_t> ids;
  ids.reserve(m.elements.size());
  for (const auto& e : m.elements) ids.push_back(id_of(e.ns));
  auto too_long = [](std::string_view what, std::size_t n) {
    return unexpected(Errc::invalid_argument, fmt::format("jxme message: {} of {} bytes does not fit", what, n));
  };
  if (declared.size() + 2 > 0x100) return unexpected(Errc::invalid_argument, "jxme message: more than 254 namespaces");
  if (m.elements.size() > 0xffff) return too_long("the element count", m.elements.size());
  for (auto ns : declared) {
    if (ns.size() > 0xffff) return too_long("a namespace name", ns.size());
  }
  for (const auto& e : m.elements) {
    if (e.name.size() > 0xffff) return too_long("an element name", e.name.size());
    if (e.mime_type && e.mime_type->size() > 0xffff) return too_long("a MIME type", e.mime_type->size());
    if (e.encoding && e.encoding->size() > 0xffff) return too_long("an encoding", e.encoding->size());
    if (e.content.size() > 0xffffffffu) return too_long("an element's content", e.content.size());
  }
  out.append(kMessageSignature);
  out.push_back(static_cast<char>(kVersion));
  put_u16(out, declared.size());
  for (auto ns : declared) {
    put_u16(out, ns.size());
    out.append(ns);
  }
  put_u16(out, m.elements.size());
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const Element& e = m.elements[i];
    out.append(kElementSignature);
    out.push_back(static_cast<char>(ids[i]));
    out.push_back(static_cast<char>((e.mime_type ? kHasMimeType : 0) | (e.encoding ? kHasEncoding : 0)));
    put_u16(out, e.name.size());
    out.append(e.name);
    if (e.mime_type) {
      put_u16(out, e.mime_type->size());
      out.append(*e.mime_type);
    }
    if (e.encoding) {
      put_u16(out, e.encoding->size());
      out.append(*e.encoding);
    }
    put_u32(out, e.content.size());
    out.append(e.content);
  }
  return {};
}

Result<Decoded> decode_one(std::string_view bytes, const Limits& limits) {
  Reader in(bytes, limits.max_message_bytes);
  auto signature = in.take(4, "message signature");
  if (!signature) return unexpected(signature.error());
  if (*signature != kMessageSignature) return in.fail("message signature", "is not \"jxmg\"");
  auto version = in.uint(1, "message version");
  if (!version) return unexpected(version.error());
  if (*version != kVersion) return in.fail("message version", fmt::format("{} is not 0", *version));
  auto ns_count = in.uint(2, "namespace count");
  if (!ns_count) return unexpected(ns_count.error());
  if (*ns_count > limits.max_namespaces) {
    return in.fail("namespace count", fmt::format("{} is more than {}", *ns_count, limits.max_namespaces),
                   Errc::limit_exceeded);
  }
  Decoded d;
  for (std::uint32_t i = 0; i < *ns_count; ++i) {
    auto ns = in.counted(2, "namespace name");
    if (!ns) return unexpected(ns.error());
    // Ids 0 and 1 are the empty and the jxta namespace already, and a name has one id: declaring
    // either again, or a name twice, would give one element two spellings on the wire.
    if (ns->empty() || *ns == kJxtaNamespace ||
        std::find(d.message.namespaces.begin(), d.message.namespaces.end(), *ns) != d.message.namespaces.end()) {
      return in.fail("namespace name", fmt::format("'{}' is empty, jxta or declared twice", ns->substr(0, 64)));
    }
    d.message.namespaces.emplace_back(*ns);
  }
  auto count = in.uint(2, "element count");
  if (!count) return unexpected(count.error());
  if (*count > limits.max_elements) {
    return in.fail("element count", fmt::format("{} is more than {}", *count, limits.max_elements), Errc::limit_exceeded);
  }
  d.message.elements.reserve(std::min<std::size_t>(*count, bytes.size() / 14 + 1));
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto e = read_element(in, d.message.namespaces);
    if (!e) return unexpected(e.error());
    d.message.elements.push_back(std::move(*e));
  }
  d.consumed = in.offset();
  return d;
}

Result<std::vector<Message>> decode_all(std::string_view bytes, const Limits& limits) {
  std::vector<Message> out;
  std::size_t at = 0;
  while (at < bytes.size()) {
    auto one = decode_one(bytes.substr(at), limits);
    if (!one) {
      auto e = one.error();
      if (at != 0) e.detail = fmt::format("message {} (at byte {}): {}", out.size() + 1, at, e.detail);
      return unexpected(std::move(e));
    }
    at += one->consumed;
    out.push_back(std::move(one->message));
  }
  return out;
}

}  // namespace carrier::relay::codec
