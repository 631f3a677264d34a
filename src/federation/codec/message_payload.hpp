#pragma once

#include <string_view>

#include "base/result.hpp"
#include "model/message.hpp"
#include "federation/codec/basic_message.hpp"
#include "federation/codec/id128.hpp"

// Carrier's message as the payload of a BasicMessage.
//
// The payload is the store's message encoding (store/message_codec.hpp, laid out in
// docs/storage.md "Message encoding"), reused rather than a second format: it already carries
// everything a message is across a hop (id, destination kind and name, priority, timestamp,
// expiry, persistence, scheduled delivery, retain, correlation-id, reply-to, type,
// content-type, user properties in order, and a null body apart from an empty one), every
// length in it is checked before allocating, and its first byte is a format version that a
// decoder refuses when it does not know it, so two nodes of different builds fail cleanly
// instead of misreading each other. Not carried (by design, as in the store): the publishing
// connection (`origin`, for no-local) and `from_retained`, which mean nothing on another node.
//
// The BasicMessage's selector is the destination name, so a node can route a pushed message
// without decoding its payload; the message id is Carrier's 128-bit id, big-endian.
namespace carrier::federation::codec {

Id128 to_id128(const model::MessageId& id);
model::MessageId to_message_id(const Id128& id);

// `envelope` with selector, message id and payload set from `m`; its TTL, hops, node ids and
// stack are kept. Errc::invalid_argument if the destination name holds a NUL.
Result<BasicMessage> wrap_message(const model::Message& m, BasicMessage envelope);

// The message a BasicMessage carries. Errc::protocol_error if the payload does not decode
// (the store codec's detail, with its offset into the payload) or names another destination
// than the selector, or another id than the message id.
Result<model::Message> unwrap_message(const BasicMessage& b);

}  // namespace carrier::federation::codec
