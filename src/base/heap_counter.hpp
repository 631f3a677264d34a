#pragma once

// Test support for counting what something costs in memory, deterministically: a test binary
// that links carrier_heap_counter has its global operator new/delete replaced by counting ones
// (heap_counter.cpp), and reads what is still allocated before and after making N of something.
//
// Counted: the bytes asked of operator new, plus kChunkOverhead per allocation for what glibc's
// malloc adds (an 8-byte header, rounding to 16). Not counted: malloc() called directly.

#include <cstdint>

namespace carrier::heap_counter {

inline constexpr std::int64_t kChunkOverhead = 16;

// What operator new has handed out and not yet taken back, now.
struct Usage {
  std::int64_t bytes = 0;
  std::int64_t blocks = 0;

  static Usage now();
};

// Bytes per item between two readings, malloc's overhead per block included.
inline std::int64_t per_item(const Usage& before, const Usage& after, std::int64_t count) {
  return ((after.bytes - before.bytes) + (after.blocks - before.blocks) * kChunkOverhead) / count;
}

// The highest live byte count since reset_peak(), malloc's overhead not included.
std::int64_t peak_bytes();
void reset_peak();

}  // namespace carrier::heap_counter
