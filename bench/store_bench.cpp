// Journal throughput: append + group-commit fdatasync, by batch size, body size and how many
// confirmations are outstanding (a broker with many producers keeps many in flight; the
// writer folds them into one fdatasync). Set CARRIER_BENCH_DIR to measure a real disk; the
// default is $TMPDIR.
//
//   store_bench --benchmark_filter=Confirmed
//   store_bench --benchmark_filter=ReadBack      (the read path, by location)
//   store_bench --benchmark_filter=Recovery      (restart time against backlog size, with and
//                                                 without segment indexes and summaries)
//   store_bench --benchmark_filter=Scan          (reading a cold tail back: Store::scan to the end)

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/log/journal_directory.hpp"
#include "store/log/log_store.hpp"
#include "store/log/record_codec.hpp"

namespace carrier::store::log {
namespace {

std::filesystem::path bench_dir() {
  const char* base = std::getenv("CARRIER_BENCH_DIR");
  std::string pattern =
      ((base ? std::filesystem::path(base) : std::filesystem::temp_directory_path()) /
       "carrier-store-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) std::abort();
  return pattern;
}

model::MessagePtr bench_message(std::uint64_t n, const model::Body& body) {
  auto m = std::make_shared<model::Message>();
  m->id = model::MessageId{n, n * 0x9e3779b97f4a7c15ULL};
  m->destination = model::Destination{model::DestinationKind::queue, "bench"};
  m->persistent = true;
  m->timestamp_ms = 1700000000000;
  m->body = body;
  return m;
}

// Keeps at most `window` batches outstanding; each callback frees a slot. Then acks
// everything, so the journal is reclaimed as it would be in a steady state.
class Pipeline {
 public:
  explicit Pipeline(std::size_t window) : window_(window) {}

  DurableCallback slot() {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return in_flight_ < window_; });
    ++in_flight_;
    return [this](Status s) {
      if (!s) std::abort();
      std::lock_guard lock(mutex_);
      --in_flight_;
      freed_.notify_one();
    };
  }
  void drain() {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return in_flight_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  std::size_t in_flight_ = 0;
  const std::size_t window_;
};

// Args: records per batch, body bytes, batches in flight, fsync.
void BM_ConfirmedSends(benchmark::State& state) {
  const auto per_batch = static_cast<std::size_t>(state.range(0));
  const auto body_bytes = static_cast<std::size_t>(state.range(1));
  const auto window = static_cast<std::size_t>(state.range(2));
  const bool fsync = state.range(3) != 0;
  const auto dir = bench_dir();
  Options o;
  o.data_dir = dir;
  o.fsync = fsync;
  auto store = std::make_unique<LogStore>(o);
  if (!store->open() || !store->recover([](RecoveredMessage) {})) std::abort();
  store->start();
  const model::Body body = std::make_shared<const std::string>(body_bytes, 'x');
  Pipeline pipeline(window);
  std::uint64_t n = 0;
  for (auto _ : state) {
    Batch batch;
    batch.reserve(per_batch);
    for (std::size_t i = 0; i < per_batch; ++i) {
      batch.push_back(Record::added("queue:bench", bench_message(++n, body)));
    }
    store->append(std::move(batch), pipeline.slot());
  }
  pipeline.drain();
  const auto stats = store->stats();
  store->close();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * per_batch));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * per_batch * body_bytes));
  state.counters["batches_per_sync"] =
      stats.syncs ? static_cast<double>(stats.batches) / static_cast<double>(stats.syncs) : 0.0;
  std::filesystem::remove_all(dir);
}

BENCHMARK(BM_ConfirmedSends)
    ->ArgNames({"per_batch", "body", "in_flight", "fsync"})
    ->Args({1, 256, 1, 1})
    ->Args({1, 256, 64, 1})
    ->Args({1, 256, 1024, 1})
    ->Args({10, 256, 64, 1})
    ->Args({100, 256, 16, 1})
    ->Args({1, 4096, 256, 1})
    ->Args({1, 65536, 64, 1})
    ->Args({1, 256, 1024, 0})
    ->UseRealTime();

