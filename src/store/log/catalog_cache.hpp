#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <optional>

#include <spdlog/logger.h>

#include "base/result.hpp"
#include "store/log/frame_reader.hpp"
#include "store/log/segment_catalog.hpp"

namespace carrier::store::log {

// The segment catalogs the last scans used, so the next scan of the same queue continues
// where the last one stopped without loading anything (docs/storage.md, "Cold tails: scan").
// Bounded: at most kMaxSegments catalogs and about kMaxEntries records in all (~24 MiB at 24
// bytes each), least recently used out first; the one just asked for always stays. A closed
// segment is catalogued from its checkpointed index, or from its frames when the index is
// missing or does not match it (as recovery would); the open segment from its frames, and
// extended as it grows.
// Runs on: the log store's reader thread; the counters are read from any thread.
class CatalogCache {
 public:
  static constexpr std::size_t kMaxSegments = 4;
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 20;

  CatalogCache(std::filesystem::path journal_dir, std::shared_ptr<spdlog::logger> log)
      : dir_(std::move(journal_dir)), log_(std::move(log)) {}

  // The catalog of `segment`: the whole file if `open_end` is unset (a closed segment), else
  // at least its first *open_end bytes (the open segment, up to what the writer has applied).
  // Errors: not_found (the segment is gone: reclaimed), corrupt_data / io_error from its frames.
  // The pointer stays valid after later calls (which may extend the same catalog in place).
  Result<std::shared_ptr<const SegmentCatalog>> get(FrameReader& frames, std::uint64_t segment,
                                                    std::optional<std::uint64_t> open_end);
  void clear() { lru_.clear(); }
  std::size_t size() const { return lru_.size(); }

  std::uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  std::uint64_t loaded_from_index() const { return from_index_.load(std::memory_order_relaxed); }
  std::uint64_t loaded_from_frames() const { return from_frames_.load(std::memory_order_relaxed); }

 private:
  Result<std::shared_ptr<SegmentCatalog>> load(FrameReader& frames, std::uint64_t segment,
                                               std::optional<std::uint64_t> open_end);
  void evict();

  const std::filesystem::path dir_;
  const std::shared_ptr<spdlog::logger> log_;
  std::list<std::shared_ptr<SegmentCatalog>> lru_;  // most recently used first
  std::atomic<std::uint64_t> hits_{0}, from_index_{0}, from_frames_{0};
};

}  // namespace carrier::store::log
