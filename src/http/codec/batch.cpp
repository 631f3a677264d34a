#include "http/codec/batch.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "http/codec/body_encoding.hpp"

namespace carrier::http::codec {

namespace {

using nlohmann::json;

// A batch is an array of objects of objects: three levels. Checked before parsing, so that a
// body of a million '[' costs one scan and never a deep tree.
constexpr int kMaxDepth = 3;

bool too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

Unexpected bad(std::size_t index, std::string_view what) {
  return unexpected(Errc::invalid_argument, fmt::format("batch entry {}: {}", index, what));
}

}  // namespace

Result<std::vector<BatchEntry>> decode_batch(std::string_view text, std::size_t max_messages) {
  if (too_deep(text)) {
    return unexpected(Errc::invalid_argument, fmt::format("batch JSON nests deeper than {} levels", kMaxDepth));
  }
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return unexpected(Errc::invalid_argument, "the batch is not valid JSON");
  if (!doc.is_array()) return unexpected(Errc::invalid_argument, "a batch is a JSON array of messages");
  if (doc.size() > max_messages) {
    return unexpected(Errc::limit_exceeded,
                      fmt::format("the batch has {} messages, at most {} are allowed", doc.size(), max_messages));
  }
  std::vector<BatchEntry> out;
  out.reserve(doc.size());
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const json& entry = doc[i];
    if (!entry.is_object()) return bad(i, "not a JSON object");
    BatchEntry e;
    bool has_body = false;
    for (const auto& [key, value] : entry.items()) {
      if (key == "headers") {
        if (!value.is_object()) return bad(i, "\"headers\" must be an object");
        for (const auto& [name, v] : value.items()) {
          if (v.is_string()) {
            e.headers.emplace_back(name, v.get<std::string>());
          } else if (v.is_number() || v.is_boolean()) {
            e.headers.emplace_back(name, v.dump());
          } else {
            return bad(i, fmt::format("header '{}' must be a string, number or boolean", name.substr(0, 64)));
          }
        }
      } else if (key == "body" || key == "body_base64") {
        if (has_body) return bad(i, "give \"body\" or \"body_base64\", not both");
        if (!value.is_string()) return bad(i, fmt::format("\"{}\" must be a string", key));
        has_body = true;
        if (key == "body") {
          e.body = value.get<std::string>();
        } else {
          auto bytes = base64_decode(value.get_ref<const std::string&>());
          if (!bytes) return bad(i, "\"body_base64\" is not valid base64");
          e.body = std::move(*bytes);
        }
      } else {
        return bad(i, fmt::format("unknown key '{}' (allowed: headers, body, body_base64)", key.substr(0, 64)));
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace carrier::http::codec
