#include "store/log/catalog_cache.hpp"

#include "store/log/segment_index_file.hpp"

namespace carrier::store::log {

Result<std::shared_ptr<const SegmentCatalog>> CatalogCache::get(FrameReader& frames, std::uint64_t segment,
                                                                std::optional<std::uint64_t> open_end) {
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if ((*it)->segment_id() != segment) continue;
    std::shared_ptr<SegmentCatalog> c = *it;
    lru_.erase(it);
    // The open segment grew, or the segment catalogued while open has closed since.
    std::uint64_t want = 0;
    if (open_end) {
      want = *open_end;
    } else {
      auto size = frames.file_size(segment);
      if (!size) return unexpected(std::move(size).error());
      want = *size;
    }
    if (c->covered() < want) {
      if (auto st = c->extend(frames, want); !st) return unexpected(st.error());
    }
    hits_.fetch_add(1, std::memory_order_relaxed);
    lru_.push_front(c);
    evict();
    return std::shared_ptr<const SegmentCatalog>(std::move(c));
  }
  auto loaded = load(frames, segment, open_end);
  if (!loaded) return unexpected(std::move(loaded).error());
  lru_.push_front(*loaded);
  evict();
  return std::shared_ptr<const SegmentCatalog>(std::move(*loaded));
}

Result<std::shared_ptr<SegmentCatalog>> CatalogCache::load(FrameReader& frames, std::uint64_t segment,
                                                           std::optional<std::uint64_t> open_end) {
  std::uint64_t end = 0;
  if (open_end) {
    end = *open_end;
  } else {
    auto size = frames.file_size(segment);
    if (!size) return unexpected(std::move(size).error());
    end = *size;
    auto index = load_index_file(dir_, segment, end);
    if (index) {
      from_index_.fetch_add(1, std::memory_order_relaxed);
      return std::make_shared<SegmentCatalog>(SegmentCatalog::from_index(*index));
    }
    // A missing index is ordinary (the segment closed at a crash, or its write failed); a
    // damaged one is worth a line: the segment is read instead, as recovery does.
    if (index.error().code != Errc::not_found) {
      log_->warn("journal: scan reads segment {} instead of its index: {}", segment, index.error().detail);
    }
  }
  auto c = std::make_shared<SegmentCatalog>(segment);
  if (auto st = c->extend(frames, end); !st) return unexpected(st.error());
  from_frames_.fetch_add(1, std::memory_order_relaxed);
  return c;
}

void CatalogCache::evict() {
  std::size_t entries = 0;
  for (const auto& c : lru_) entries += c->entry_count();
  while (lru_.size() > 1 && (lru_.size() > kMaxSegments || entries > kMaxEntries)) {
    entries -= lru_.back()->entry_count();
    lru_.pop_back();
  }
}

}  // namespace carrier::store::log
