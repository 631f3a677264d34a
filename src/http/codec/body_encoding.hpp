#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace carrier::http::codec {

// Message bodies travel in JSON as text when they are valid UTF-8, else as base64 (RFC 4648,
// with padding). is_utf8 refuses overlong forms, surrogates and code points past U+10FFFF.
bool is_utf8(std::string_view text);
std::string base64_encode(std::string_view bytes);
// nullopt for anything that is not canonical padded base64 (whitespace included).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace carrier::http::codec
