#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "stomp/codec/frame.hpp"

namespace carrier::stomp::codec {

// STOMP header escaping: \\ \n \c (1.1 and 1.2) and \r (1.2). 1.0 does not escape.
void append_escaped(std::string_view raw, Version version, std::string& out);
// nullopt on an undefined escape sequence (the spec makes that a fatal protocol error).
std::optional<std::string> unescape(std::string_view wire, Version version);

// Appends the unescaped `wire` to `out`. Returns std::string_view::npos on success, or the
// offset in `wire` of the backslash that starts an undefined escape sequence (`out` then holds
// a partial result). The decoder uses the offset in its error detail.
std::size_t unescape_append(std::string_view wire, Version version, std::string& out);

// Whether a frame's headers are escaped on the wire: from 1.1 on, except CONNECT, STOMP and
// CONNECTED, whose headers the spec keeps verbatim for the benefit of 1.0 peers.
bool escapes_headers(Command command, Version version);

}  // namespace carrier::stomp::codec
