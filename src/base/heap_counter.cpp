#include "base/heap_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<std::int64_t> heap_live_bytes{0};
std::atomic<std::int64_t> heap_live_blocks{0};
std::atomic<std::int64_t> heap_peak_bytes{0};
constexpr std::size_t kHeader = 16;  // where the size is kept; keeps the 16-byte alignment of new

void* counted_new(std::size_t n) {
  auto* p = static_cast<unsigned char*>(std::malloc(n + kHeader));
  if (p == nullptr) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(p) = n;
  const std::int64_t now = heap_live_bytes.fetch_add(static_cast<std::int64_t>(n), std::memory_order_relaxed) +
                           static_cast<std::int64_t>(n);
  heap_live_blocks.fetch_add(1, std::memory_order_relaxed);
  std::int64_t peak = heap_peak_bytes.load(std::memory_order_relaxed);
  while (now > peak && !heap_peak_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p + kHeader;
}

void counted_delete(void* q) noexcept {
  if (q == nullptr) return;
  auto* p = static_cast<unsigned char*>(q) - kHeader;
  heap_live_bytes.fetch_sub(static_cast<std::int64_t>(*reinterpret_cast<std::size_t*>(p)), std::memory_order_relaxed);
  heap_live_blocks.fetch_sub(1, std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_delete(p); }

namespace carrier::heap_counter {

Usage Usage::now() {
  return {heap_live_bytes.load(std::memory_order_relaxed), heap_live_blocks.load(std::memory_order_relaxed)};
}

std::int64_t peak_bytes() { return heap_peak_bytes.load(std::memory_order_relaxed); }

void reset_peak() { heap_peak_bytes.store(heap_live_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace carrier::heap_counter
