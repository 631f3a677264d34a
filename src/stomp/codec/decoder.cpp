#include "stomp/codec/decoder.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "stomp/codec/escape.hpp"

namespace carrier::stomp::codec {
namespace {

// The longest command line, "UNSUBSCRIBE\r": a longer line without an EOL is no command, so a
// peer that sends garbage (an HTTP request, a TLS hello) is rejected after a few bytes.
constexpr std::size_t kMaxCommandLine = 12;

// Bytes quoted in an error detail, so a binary or huge field cannot flood a log line.
constexpr std::size_t kMaxQuoted = 32;

std::string quote(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < bytes.size() && i < kMaxQuoted; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out.push_back(static_cast<char>(c));
    } else {
      out.append("\\x");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  if (bytes.size() > kMaxQuoted) out.append("...");
  out.push_back('\'');
  return out;
}

std::string at(std::size_t offset) { return " at offset " + std::to_string(offset); }

// The offset in `wire` of the first backslash that starts an undefined escape, or npos. Checked
// while scanning headers so that a bad escape is reported before the body arrives, and so the
// second pass, which builds the strings, cannot fail.
std::size_t find_invalid_escape(std::string_view wire, Version version) {
  const char* const begin = wire.data();
  const char* const end = begin + wire.size();
  const char* p = begin;
  while (p < end) {
    const auto* slash =
        static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (slash == nullptr) break;
    if (slash + 1 == end) return static_cast<std::size_t>(slash - begin);
    const char next = slash[1];
    const bool defined =
        next == '\\' || next == 'n' || next == 'c' || (next == 'r' && version == Version::v1_2);
    if (!defined) return static_cast<std::size_t>(slash - begin);
    p = slash + 2;
  }
  return std::string_view::npos;
}

// Finds the line starting at `pos`. False if its EOL has not arrived yet.
bool next_line(std::string_view input, std::size_t pos, std::size_t& content_end,
               std::size_t& next) {
  const auto* nl =
      static_cast<const char*>(std::memchr(input.data() + pos, '\n', input.size() - pos));
  if (nl == nullptr) return false;
  const auto eol = static_cast<std::size_t>(nl - input.data());
  content_end = (eol > pos && input[eol - 1] == '\r') ? eol - 1 : eol;
  next = eol + 1;
  return true;
}

// Parses a content-length value: one or more ASCII digits. Returns false if malformed; a value
// too large for size_t saturates, since any such value exceeds every frame limit anyway.
bool parse_content_length(std::string_view text, std::size_t& value) {
  if (text.empty()) return false;
  value = 0;
  constexpr std::size_t kSaturated = static_cast<std::size_t>(-1);
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<std::size_t>(c - '0');
    if (value > (kSaturated - digit) / 10) {
      value = kSaturated;
    } else if (value != kSaturated) {
      value = value * 10 + digit;
    }
  }
  return true;
}

}  // namespace

