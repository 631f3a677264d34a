#include "stomp/codec/escape.hpp"

#include <cstring>

namespace carrier::stomp::codec {

bool escapes_headers(Command command, Version version) {
  if (version == Version::v1_0) return false;
  return command != Command::connect && command != Command::stomp &&
         command != Command::connected;
}

void append_escaped(std::string_view raw, Version version, std::string& out) {
  if (version == Version::v1_0) {
    out.append(raw);
    return;
  }
  const bool escape_cr = version == Version::v1_2;
  // Copy runs of plain bytes in one append; most header values contain nothing to escape.
  std::size_t run = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char* escaped = nullptr;
    switch (raw[i]) {
      case '\\': escaped = "\\\\"; break;
      case '\n': escaped = "\\n"; break;
      case ':': escaped = "\\c"; break;
      case '\r':
        if (escape_cr) escaped = "\\r";
        break;
      default: break;
    }
    if (escaped == nullptr) continue;
    out.append(raw.data() + run, i - run);
    out.append(escaped, 2);
    run = i + 1;
  }
  out.append(raw.data() + run, raw.size() - run);
}

std::size_t unescape_append(std::string_view wire, Version version, std::string& out) {
  if (version == Version::v1_0) {
    out.append(wire);
    return std::string_view::npos;
  }
  const char* const begin = wire.data();
  const char* const end = begin + wire.size();
  const char* p = begin;
  while (p < end) {
    const auto* slash = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (slash == nullptr) {
      out.append(p, static_cast<std::size_t>(end - p));
      break;
    }
    out.append(p, static_cast<std::size_t>(slash - p));
    if (slash + 1 == end) return static_cast<std::size_t>(slash - begin);
    switch (slash[1]) {
      case '\\': out.push_back('\\'); break;
      case 'n': out.push_back('\n'); break;
      case 'c': out.push_back(':'); break;
      case 'r':
        if (version != Version::v1_2) return static_cast<std::size_t>(slash - begin);
        out.push_back('\r');
        break;
      default: return static_cast<std::size_t>(slash - begin);
    }
    p = slash + 2;
  }
  return std::string_view::npos;
}

std::optional<std::string> unescape(std::string_view wire, Version version) {
  std::string out;
  out.reserve(wire.size());
  if (unescape_append(wire, version, out) != std::string_view::npos) return std::nullopt;
  return out;
}

}  // namespace carrier::stomp::codec
