#include "federation/codec/basic_message.hpp"

#include <limits>

namespace carrier::federation::codec {

Status encode_basic_message(const BasicMessage& m, std::string& out) {
  constexpr std::size_t kMax32 = std::numeric_limits<std::uint32_t>::max();
  if (m.payload.size() > kMax32) {
    return unexpected(Errc::invalid_argument, "BasicMessage payload longer than 2^32-1 bytes");
  }
  if (m.stack.size() > kMax32) {
    return unexpected(Errc::invalid_argument, "BasicMessage stack longer than 2^32-1 entries");
  }
  const std::size_t start = out.size();
  out.reserve(start + 16 + pstring_size(m.selector) + 64 + m.payload.size() + 4 * m.stack.size());
  put_i32(out, m.ttl);
  put_i32(out, m.hops);
  put_u32(out, static_cast<std::uint32_t>(m.payload.size()));
  put_u32(out, static_cast<std::uint32_t>(m.stack.size()));
  if (auto s = put_pstring(out, m.selector, "BasicMessage selector"); !s) {
    out.resize(start);
    return s;
  }
  put_id(out, m.destination);
  put_id(out, m.origin);
  put_id(out, m.previous);
  put_id(out, m.message_id);
  out.append(m.payload);
  for (std::int32_t entry : m.stack) put_i32(out, entry);
  return ok();
}

Result<BasicMessage> read_basic_message(WireReader& in, const Limits& limits) {
  BasicMessage m;
  CARRIER_FED_TRY(ttl, in.i32("BasicMessage TTL"));
  CARRIER_FED_TRY(hops, in.i32("BasicMessage hops"));
  m.ttl = ttl;
  m.hops = hops;
  CARRIER_FED_TRY(payload_length, in.count("BasicMessage payload length", limits.max_payload_bytes, "bytes"));
  CARRIER_FED_TRY(stack_size, in.count("BasicMessage stack size", limits.max_stack_entries, "entries"));
  CARRIER_FED_TRY(selector, in.pstring(limits.max_string_bytes, "BasicMessage selector"));
  CARRIER_FED_TRY(destination, in.id("BasicMessage destination id"));
  CARRIER_FED_TRY(origin, in.id("BasicMessage origin id"));
  CARRIER_FED_TRY(previous, in.id("BasicMessage previous id"));
  CARRIER_FED_TRY(message_id, in.id("BasicMessage message id"));
  // Both counts against what is actually left, before anything is allocated.
  if (std::size_t(payload_length) + 4 * std::size_t(stack_size) > in.remaining()) {
    return in.fail(Errc::protocol_error, "BasicMessage payload and stack",
                   "truncated: " + std::to_string(payload_length) + " payload bytes and " +
                       std::to_string(stack_size) + " stack entries announced, " +
                       std::to_string(in.remaining()) + " bytes present",
                   in.offset());
  }
  CARRIER_FED_TRY(payload, in.bytes(payload_length, "BasicMessage payload"));
  m.selector.assign(selector);
  m.destination = destination;
  m.origin = origin;
  m.previous = previous;
  m.message_id = message_id;
  m.payload.assign(payload);
  m.stack.reserve(stack_size);
  for (std::uint32_t i = 0; i < stack_size; ++i) {
    CARRIER_FED_TRY(entry, in.i32("BasicMessage stack entry"));
    m.stack.push_back(entry);
  }
  return m;
}

Result<BasicMessage> decode_basic_message(std::string_view bytes, const Limits& limits) {
  return decode_exactly(bytes, limits, "BasicMessage", read_basic_message);
}

}  // namespace carrier::federation::codec
