#include "http/codec/query.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace carrier::http::codec {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Values in error texts are the client's bytes: shortened, so a huge value is not echoed back.
std::string_view excerpt(std::string_view text) { return text.substr(0, 64); }

}  // namespace

Target split_target(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q + 1)};
}

Result<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int hi = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return unexpected(Errc::invalid_argument, fmt::format("malformed percent-escape in '{}'", excerpt(text)));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<Params> parse_query(std::string_view query, std::size_t max_params) {
  Params params;
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    if (params.size() == max_params) {
      return unexpected(Errc::invalid_argument, fmt::format("more than {} query parameters", max_params));
    }
    const auto eq = pair.find('=');
    auto name = percent_decode(pair.substr(0, eq), true);
    if (!name) return unexpected(name.error());
    auto value = percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!value) return unexpected(value.error());
    params.emplace_back(std::move(*name), std::move(*value));
  }
  return params;
}

std::optional<std::string_view> find_param(const Params& params, std::string_view name) {
  for (const auto& [n, v] : params) {
    if (n == name) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<std::string_view> unknown_param(const Params& params, std::initializer_list<std::string_view> allowed) {
  for (const auto& [name, value] : params) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) return std::string_view(name);
  }
  return std::nullopt;
}

Result<std::uint64_t> parse_bounded(std::string_view text, std::string_view name, std::uint64_t min,
                                    std::uint64_t max) {
  std::uint64_t value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || value < min || value > max) {
    return unexpected(Errc::invalid_argument,
                      fmt::format("{} must be a whole number from {} to {}, got '{}'", name, min, max, excerpt(text)));
  }
  return value;
}

Result<std::uint64_t> parse_duration_ms(std::string_view text, std::string_view name, std::uint64_t max_ms) {
  std::uint64_t scale = 1000;  // a bare number is seconds
  std::string_view digits = text;
  if (text.ends_with("ms")) {
    scale = 1;
    digits.remove_suffix(2);
  } else if (text.ends_with('s')) {
    digits.remove_suffix(1);
  } else if (text.ends_with('m')) {
    scale = 60'000;
    digits.remove_suffix(1);
  }
  std::uint64_t value = 0;
  const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  // Checked before multiplying: 2^63 seconds must not wrap into a small number of ms.
  if (digits.empty() || r.ec != std::errc() || r.ptr != digits.data() + digits.size() || value > max_ms / scale) {
    return unexpected(Errc::invalid_argument,
                      fmt::format("{} must be a duration from 0 to {} ms (e.g. 30s, 500ms), got '{}'", name, max_ms,
                                  excerpt(text)));
  }
  return value * scale;
}

Result<bool> parse_flag(std::string_view text, std::string_view name) {
  if (text == "true" || text == "1" || text == "yes") return true;
  if (text == "false" || text == "0" || text == "no") return false;
  return unexpected(Errc::invalid_argument, fmt::format("{} must be true or false, got '{}'", name, excerpt(text)));
}

}  // namespace carrier::http::codec
