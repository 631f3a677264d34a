#include "federation/codec/negotiator.hpp"

namespace carrier::federation::codec {

Status encode_negotiator(const Negotiator& n, std::string& out) {
  const std::size_t start = out.size();
  put_i32(out, n.cost_request);
  put_i32(out, n.agreement_id);
  Status s = put_pstring(out, n.result, "Negotiator result");
  if (!s) out.resize(start);
  return s;
}

Result<Negotiator> read_negotiator(WireReader& in, const Limits& limits) {
  CARRIER_FED_TRY(cost, in.i32("Negotiator costRequest"));
  CARRIER_FED_TRY(agreement, in.i32("Negotiator agreementID"));
  CARRIER_FED_TRY(result, in.pstring(limits.max_string_bytes, "Negotiator result"));
  return Negotiator{cost, agreement, std::string(result)};
}

Result<Negotiator> decode_negotiator(std::string_view bytes, const Limits& limits) {
  return decode_exactly(bytes, limits, "Negotiator", read_negotiator);
}

}  // namespace carrier::federation::codec
