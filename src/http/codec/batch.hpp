#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "http/codec/message_fields.hpp"

namespace carrier::http::codec {

// The media type of a JSON batch of messages. A body sent as plain `application/json` is one
// message whose body is that JSON, as any other content type: a batch must say so.
inline constexpr std::string_view kBatchMediaType = "application/vnd.carrier.batch+json";

struct BatchEntry {
  Headers headers;  // as read_fields() takes them
  std::string body;
};

// `[{"headers": {"priority": "7", "orderId": 42}, "body": "text"}, {"body_base64": "AAE="}]`:
// one entry per message; header values may be strings, numbers or booleans (taken as their
// JSON text); `body` is UTF-8 text, `body_base64` bytes; neither means an empty body. Unknown
// keys, other shapes, nesting deeper than the format needs, or more than `max_messages` entries
// are an Errc::invalid_argument (Errc::limit_exceeded for the count) naming what is wrong.
Result<std::vector<BatchEntry>> decode_batch(std::string_view json, std::size_t max_messages);

}  // namespace carrier::http::codec
