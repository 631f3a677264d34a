#include "store/memory/memory_store.hpp"

#include <pthread.h>

namespace carrier::store::memory {

MemoryStore::~MemoryStore() { close(); }

Status MemoryStore::open() { return ok(); }

Status MemoryStore::recover(const std::function<void(RecoveredMessage)>&) { return ok(); }

void MemoryStore::start() {
  if (thread_.joinable() || closed_) return;
  thread_ = std::thread([this] { run(); });
}

void MemoryStore::append(Batch, DurableCallback on_durable) {
  // An empty callback still takes its place in the queue: nothing to run, but cheap.
  if (!queue_.push(on_durable) && on_durable) {
    on_durable(unexpected(Errc::shutting_down, "memory store is closed"));
  }
}

void MemoryStore::close() {
  if (closed_) return;
  closed_ = true;
  queue_.close();
  if (thread_.joinable()) {
    thread_.join();
    return;
  }
  // Never started: run what was queued from this thread, still in order.
  std::vector<DurableCallback> rest;
  while (queue_.try_take_all(rest)) {
    for (auto& done : rest) {
      if (done) done(ok());
    }
    rest.clear();
  }
}

void MemoryStore::run() {
  pthread_setname_np(pthread_self(), "carrier-memstore");
  std::vector<DurableCallback> group;
  while (queue_.take_all(group)) {
    for (auto& done : group) {
      if (done) done(ok());
    }
    group.clear();
  }
}

}  // namespace carrier::store::memory
