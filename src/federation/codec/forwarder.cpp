#include "federation/codec/forwarder.hpp"

namespace carrier::federation::codec {

Status encode_forwarder(const Forwarder& f, std::string& out) {
  const std::size_t start = out.size();
  put_i32(out, f.mode);
  Status s = put_pstring(out, f.key, "Forwarder key");
  if (s) s = put_pstring(out, f.value, "Forwarder value");
  if (!s) out.resize(start);
  return s;
}

Result<Forwarder> read_forwarder(WireReader& in, const Limits& limits) {
  CARRIER_FED_TRY(mode, in.i32("Forwarder mode"));
  CARRIER_FED_TRY(key, in.pstring(limits.max_string_bytes, "Forwarder key"));
  CARRIER_FED_TRY(value, in.pstring(limits.max_string_bytes, "Forwarder value"));
  return Forwarder{mode, std::string(key), std::string(value)};
}

Result<Forwarder> decode_forwarder(std::string_view bytes, const Limits& limits) {
  return decode_exactly(bytes, limits, "Forwarder", read_forwarder);
}

}  // namespace carrier::federation::codec