// The read path a paged queue uses: a journal of 20,000 messages (fsync off; the page cache is
// warm, so this is the reader thread's cost: liveness check, pread, CRC, decode), read back
// `per_read` locations at a time, `in_flight` reads outstanding.
void BM_ReadBack(benchmark::State& state) {
  const auto per_read = static_cast<std::size_t>(state.range(0));
  const auto body_bytes = static_cast<std::size_t>(state.range(1));
  const auto in_flight = static_cast<std::size_t>(state.range(2));
  constexpr std::size_t kMessages = 20000;
  const auto dir = bench_dir();
  Options o;
  o.data_dir = dir;
  o.fsync = false;
  auto store = std::make_unique<LogStore>(o);
  if (!store->open() || !store->recover([](RecoveredMessage) {})) std::abort();
  store->start();
  const model::Body body = std::make_shared<const std::string>(body_bytes, 'x');
  std::vector<ReadItem> all(kMessages);
  {
    std::mutex m;
    std::condition_variable cv;
    std::size_t done = 0;
    for (std::size_t i = 0; i < kMessages; ++i) {
      auto msg = bench_message(i + 1, body);
      all[i].id = msg->id;
      store->append_located({Record::added("queue:bench", msg)}, [&, i](Status s, std::vector<Location> where) {
        if (!s) std::abort();
        std::lock_guard lock(m);
        all[i].location = where.at(0);
        ++done;
        cv.notify_one();
      });
    }
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return done == kMessages; });
  }
  std::mutex m;
  std::condition_variable cv;
  std::size_t outstanding = 0, next = 0;
  for (auto _ : state) {
    std::vector<ReadItem> items;
    items.reserve(per_read);
    for (std::size_t k = 0; k < per_read; ++k) items.push_back(all[next++ % kMessages]);
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return outstanding < in_flight; });
      ++outstanding;
    }
    store->read("queue:bench", std::move(items), [&](std::vector<Result<model::MessagePtr>> answers) {
      for (const auto& a : answers) {
        if (!a) std::abort();
      }
      std::lock_guard lock(m);
      --outstanding;
      cv.notify_one();
    });
  }
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return outstanding == 0; });
  }
  store->close();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * per_read));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * per_read * body_bytes));
  std::filesystem::remove_all(dir);
}

BENCHMARK(BM_ReadBack)
    ->ArgNames({"per_read", "body", "in_flight"})
    ->Args({1, 1024, 1})
    ->Args({64, 1024, 1})
    ->Args({64, 1024, 4})
    ->Args({256, 1024, 4})
    ->Args({16, 65536, 4})
    ->UseRealTime();

// Restart time against backlog size (issue 17): a journal of `messages` 1 KiB persistent
// messages in one queue with no consumer (64 MiB segments, written once per size with fsync off
// and reused by every case), recovered from cold:
//   index 1: closed segments applied from their index files, as after any clean roll;
//   index 0: the index files removed first, so every segment is read (and its index rewritten,
//            which this includes);
//   summaries 1: RecoverOptions::summary_only for the queue (the paging core's restart): no body
//            is read or kept; summaries 0: every message comes back whole (read back by location
//            when its segment was applied from its index).
// The page cache is NOT dropped between iterations (that needs root and a quiet machine): the
// segments are read from memory when they fit, so this is the CPU cost of recovery.
std::map<std::size_t, std::filesystem::path> made;  // removed at exit

std::filesystem::path recovery_journal(std::size_t messages) {
  if (auto it = made.find(messages); it != made.end()) return it->second;
  const auto dir = bench_dir();
  Options o;
  o.data_dir = dir;
  o.fsync = false;
  {
    LogStore store(o);
    if (!store.open() || !store.recover([](RecoveredMessage) {})) std::abort();
    store.start();
    const model::Body body = std::make_shared<const std::string>(1024, 'x');
    Pipeline pipeline(4096);
    for (std::size_t i = 0; i < messages; ++i) {
      store.append({Record::added("queue:backlog", bench_message(i + 1, body))}, pipeline.slot());
    }
    pipeline.drain();
    store.close();
  }
  if (made.empty()) {
    std::atexit([] {
      for (const auto& [n, d] : made) std::filesystem::remove_all(d);
    });
  }
  made[messages] = dir;
  return dir;
}

