#include "store/encoded_batch.hpp"

#include <fmt/format.h>

#include "store/message_codec.hpp"

namespace carrier::store {

std::string id_text(const core::MessageId& id) { return fmt::format("{:016x}{:016x}", id.hi, id.lo); }

EncodedBatch EncodedBatch::encode(Batch batch) {
  EncodedBatch out;
  out.blob_of.assign(batch.size(), kNoBlob);
  std::vector<const core::Message*> encoded_from;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Record& r = batch[i];
    if (r.kind != RecordKind::message) continue;
    if (!r.message) {
      out.valid = unexpected(Errc::invalid_argument, "message record without a message for " + r.queue);
      break;
    }
    if (r.message->id != r.message_id) {
      out.valid = unexpected(Errc::invalid_argument, "message record for " + r.queue + " names id " +
                                                         id_text(r.message_id) + " but carries message " +
                                                         id_text(r.message->id));
      break;
    }
    std::uint32_t index = kNoBlob;
    for (std::size_t k = 0; k < encoded_from.size(); ++k) {
      if (encoded_from[k] == r.message.get()) {
        index = static_cast<std::uint32_t>(k);
        break;
      }
    }
    if (index == kNoBlob) {
      const std::size_t size = encoded_message_size(*r.message);
      if (size > kMaxEncodedMessageBytes) {
        out.valid = unexpected(Errc::limit_exceeded, "message " + id_text(r.message->id) + " encodes to " +
                                                         std::to_string(size) + " bytes, over the store's limit");
        break;
      }
      index = static_cast<std::uint32_t>(out.blobs.size());
      out.blobs.emplace_back();
      out.blobs.back().reserve(size);
      encode_message(*r.message, out.blobs.back());
      encoded_from.push_back(r.message.get());
    }
    out.blob_of[i] = index;
  }
  out.batch = std::move(batch);
  return out;
}

}  // namespace carrier::store
