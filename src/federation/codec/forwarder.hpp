#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "federation/codec/limits.hpp"
#include "federation/codec/primitives.hpp"

namespace carrier::federation::codec {

// JPPP's ForwarderImpl, the forwarding condition sent with a push: mode i32, key PString,
// value PString. The codec carries the mode as a number; what each mode means is the link's.
struct Forwarder {
  std::int32_t mode = 0;
  std::string key;
  std::string value;

  bool operator==(const Forwarder&) const = default;
};

// Appends the encoding; Errc::invalid_argument (and `out` unchanged) for a NUL in key or value.
Status encode_forwarder(const Forwarder& f, std::string& out);
Result<Forwarder> read_forwarder(WireReader& in, const Limits& limits);
Result<Forwarder> decode_forwarder(std::string_view bytes, const Limits& limits);

}  // namespace carrier::federation::codec
