#include "store/log/segment_catalog.hpp"

#include "store/log/frame_reader.hpp"
#include "store/log/record_codec.hpp"

namespace carrier::store::log {

namespace {

std::string catalog_lane_key(std::string_view queue, std::uint8_t priority) {
  std::string k;
  k.reserve(queue.size() + 2);
  k.append(queue);
  k.push_back('\0');
  k.push_back(static_cast<char>(priority));
  return k;
}

std::string catalog_message_key(std::string_view queue, model::MessageId id) {
  std::string k;
  k.reserve(queue.size() + 17);
  k.append(queue);
  k.push_back('\0');
  k.append(reinterpret_cast<const char*>(&id.hi), sizeof id.hi);
  k.append(reinterpret_cast<const char*>(&id.lo), sizeof id.lo);
  return k;
}

const std::vector<SegmentCatalog::Entry> kNoEntries;

}  // namespace

SegmentCatalog SegmentCatalog::from_index(const SegmentIndex& index) {
  SegmentCatalog c(index.segment_id);
  // The index names queues by number: lanes are found by (number, priority), not by a key
  // built per record (records of many queues interleave, so remembering the last lane does not
  // help here).
  std::unordered_map<std::uint64_t, std::vector<Entry>*> lanes;
  // A record's ordinal (Location::record) is its position among the segment's records.
  for (std::size_t i = 0; i < index.records.size(); ++i) {
    const IndexRecord& r = index.records[i];
    const auto ordinal = static_cast<std::uint32_t>(i);
    if (r.kind != RecordKind::message || r.offset > UINT32_MAX) {
      c.add(index.queues[r.queue], r.kind, r.id, r.offset, ordinal, r.summary.priority, r.delivery_count);
      continue;
    }
    const std::uint64_t key = (std::uint64_t{r.queue} << 8) | r.summary.priority;
    auto [at, made] = lanes.try_emplace(key, nullptr);
    if (made) at->second = &c.lanes_[catalog_lane_key(index.queues[r.queue], r.summary.priority)];
    at->second->push_back(Entry{static_cast<std::uint32_t>(r.offset), ordinal, r.id});
    ++c.entries_;
  }
  c.records_ = static_cast<std::uint32_t>(index.records.size());
  c.covered_ = index.segment_bytes;
  return c;
}

Status SegmentCatalog::extend(FrameReader& frames, std::uint64_t end) {
  if (covered_ < kSegmentHeaderBytes) covered_ = kSegmentHeaderBytes;
  while (covered_ < end) {
    auto frame = frames.read_frame(segment_id_, covered_);
    if (!frame) return unexpected(std::move(frame).error());
    if (covered_ + frame->bytes > end) {
      return unexpected(Errc::corrupt_data, "journal segment " + std::to_string(segment_id_) + ": the frame at offset " +
                                                std::to_string(covered_) + " crosses the end of what was written (" +
                                                std::to_string(end) + ")");
    }
    for (std::size_t i = 0; i < frame->batch.size(); ++i) {
      const Record& r = frame->batch[i];
      const std::uint8_t priority = r.message ? r.message->priority : 0;
      add(r.queue, r.kind, r.message_id, covered_, records_ + static_cast<std::uint32_t>(i), priority, r.delivery_count);
    }
    records_ += static_cast<std::uint32_t>(frame->batch.size());
    covered_ += frame->bytes;
  }
  return ok();
}

void SegmentCatalog::add(std::string_view queue, RecordKind kind, model::MessageId id, std::uint64_t offset,
                         std::uint32_t record, std::uint8_t priority, std::uint32_t delivery_count) {
  // Offsets past 4 GiB cannot be named by a Location (LogStore::can_scan() rules them out).
  if (offset > UINT32_MAX) return;
  switch (kind) {
    case RecordKind::message:
      lane_for(queue, priority).push_back(Entry{static_cast<std::uint32_t>(offset), record, id});
      ++entries_;
      break;
    case RecordKind::delivered:
      // Later records overwrite earlier ones: the latest count is the one recovery keeps.
      delivered_[catalog_message_key(queue, id)] = delivery_count;
      ++entries_;
      break;
    case RecordKind::ack:
      break;  // the reclaimer knows what is acked
  }
}

std::vector<SegmentCatalog::Entry>& SegmentCatalog::lane_for(std::string_view queue, std::uint8_t priority) {
  if (last_lane_ != nullptr && priority == last_priority_ && queue == last_queue_) return *last_lane_;
  last_lane_ = &lanes_[catalog_lane_key(queue, priority)];
  last_queue_.assign(queue);
  last_priority_ = priority;
  return *last_lane_;
}

const std::vector<SegmentCatalog::Entry>& SegmentCatalog::lane(std::string_view queue, std::uint8_t priority) const {
  auto it = lanes_.find(catalog_lane_key(queue, priority));
  return it == lanes_.end() ? kNoEntries : it->second;
}

std::uint32_t SegmentCatalog::delivered_count(std::string_view queue, model::MessageId id) const {
  auto it = delivered_.find(catalog_message_key(queue, id));
  return it == delivered_.end() ? 0 : it->second;
}

}  // namespace carrier::store::log
