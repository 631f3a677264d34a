#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace carrier::cli::bench {

// A log-bucketed histogram of non-negative integers (latencies in nanoseconds), HdrHistogram's
// layout with 64 linear sub-buckets per power of two: values below 128 are exact, larger ones
// land in a bucket at most 1/64 (1.6 %) wide relative to its lower bound. The whole uint64
// range fits in 3,776 counters (30 KiB); recording is a shift and an increment.
//
// Runs on: one thread per histogram (each consumer records into its own); merge() them after.
class Histogram {
 public:
  static constexpr int kSubBucketBits = 6;                       // 64 sub-buckets per octave
  static constexpr std::uint64_t kSubBuckets = 1u << kSubBucketBits;
  static constexpr std::size_t kBucketCount = (64 - kSubBucketBits) * kSubBuckets + kSubBuckets;

  Histogram();

  void record(std::uint64_t value);
  void merge(const Histogram& other);
  void clear();

  std::uint64_t count() const { return count_; }
  std::uint64_t min() const { return count_ == 0 ? 0 : min_; }
  std::uint64_t max() const { return max_; }
  double mean() const;
  // The smallest recorded-bucket value v such that at least `quantile` (0..1) of the values are
  // <= v: the upper end of the bucket holding that rank, clamped to [min, max]. 0 when empty.
  std::uint64_t percentile(double quantile) const;

  // The bucket a value lands in, and a bucket's first and last value (for tests).
  static std::size_t bucket_of(std::uint64_t value);
  static std::uint64_t bucket_low(std::size_t bucket);
  static std::uint64_t bucket_high(std::size_t bucket);

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace carrier::cli::bench
