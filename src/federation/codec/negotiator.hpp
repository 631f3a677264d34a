#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "federation/codec/limits.hpp"
#include "federation/codec/primitives.hpp"

namespace carrier::federation::codec {

// JPPP's NegotiatorImpl: costRequest i32, agreementID i32 (-1: none yet), result PString.
// Sent as the hope in a negotiate request and returned, filled in, as its result.
struct Negotiator {
  std::int32_t cost_request = 0;
  std::int32_t agreement_id = -1;
  std::string result;

  bool operator==(const Negotiator&) const = default;
};

// Appends the encoding; Errc::invalid_argument (and `out` unchanged) for a NUL in result.
Status encode_negotiator(const Negotiator& n, std::string& out);
Result<Negotiator> read_negotiator(WireReader& in, const Limits& limits);
Result<Negotiator> decode_negotiator(std::string_view bytes, const Limits& limits);

}  // namespace carrier::federation::codec
