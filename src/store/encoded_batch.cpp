#include "store/encoded_batch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "store/message_codec.hpp"

namespace carrier::store {

std::string id_text(const model::MessageId& id) { return fmt::format("{:016x}{:016x}", id.hi, id.lo); }

EncodedBatch EncodedBatch::encode(Batch batch) {
  EncodedBatch out;
  out.blob_of.assign(batch.size(), kNoBlob);
  std::vector<const model::Message*> encoded_from;
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

namespace {

struct KeyView {
  std::string_view queue;
  model::MessageId id;
  bool operator==(const KeyView&) const = default;
};
struct KeyViewHash {
  std::size_t operator()(const KeyView& k) const noexcept {
    return std::hash<std::string_view>{}(k.queue) ^ (std::hash<model::MessageId>{}(k.id) * 0x9e3779b97f4a7c15ULL);
  }
};

enum class Net : std::uint8_t { upsert, removal, count };

struct Entry {
  Net net;
  GroupChanges::Key key;
  const model::Message* message = nullptr;
  const std::string* blob = nullptr;
  std::uint32_t delivery_count = 0;
  std::size_t order = 0;  // record position of the last message record (upserts)
  std::size_t batch = 0;  // and that record's batch and index in it
  std::size_t record = 0;
};

}  // namespace

GroupChanges GroupChanges::fold(const std::vector<const EncodedBatch*>& batches) {
  std::vector<Entry> entries;
  std::unordered_map<KeyView, std::size_t, KeyViewHash> index;
  std::size_t position = 0;
  for (std::size_t bi = 0; bi < batches.size(); ++bi) {
    const EncodedBatch* b = batches[bi];
    for (std::size_t i = 0; i < b->batch.size(); ++i, ++position) {
      const Record& r = b->batch[i];
      auto [it, fresh] = index.try_emplace(KeyView{r.queue, r.message_id}, entries.size());
      if (fresh) entries.push_back(Entry{Net::count, Key{&r.queue, r.message_id}});
      Entry& e = entries[it->second];
      switch (r.kind) {
        case RecordKind::message:
          e.net = Net::upsert;
          e.message = r.message.get();
          e.blob = &b->blobs[b->blob_of[i]];
          e.delivery_count = 0;
          e.order = position;
          e.batch = bi;
          e.record = i;
          break;
        case RecordKind::ack: e.net = Net::removal; break;
        case RecordKind::delivered:
          if (e.net != Net::removal) e.delivery_count = r.delivery_count;
          break;
      }
    }
  }
  GroupChanges out;
  std::vector<const Entry*> upserts;
  for (const Entry& e : entries) {
    switch (e.net) {
      case Net::upsert: upserts.push_back(&e); break;
      case Net::removal: out.removals.push_back(e.key); break;
      case Net::count: out.counts.emplace_back(e.key, e.delivery_count); break;
    }
  }
  std::sort(upserts.begin(), upserts.end(), [](const Entry* a, const Entry* b) { return a->order < b->order; });
  out.upserts.reserve(upserts.size());
  for (const Entry* e : upserts) out.upserts.push_back(Upsert{e->key, e->message, e->blob, e->delivery_count, e->batch, e->record});
  return out;
}

}  // namespace carrier::store
