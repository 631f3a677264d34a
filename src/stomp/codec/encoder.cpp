#include "stomp/codec/encoder.hpp"

#include <charconv>

#include "stomp/codec/escape.hpp"

namespace carrier::stomp::codec {

void encode(Command command, const Headers& headers, std::string_view body, Version version,
            std::string& out) {
  const bool escape = escapes_headers(command, version);
  bool has_content_length = false;
  // One reservation for the whole frame (escaping may still grow it, rarely).
  std::size_t size = to_string(command).size() + 1 + 1 + body.size() + 1 + 36;
  for (const auto& [name, value] : headers) {
    size += name.size() + value.size() + 2;
    if (name == "content-length") has_content_length = true;
  }
  out.reserve(out.size() + size);

  out.append(to_string(command));
  out.push_back('\n');
  for (const auto& [name, value] : headers) {
    if (escape) {
      append_escaped(name, version, out);
      out.push_back(':');
      append_escaped(value, version, out);
    } else {
      out.append(name);
      out.push_back(':');
      out.append(value);
    }
    out.push_back('\n');
  }
  // Always declare the length of a non-empty body: it may hold NULs, and it lets the peer's
  // decoder skip the NUL scan and size its buffer up front.
  if (!body.empty() && !has_content_length) {
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, body.size());
    (void)ec;  // 24 digits hold any size_t
    out.append("content-length:");
    out.append(digits, static_cast<std::size_t>(end - digits));
    out.push_back('\n');
  }
  out.push_back('\n');
  out.append(body);
  out.push_back('\0');
}

}  // namespace carrier::stomp::codec

namespace carrier::stomp::codec {

FrameWriter::FrameWriter(std::string& out, Command command, Version version)
    : out_(out), version_(version), escape_(escapes_headers(command, version)) {
  out_.append(to_string(command));
  out_.push_back('\n');
}

void FrameWriter::value(std::string_view v) {
  if (escape_) {
    append_escaped(v, version_, out_);
  } else {
    out_.append(v);
  }
}

void FrameWriter::header(std::string_view name, std::string_view v) {
  value(name);
  out_.push_back(':');
  value(v);
  out_.push_back('\n');
}

void FrameWriter::header(std::string_view name, std::string_view prefix, std::string_view rest) {
  value(name);
  out_.push_back(':');
  value(prefix);
  value(rest);
  out_.push_back('\n');
}

void FrameWriter::header(std::string_view name, std::int64_t v) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  header(name, std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void FrameWriter::finish(std::string_view body) {
  if (!body.empty()) header("content-length", static_cast<std::int64_t>(body.size()));
  out_.push_back('\n');
  out_.append(body);
  out_.push_back('\0');
}

}  // namespace carrier::stomp::codec
