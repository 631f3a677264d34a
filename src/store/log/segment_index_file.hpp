#pragma once

#include <cstdint>
#include <filesystem>

#include "base/result.hpp"
#include "store/log/segment_index_codec.hpp"

// Writing and loading a segment's checkpointed index file (journal_dir/NNNN.idx). The index is a
// cache of what recovery would read from the segment: it is written whole or not at all (temp
// file, fdatasync, rename, directory fsync), and one that does not match its segment exactly is
// never believed. Runs on: the log store's writer thread (write, at roll) and the recovering
// thread (load, and rewrite where one was missing or unusable).
namespace carrier::store::log {

// Writes the index `builder` holds, covering the first `segment_bytes` bytes of its segment:
// NNNN.idx.tmp, then (with `sync`) fdatasync, rename to NNNN.idx, fsync of the directory. On
// failure the temporary file is removed (best effort) and nothing named NNNN.idx changed.
Status write_index_file(const std::filesystem::path& journal_dir, const SegmentIndexBuilder& builder,
                        std::uint64_t segment_bytes, bool sync);

// The index of segment `segment_id`, if its file exists and is usable for a segment of
// `segment_bytes` bytes. Errors: not_found (no index file), corrupt_data (damaged, truncated,
// another version, another segment, or written when the segment had another size: "stale"),
// io_error. The detail names the file.
Result<SegmentIndex> load_index_file(const std::filesystem::path& journal_dir, std::uint64_t segment_id,
                                     std::uint64_t segment_bytes);

}  // namespace carrier::store::log
