#include "store/memory/memory_store.hpp"

#include <pthread.h>

namespace carrier::store::memory {

namespace {

std::string live_key(const std::string& queue, const model::MessageId& id) {
  std::string k;
  k.reserve(queue.size() + 1 + sizeof id.hi + sizeof id.lo);
  k.append(queue);
  k.push_back('\0');
  k.append(reinterpret_cast<const char*>(&id.hi), sizeof id.hi);
  k.append(reinterpret_cast<const char*>(&id.lo), sizeof id.lo);
  return k;
}

}  // namespace

MemoryStore::~MemoryStore() { close(); }

Status MemoryStore::open() { return ok(); }

Status MemoryStore::recover(const std::function<void(RecoveredMessage)>&) { return ok(); }

void MemoryStore::start() {
  if (thread_.joinable() || closed_) return;
  thread_ = std::thread([this] { run(); });
}

void MemoryStore::append(Batch batch, DurableCallback on_durable) {
  Work w;
  w.batch = std::move(batch);
  w.durable = std::move(on_durable);
  // An empty callback still takes its place in the queue: nothing to run, but cheap.
  if (!queue_.push(w) && w.durable) w.durable(unexpected(Errc::shutting_down, "memory store is closed"));
}

void MemoryStore::append_located(Batch batch, LocatedCallback on_durable) {
  Work w;
  w.batch = std::move(batch);
  w.located = std::move(on_durable);
  if (!queue_.push(w) && w.located) w.located(unexpected(Errc::shutting_down, "memory store is closed"), {});
}

void MemoryStore::read(std::string queue, std::vector<ReadItem> items, ReadCallback done) {
  Work w;
  w.is_read = true;
  w.queue = std::move(queue);
  w.items = std::move(items);
  w.read_done = std::move(done);
  if (!queue_.push(w) && w.read_done) {
    std::vector<Result<model::MessagePtr>> answers;
    for (std::size_t i = 0; i < w.items.size(); ++i) {
      answers.emplace_back(unexpected(Errc::shutting_down, "memory store is closed"));
    }
    w.read_done(std::move(answers));
  }
}

void MemoryStore::close() {
  if (closed_) return;
  closed_ = true;
  queue_.close();
  if (thread_.joinable()) {
    thread_.join();
  } else {
    // Never started: run what was queued from this thread, still in order.
    std::vector<Work> rest;
    while (queue_.try_take_all(rest)) {
      for (auto& w : rest) perform(w);
      rest.clear();
    }
  }
  stored_.clear();
  live_.clear();
}

void MemoryStore::run() {
  pthread_setname_np(pthread_self(), "carrier-memstore");
  std::vector<Work> group;
  while (queue_.take_all(group)) {
    for (auto& w : group) perform(w);
    group.clear();
  }
}

void MemoryStore::perform(Work& w) {
  if (w.is_read) {
    std::vector<Result<model::MessagePtr>> answers;
    answers.reserve(w.items.size());
    for (const ReadItem& item : w.items) {
      auto it = stored_.find(item.location.file);
      if (it == stored_.end() || it->second.queue != w.queue || it->second.message->id != item.id ||
          item.location.offset != 0 || item.location.record != 0) {
        answers.emplace_back(unexpected(Errc::not_found, "memory store: no live message " + item.id.to_string() +
                                                             " at location " + std::to_string(item.location.file) +
                                                             " in " + w.queue));
      } else {
        answers.emplace_back(it->second.message);
      }
    }
    if (w.read_done) w.read_done(std::move(answers));
    return;
  }
  std::vector<Location> locations(w.located ? w.batch.size() : 0);
  for (std::size_t i = 0; i < w.batch.size(); ++i) {
    Record& r = w.batch[i];
    if (r.kind == RecordKind::delivered) continue;
    if (r.kind == RecordKind::message && !r.message) continue;
    auto key = live_key(r.queue, r.message_id);
    if (auto old = live_.find(key); old != live_.end()) {
      stored_.erase(old->second);
      live_.erase(old);
    }
    // Only a caller that asked for locations can read a message back: a plain append keeps
    // nothing (what the broker holds in memory anyway costs the store nothing).
    if (r.kind == RecordKind::ack || !w.located) continue;
    const std::uint64_t seq = next_seq_++;
    stored_.emplace(seq, Stored{r.queue, std::move(r.message)});
    live_.emplace(std::move(key), seq);
    if (w.located) locations[i] = Location{seq, 0, 0};
  }
  // A message stored and acked in the same batch has no location any more.
  if (w.located) {
    for (auto& loc : locations) {
      if (loc.valid() && stored_.count(loc.file) == 0) loc = Location{};
    }
    w.located(ok(), std::move(locations));
  } else if (w.durable) {
    w.durable(ok());
  }
}

}  // namespace carrier::store::memory