void BM_Recovery(benchmark::State& state) {
  const auto messages = static_cast<std::size_t>(state.range(0));
  const bool index = state.range(1) != 0;
  const bool summaries = state.range(2) != 0;
  const auto dir = recovery_journal(messages);
  Options o;
  o.data_dir = dir;
  o.fsync = false;
  RecoverOptions ro;
  if (summaries) ro.summary_only = [](std::string_view) { return true; };
  RecoveryReport report;
  for (auto _ : state) {
    state.PauseTiming();
    const auto jdir = journal_dir(dir);
    if (!index) {
      auto listed = list_index_files(jdir);
      if (listed) for (const auto& f : *listed) std::filesystem::remove(f.path);
    }
    state.ResumeTiming();
    LogStore store(o);
    std::size_t seen = 0;
    if (!store.open() || !store.recover(ro, [&](RecoveredMessage m) { seen += m.message || m.summary.footprint ? 1 : 0; })) {
      std::abort();
    }
    if (seen != messages) std::abort();
    report = store.recovery_report();
    store.close();
  }
  state.counters["segments_indexed"] = static_cast<double>(report.segments_indexed);
  state.counters["segments_read"] = static_cast<double>(report.segments_read);
  state.counters["messages_per_s"] =
      benchmark::Counter(static_cast<double>(messages), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Recovery)
    ->ArgNames({"messages", "index", "summaries"})
    ->ArgsProduct({{100000, 1000000, 3000000}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2)
    ->UseRealTime();

// Reading a cold tail back (issue 17): a journal of `messages` 1 KiB persistent messages spread
// round-robin over `queues` queues (64 MiB segments, written once per shape, fsync off), opened
// and recovered with summaries (not timed), then one queue read to its end by Store::scan calls
// of 128, each waited for, as the paging core's read-ahead does: the time is the scans' only.
// With one queue every record examined is handed out; with 1,000 the scan examines the lane of
// its queue in every segment's catalog (1/1000 of the records) and loads every segment's index.
// A fresh store per iteration, so the catalog cache starts cold; the page cache is not dropped.
std::map<std::pair<std::size_t, std::size_t>, std::filesystem::path> scan_made;  // removed at exit

std::filesystem::path scan_journal(std::size_t messages, std::size_t queues) {
  if (auto it = scan_made.find({messages, queues}); it != scan_made.end()) return it->second;
  const auto dir = bench_dir();
  Options o;
  o.data_dir = dir;
  o.fsync = false;
  {
    LogStore store(o);
    if (!store.open() || !store.recover([](RecoveredMessage) {})) std::abort();
    store.start();
    const model::Body body = std::make_shared<const std::string>(1024, 'x');
    Pipeline pipeline(4096);
    for (std::size_t i = 0; i < messages; ++i) {
      store.append({Record::added("queue:tail-" + std::to_string(i % queues), bench_message(i + 1, body))},
                   pipeline.slot());
    }
    pipeline.drain();
    store.close();
  }
  if (scan_made.empty()) {
    std::atexit([] {
      for (const auto& [n, d] : scan_made) std::filesystem::remove_all(d);
    });
  }
  scan_made[{messages, queues}] = dir;
  return dir;
}

void BM_Scan(benchmark::State& state) {
  const auto messages = static_cast<std::size_t>(state.range(0));
  const auto queues = static_cast<std::size_t>(state.range(1));
  constexpr std::size_t kWindow = 128;
  const auto dir = scan_journal(messages, queues);
  Options o;
  o.data_dir = dir;
  o.fsync = false;
  RecoverOptions ro;
  ro.summary_only = [](std::string_view) { return true; };
  const std::size_t expected = messages / queues + (messages % queues ? 1 : 0);
  LogStore::Stats stats;
  std::size_t scans = 0;
  for (auto _ : state) {
    state.PauseTiming();
    LogStore store(o);
    if (!store.open() || !store.recover(ro, [](RecoveredMessage) {})) std::abort();
    store.start();
    state.ResumeTiming();
    std::mutex m;
    std::condition_variable cv;
    Location from;
    std::size_t seen = 0;
    scans = 0;
    for (bool exhausted = false; !exhausted; ++scans) {
      std::optional<Result<ScanResult>> got;
      store.scan("queue:tail-0", 4, from, kWindow, [&](Result<ScanResult> r) {
        std::lock_guard lock(m);
        got = std::move(r);
        cv.notify_all();
      });
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return got.has_value(); });
      if (!*got) std::abort();
      seen += (*got)->messages.size();
      from = (*got)->next;
      exhausted = (*got)->exhausted;
    }
    if (seen != expected) std::abort();
    state.PauseTiming();
    stats = store.stats();
    store.close();
    state.ResumeTiming();
  }
  state.counters["scans"] = static_cast<double>(scans);
  state.counters["from_index"] = static_cast<double>(stats.scan_catalogs_from_index);
  state.counters["from_frames"] = static_cast<double>(stats.scan_catalogs_from_frames);
  state.counters["messages_per_s"] =
      benchmark::Counter(static_cast<double>(expected), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Scan)
    ->ArgNames({"messages", "queues"})
    ->Args({1000000, 1})
    ->Args({1000000, 1000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

// The codec alone: what each shard spends per batch before the writer sees it.
void BM_EncodeBatch(benchmark::State& state) {
  const auto body_bytes = static_cast<std::size_t>(state.range(0));
  const model::Body body = std::make_shared<const std::string>(body_bytes, 'x');
  Batch batch{Record::added("queue:bench", bench_message(1, body))};
  std::string frame;
  for (auto _ : state) {
    frame.clear();
    if (!encode_batch(batch, frame)) std::abort();
    benchmark::DoNotOptimize(frame.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * body_bytes));
}
BENCHMARK(BM_EncodeBatch)->Arg(256)->Arg(4096)->Arg(1 << 20);

}  // namespace
}  // namespace carrier::store::log
