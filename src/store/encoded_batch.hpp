#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "store/record.hpp"

namespace carrier::store {

// A batch whose messages are already in message_codec bytes, for the backends that store a
// message as one column (sqlite/, postgres/). Encoded on the appending shard, like the log
// store's frames, so the writer thread only binds bytes. Pure: no I/O.
struct EncodedBatch {
  static constexpr std::uint32_t kNoBlob = ~0u;

  Batch batch;
  // The encodings; a message added to several queues in one batch (a composite send, a topic
  // with several durable subscriptions) is encoded once.
  std::vector<std::string> blobs;
  // Per record: the index of its message's encoding in `blobs`, or kNoBlob (acks, delivered).
  std::vector<std::uint32_t> blob_of;
  // Errc::invalid_argument for a message record without a message, limit_exceeded for one
  // over kMaxEncodedMessageBytes. An invalid batch is failed in its place and never written.
  Status valid;

  static EncodedBatch encode(Batch batch);
};

// A message id as 32 hex digits, for error details (the store does not link core, which owns
// MessageId::to_string).
std::string id_text(const model::MessageId& id);

// What a SQL backend accepts in its message column (both SQLite and PostgreSQL stop at 1 GB).
inline constexpr std::size_t kMaxEncodedMessageBytes = 1000u << 20;

// What a group of batches (one transaction) does to the stored rows, one net change per
// (queue, message id) key, so a SQL backend can apply the group with a few set-based statements
// in any order. Folding a key's records in append order: a message record makes it an upsert
// (the new content, delivery count 0); an ack makes it a removal; a delivered record sets the
// count of an upsert, is dropped after a removal, and otherwise updates whatever row exists.
// So a message stored and acked within one group costs one DELETE (the row may predate the
// group) and no insert. Pointers refer into the batches, which must outlive the result.
struct GroupChanges {
  struct Key {
    const std::string* queue;
    model::MessageId id;
  };
  struct Upsert {
    Key key;
    const model::Message* message;
    const std::string* blob;  // its message_codec bytes
    std::uint32_t delivery_count;
    // Which message record this row is: batches[batch]->batch[record] (the key's last one), so
    // the backend can report the row's location to that batch's appender.
    std::size_t batch = 0;
    std::size_t record = 0;
  };
  std::vector<Upsert> upserts;  // in append order of their (last) message record
  std::vector<Key> removals;
  std::vector<std::pair<Key, std::uint32_t>> counts;  // rows that may exist: set delivery_count

  static GroupChanges fold(const std::vector<const EncodedBatch*>& batches);
};

}  // namespace carrier::store
