#include "federation/codec/message_payload.hpp"

#include <utility>

#include "store/message_codec.hpp"

namespace carrier::federation::codec {

Id128 to_id128(const model::MessageId& id) {
  Id128 out;
  for (int i = 0; i < 8; ++i) {
    out.bytes[i] = static_cast<std::uint8_t>(id.hi >> (56 - 8 * i));
    out.bytes[8 + i] = static_cast<std::uint8_t>(id.lo >> (56 - 8 * i));
  }
  return out;
}

model::MessageId to_message_id(const Id128& id) {
  model::MessageId out;
  for (int i = 0; i < 8; ++i) {
    out.hi = (out.hi << 8) | id.bytes[i];
    out.lo = (out.lo << 8) | id.bytes[8 + i];
  }
  return out;
}

Result<BasicMessage> wrap_message(const model::Message& m, BasicMessage envelope) {
  if (m.destination.name.find('\0') != std::string::npos) {
    return unexpected(Errc::invalid_argument,
                      "destination name cannot be a selector: it contains a NUL byte");
  }
  envelope.selector = m.destination.name;
  envelope.message_id = to_id128(m.id);
  envelope.payload.clear();
  store::encode_message(m, envelope.payload);
  return envelope;
}

Result<model::Message> unwrap_message(const BasicMessage& b) {
  auto m = store::decode_message(b.payload);
  if (!m) return unexpected(Errc::protocol_error, "BasicMessage payload: " + m.error().detail);
  if (m->destination.name != b.selector) {
    return unexpected(Errc::protocol_error, "BasicMessage selector '" + b.selector +
                                                "' is not the payload's destination '" +
                                                m->destination.name + "'");
  }
  if (to_id128(m->id) != b.message_id) {
    return unexpected(Errc::protocol_error,
                      "BasicMessage message id is not the payload's message id");
  }
  return m;
}

}  // namespace carrier::federation::codec
