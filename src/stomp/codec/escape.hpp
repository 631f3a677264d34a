#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "stomp/codec/frame.hpp"

namespace carrier::stomp::codec {

// STOMP header escaping: \\ \n \c (1.1 and 1.2) and \r (1.2). 1.0 does not escape.
void append_escaped(std::string_view raw, Version version, std::string& out);
// nullopt on an undefined escape sequence (the spec makes that a fatal protocol error).
std::optional<std::string> unescape(std::string_view wire, Version version);

}  // namespace carrier::stomp::codec
