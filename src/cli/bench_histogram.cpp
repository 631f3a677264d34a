#include "cli/bench_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace carrier::cli::bench {

Histogram::Histogram() : counts_(kBucketCount, 0) {}

// Values below 2 * kSubBuckets map to themselves. Above, with `shift` = how far the value's top
// bit is past the sub-bucket bits, the value >> shift lies in [kSubBuckets, 2 * kSubBuckets):
// bucket = shift * kSubBuckets + (value >> shift) keeps consecutive octaves adjacent.
std::size_t Histogram::bucket_of(std::uint64_t value) {
  if (value < 2 * kSubBuckets) return static_cast<std::size_t>(value);
  const int top_bit = 63 - std::countl_zero(value);
  const int shift = top_bit - kSubBucketBits;
  return static_cast<std::size_t>(shift) * kSubBuckets + static_cast<std::size_t>(value >> shift);
}

std::uint64_t Histogram::bucket_low(std::size_t bucket) {
  if (bucket < 2 * kSubBuckets) return bucket;
  const std::size_t shift = bucket / kSubBuckets - 1;
  const std::uint64_t mantissa = bucket - shift * kSubBuckets;
  return mantissa << shift;
}

std::uint64_t Histogram::bucket_high(std::size_t bucket) {
  if (bucket < 2 * kSubBuckets) return bucket;
  const std::size_t shift = bucket / kSubBuckets - 1;
  const std::uint64_t mantissa = bucket - shift * kSubBuckets;
  // The top bucket's end is UINT64_MAX; the shift would overflow there.
  if (mantissa + 1 == 2 * kSubBuckets && shift + kSubBucketBits + 1 == 64) return UINT64_MAX;
  return ((mantissa + 1) << shift) - 1;
}

void Histogram::record(std::uint64_t value) {
  ++counts_[bucket_of(value)];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += static_cast<long double>(value);
}

void Histogram::merge(const Histogram& other) {
  for (std::size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

void Histogram::clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
  sum_ = 0;
}

double Histogram::mean() const {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_ / static_cast<long double>(count_));
}

std::uint64_t Histogram::percentile(double quantile) const {
  if (count_ == 0) return 0;
  quantile = std::clamp(quantile, 0.0, 1.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(quantile * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBucketCount; ++i) {
    seen += counts_[i];
    if (seen >= rank) return std::clamp(bucket_high(i), min(), max_);
  }
  return max_;
}

}  // namespace carrier::cli::bench
