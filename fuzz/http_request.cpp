// libFuzzer target for the HTTP API's own request parsing (src/http/codec): the query string,
// durations and counts, message headers, JSON batches and body encodings. (Request lines and
// header framing are Boost.Beast's parser.)
//
// Input layout: byte 0 picks which part reads the rest. Every part must either refuse the input
// with an error or give back something that holds together: decoded base64 re-encodes to the
// same text, a batch's entries read as message headers without crashing, parsed numbers lie
// within their bounds.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/codec/batch.hpp"
#include "http/codec/body_encoding.hpp"
#include "http/codec/message_fields.hpp"
#include "http/codec/problem.hpp"
#include "http/codec/query.hpp"

namespace {

using namespace carrier::http::codec;

constexpr FieldLimits kLimits{.max_delay_ms = 86'400'000, .max_headers = 64};

void check_fields(const Headers& headers) {
  auto f = read_fields(headers, 1'700'000'000'000, kLimits);
  if (!f) return;
  FUZZ_CHECK(f->priority <= 9);
  FUZZ_CHECK(f->expires_ms >= 0 && f->deliver_at_ms >= 0);
  FUZZ_CHECK(f->properties.size() <= headers.size());
}

void fuzz_query(std::string_view text) {
  const auto target = split_target(text);
  FUZZ_CHECK(target.path.size() + target.query.size() <= text.size());
  auto params = parse_query(target.query, 16);
  if (!params) return;
  FUZZ_CHECK(params->size() <= 16);
  if (auto max = find_param(*params, "max")) {
    if (auto n = parse_bounded(*max, "max", 1, 1000)) FUZZ_CHECK(*n >= 1 && *n <= 1000);
  }
  if (auto wait = find_param(*params, "wait")) {
    if (auto ms = parse_duration_ms(*wait, "wait", 60000)) FUZZ_CHECK(*ms <= 60000);
  }
  // The same pairs as message headers (the Carrier-Header-* fields of a request).
  check_fields(Headers(params->begin(), params->end()));
}

void fuzz_batch(std::string_view text) {
  auto batch = decode_batch(text, 32);
  if (!batch) {
    FUZZ_CHECK(!problem_json(400, batch.error().detail).empty());
    return;
  }
  FUZZ_CHECK(batch->size() <= 32);
  for (const auto& entry : *batch) check_fields(entry.headers);
}

void fuzz_encoding(std::string_view text) {
  if (auto bytes = base64_decode(text)) FUZZ_CHECK(base64_encode(*bytes) == text);
  const auto encoded = base64_encode(text);
  auto back = base64_decode(encoded);
  FUZZ_CHECK(back && *back == text);
  (void)is_utf8(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: fuzz_query(rest); break;
    case 1: fuzz_batch(rest); break;
    case 2: fuzz_encoding(rest); break;
  }
  return 0;
}
