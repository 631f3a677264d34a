#include "store/memory/memory_store.hpp"

#include <pthread.h>

#include <algorithm>

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

std::string lane_key(const std::string& queue, std::uint8_t priority) {
  std::string k;
  k.reserve(queue.size() + 2);
  k.append(queue);
  k.push_back('\0');
  k.push_back(static_cast<char>(priority));
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

void MemoryStore::scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) {
  Work w;
  w.is_scan = true;
  w.queue = std::move(queue);
  w.priority = priority;
  w.from = from;
  w.max = max;
  w.scan_done = std::move(done);
  if (!queue_.push(w) && w.scan_done) w.scan_done(unexpected(Errc::shutting_down, "memory store is closed"));
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
  lanes_.clear();
}

void MemoryStore::run() {
  pthread_setname_np(pthread_self(), "carrier-memstore");
  std::vector<Work> group;
  while (queue_.take_all(group)) {
    for (auto& w : group) perform(w);
    group.clear();
  }
}

// The seqs of one lane are ordered, so a scan costs what it returns, not the backlog.
void MemoryStore::perform_scan(Work& w) {
  ScanResult out;
  out.next = w.from;
  auto lane = lanes_.find(lane_key(w.queue, w.priority));
  // Locations are {seq, 0, 0}: the first seq at or after `from` is from.file, or the one after it
  // when `from` points inside it.
  const std::uint64_t first = w.from.offset == 0 && w.from.record == 0 ? w.from.file : w.from.file + 1;
  bool more = false;
  if (lane != lanes_.end()) {
    auto it = lane->second.lower_bound(first);
    for (; it != lane->second.end() && out.messages.size() < w.max; ++it) {
      const Stored& s = stored_.at(*it);
      out.messages.push_back(ScannedMessage{s.message, Location{*it, 0, 0}, s.delivery_count});
      out.next = Location{*it + 1, 0, 0};
    }
    more = it != lane->second.end();
  }
  out.exhausted = !more;
  // Everything of this lane was looked at: the next scan starts past every seq handed out so far.
  if (out.exhausted) out.next = std::max(out.next, Location{next_seq_, 0, 0});
  if (w.scan_done) w.scan_done(std::move(out));
}

void MemoryStore::forget(std::unordered_map<std::string, std::uint64_t>::iterator live) {
  if (auto s = stored_.find(live->second); s != stored_.end()) {
    auto lane = lanes_.find(lane_key(s->second.queue, s->second.message->priority));
    if (lane != lanes_.end()) {
      lane->second.erase(live->second);
      if (lane->second.empty()) lanes_.erase(lane);
    }
    stored_.erase(s);
  }
  live_.erase(live);
}

void MemoryStore::perform(Work& w) {
  if (w.is_scan) {
    perform_scan(w);
    return;
  }
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
    if (r.kind == RecordKind::delivered) {
      // The latest count, like a durable store's recovery would give it.
      if (auto live = live_.find(live_key(r.queue, r.message_id)); live != live_.end()) {
        stored_.at(live->second).delivery_count = r.delivery_count;
      }
      continue;
    }
    if (r.kind == RecordKind::message && !r.message) continue;
    auto key = live_key(r.queue, r.message_id);
    if (auto old = live_.find(key); old != live_.end()) forget(old);
    // Only a caller that asked for locations can read a message back: a plain append keeps
    // nothing (what the broker holds in memory anyway costs the store nothing).
    if (r.kind == RecordKind::ack || !w.located) continue;
    const std::uint64_t seq = next_seq_++;
    lanes_[lane_key(r.queue, r.message->priority)].insert(seq);
    stored_.emplace(seq, Stored{r.queue, std::move(r.message), 0});
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