Result<DecodeStep> decode(std::string_view input, Version version, const DecoderLimits& limits) {
  const std::size_t n = input.size();
  DecodeStep step;

  // Heart-beats: bare EOLs before a frame. A trailing lone CR may be half of one, or the start
  // of a garbage command line; either way nothing more can be decided until the next byte.
  std::size_t pos = 0;
  while (pos < n) {
    if (input[pos] == '\n') {
      ++pos;
    } else if (input[pos] == '\r' && pos + 1 < n && input[pos + 1] == '\n') {
      pos += 2;
    } else {
      break;
    }
  }
  const std::size_t start = pos;
  step.consumed = start;
  // need_at_least counts from the first byte the caller keeps, i.e. after `consumed`.
  auto need_more = [&](std::size_t absolute_end) -> Result<DecodeStep> {
    step.need_at_least = absolute_end - start;
    return step;
  };
  // Every byte from `start` to the end of the input belongs to the unfinished frame, so this
  // is a lower bound on its size: rejecting on it never rejects a frame that would fit.
  auto unfinished_too_large = [&] { return n - start > limits.max_frame_bytes; };
  auto too_large = [&](std::string_view where) {
    return unexpected(Errc::limit_exceeded,
                      "frame larger than max_frame_bytes (" +
                          std::to_string(limits.max_frame_bytes) + ") " + std::string(where) +
                          at(start));
  };
  if (start == n) return need_more(n + 1);

  // The command line.
  std::size_t command_end = 0;
  std::size_t header_begin = 0;
  {
    const std::size_t window = std::min(n - start, kMaxCommandLine + 1);
    const auto* nl = static_cast<const char*>(std::memchr(input.data() + start, '\n', window));
    if (nl == nullptr) {
      if (n - start > kMaxCommandLine) {
        return unexpected(Errc::protocol_error,
                          "unknown command " + quote(input.substr(start, n - start)) + at(start));
      }
      if (unfinished_too_large()) return too_large("in its command line");
      return need_more(n + 1);
    }
    const auto eol = static_cast<std::size_t>(nl - input.data());
    command_end = (eol > start && input[eol - 1] == '\r') ? eol - 1 : eol;
    header_begin = eol + 1;
  }
  const std::string_view command_text = input.substr(start, command_end - start);
  const std::optional<Command> command = parse_command(command_text);
  if (!command) {
    return unexpected(Errc::protocol_error, "unknown command " + quote(command_text) + at(start));
  }
  const bool escaped = escapes_headers(*command, version);

  // First pass over the headers: validate, count, find the content-length, allocate nothing.
  // It is repeated on each call while the frame is incomplete; a caller waiting for a large
  // body avoids that by honouring need_at_least.
  std::size_t header_count = 0;
  std::size_t body_begin = 0;
  std::optional<std::size_t> content_length;
  {
    std::size_t line = header_begin;
    bool seen_content_length = false;
    for (;;) {
      std::size_t content_end = 0;
      std::size_t next = 0;
      if (!next_line(input, line, content_end, next)) {
        if (unfinished_too_large()) return too_large("before the end of its headers");
        return need_more(n + 1);
      }
      if (content_end == line) {  // the blank line
        body_begin = next;
        break;
      }
      const std::string_view text = input.substr(line, content_end - line);
      const auto colon = text.find(':');
      if (colon == std::string_view::npos) {
        return unexpected(Errc::protocol_error, "header line without a colon" + at(line));
      }
      if (++header_count > limits.max_headers) {
        return unexpected(Errc::limit_exceeded, "more than max_headers (" +
                                                    std::to_string(limits.max_headers) +
                                                    ") headers" + at(line));
      }
      if (escaped) {
        auto bad = find_invalid_escape(text, version);
        if (bad != std::string_view::npos) {
          const std::string_view sequence = text.substr(bad, 2);
          return unexpected(Errc::protocol_error,
                            "undefined escape sequence " + quote(sequence) + at(line + bad));
        }
      }
      // The first occurrence wins, as for every repeated header. Comparing the raw name is
      // exact: no escape sequence decodes to a character of "content-length".
      if (!seen_content_length && text.substr(0, colon) == "content-length") {
        seen_content_length = true;
        const std::string_view value = text.substr(colon + 1);
        std::size_t length = 0;
        if (!parse_content_length(value, length)) {
          return unexpected(Errc::protocol_error,
                            "invalid content-length value " + quote(value) + at(line + colon + 1));
        }
        content_length = length;
      }
      line = next;
    }
  }

  // The body and its terminating NUL.
  std::size_t body_end = 0;
  if (content_length) {
    // Reject a declared length that cannot fit before waiting for it to arrive.
    const std::size_t header_bytes = body_begin - start;
    if (*content_length > limits.max_frame_bytes ||
        header_bytes + *content_length + 1 > limits.max_frame_bytes) {
      return unexpected(Errc::limit_exceeded,
                        "content-length " + std::to_string(*content_length) +
                            " makes the frame larger than max_frame_bytes (" +
                            std::to_string(limits.max_frame_bytes) + ")" + at(start));
    }
    body_end = body_begin + *content_length;
    if (n <= body_end) return need_more(body_end + 1);
    if (input[body_end] != '\0') {
      return unexpected(Errc::protocol_error,
                        "missing NUL after content-length body" + at(body_end));
    }
  } else {
    const auto* nul = static_cast<const char*>(
        std::memchr(input.data() + body_begin, '\0', n - body_begin));
    if (nul == nullptr) {
      // The NUL still to come makes the frame one byte larger than what is buffered.
      if (n - start + 1 > limits.max_frame_bytes) return too_large("before the end of its body");
      return need_more(n + 1);
    }
    body_end = static_cast<std::size_t>(nul - input.data());
    if (body_end + 1 - start > limits.max_frame_bytes) return too_large("at its NUL");
  }

  // Second pass: build the frame. Everything was validated above, so nothing here can fail.
  Frame frame;
  frame.command = *command;
  frame.headers.reserve(header_count);
  std::size_t line = header_begin;
  for (std::size_t i = 0; i < header_count; ++i) {
    std::size_t content_end = 0;
    std::size_t next = 0;
    next_line(input, line, content_end, next);
    const std::string_view text = input.substr(line, content_end - line);
    const auto colon = text.find(':');
    const std::string_view name = text.substr(0, colon);
    const std::string_view value = text.substr(colon + 1);
    if (escaped) {
      auto& [decoded_name, decoded_value] = frame.headers.emplace_back();
      (void)unescape_append(name, version, decoded_name);
      (void)unescape_append(value, version, decoded_value);
    } else {
      frame.headers.emplace_back(std::string(name), std::string(value));
    }
    line = next;
  }
  frame.body.assign(input.data() + body_begin, body_end - body_begin);

  step.consumed = body_end + 1;
  step.frame = std::move(frame);
  return step;
}

std::optional<std::string> peek_header(std::string_view input, std::string_view name, Version version) {
  std::size_t pos = 0;
  while (pos < input.size() && (input[pos] == '\n' || input[pos] == '\r')) ++pos;
  std::size_t content_end = 0;
  std::size_t line = 0;
  if (!next_line(input, pos, content_end, line)) return std::nullopt;
  const auto command = parse_command(input.substr(pos, content_end - pos));
  if (!command) return std::nullopt;
  const bool escaped = escapes_headers(*command, version);
  std::size_t next = 0;
  while (next_line(input, line, content_end, next) && content_end != line) {
    const std::string_view text = input.substr(line, content_end - line);
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string decoded_name;
    if (!escaped) {
      decoded_name.assign(text.substr(0, colon));
    } else if (unescape_append(text.substr(0, colon), version, decoded_name) != std::string_view::npos) {
      return std::nullopt;
    }
    if (decoded_name == name) {
      if (!escaped) return std::string(text.substr(colon + 1));
      return unescape(text.substr(colon + 1), version);
    }
    line = next;
  }
  return std::nullopt;
}

}  // namespace carrier::stomp::codec
