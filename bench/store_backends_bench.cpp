// The durable store backends side by side (log, sqlite, postgres), through the Store interface
// the broker uses:
//   ConfirmedAppends: persistent single-message batches (256-byte bodies) confirmed per second,
//     with 1, 64 or 1024 batches in flight (a broker with many producers keeps many in flight;
//     each backend folds them into one sync or transaction).
//   Recovery: append N messages (timed too: `fill_per_s`), close, then open + recover them all.
//
//   store_backends_bench                          # N = 100,000 (what `make bench` runs)
//   store_backends_bench --messages=1000000       # the numbers in docs/performance.md
//   scripts/postgres-test-server exec build/bench/store_backends_bench --messages=1000000
//
// PostgreSQL is measured when CARRIER_TEST_POSTGRES_URL names a server (each benchmark uses a
// fresh schema and drops it after). CARRIER_BENCH_DIR picks the disk for log and sqlite
// (default $TMPDIR). Every backend runs with its durable defaults: fdatasync per group commit,
// SQLite synchronous = full, PostgreSQL's synchronous_commit as the server has it (on).

#include <benchmark/benchmark.h>
#include <libpq-fe.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "store/log/log_store.hpp"
#include "store/postgres/pg_connection.hpp"
#include "store/postgres/postgres_store.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/store.hpp"

namespace carrier::store {
namespace {

std::uint64_t g_messages = 100'000;

const char* postgres_url() { return std::getenv("CARRIER_TEST_POSTGRES_URL"); }

// A data directory (and, for postgres, a schema) for one benchmark, removed afterwards.
class Scratch {
 public:
  explicit Scratch(const std::string& kind) : kind_(kind) {
    const char* base = std::getenv("CARRIER_BENCH_DIR");
    std::string pattern = ((base ? std::filesystem::path(base) : std::filesystem::temp_directory_path()) /
                           "carrier-backends-bench-XXXXXX")
                              .string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    dir_ = pattern;
    static std::mt19937_64 random{std::random_device{}()};
    schema_ = "bench_" + std::to_string(random() % 1000000000000ull);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    if (kind_ == "postgres") {
      auto c = postgres::PgConnection::connect(postgres_url());
      if (c) (void)c->exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
    }
  }
  Options options() const {
    Options o;
    o.kind = kind_;
    o.data_dir = dir_;
    if (kind_ == "postgres") {
      o.postgres_url = postgres_url();
      o.postgres_schema = schema_;
    }
    return o;
  }

 private:
  std::string kind_;
  std::filesystem::path dir_;
  std::string schema_;
};

std::unique_ptr<Store> open_store(const Options& o, std::uint64_t* recovered = nullptr) {
  auto made = make_store(o);
  if (!made) std::abort();
  auto store = std::move(*made);
  if (auto st = store->open(); !st) {
    std::fprintf(stderr, "%s: %s\n", o.kind.c_str(), st.error().to_string().c_str());
    std::abort();
  }
  std::uint64_t n = 0;
  if (!store->recover([&](RecoveredMessage) { ++n; })) std::abort();
  if (recovered) *recovered = n;
  store->start();
  return store;
}

model::MessagePtr bench_message(std::uint64_t n, const model::Body& body) {
  auto m = std::make_shared<model::Message>();
  m->id = model::MessageId{0x0190a4e57b1c7000ULL + n, n * 0x9e3779b97f4a7c15ULL};
  m->destination = model::Destination{model::DestinationKind::queue, "bench"};
  m->persistent = true;
  m->timestamp_ms = 1700000000000;
  m->body = body;
  return m;
}

// Keeps at most `window` batches unconfirmed; each callback frees a slot.
class Window {
 public:
  explicit Window(std::size_t size) : size_(size) {}
  DurableCallback slot() {
    std::unique_lock lock(mutex_);
    freed_.wait(lock, [&] { return in_flight_ < size_; });
    ++in_flight_;
    return [this](Status s) {
      if (!s) {
        std::fprintf(stderr, "append failed: %s\n", s.error().to_string().c_str());
        std::abort();
      }
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
  const std::size_t size_;
};

// Batches per sync (log) or per transaction (sqlite, postgres).
double batches_per_commit(Store& store) {
  if (auto* s = dynamic_cast<log::LogStore*>(&store)) {
    auto st = s->stats();
    return st.syncs ? static_cast<double>(st.batches) / static_cast<double>(st.syncs) : 0.0;
  }
  if (auto* s = dynamic_cast<sqlite::SqliteStore*>(&store)) {
    auto st = s->stats();
    return st.transactions ? static_cast<double>(st.batches) / static_cast<double>(st.transactions) : 0.0;
  }
  if (auto* s = dynamic_cast<postgres::PostgresStore*>(&store)) {
    auto st = s->stats();
    return st.transactions ? static_cast<double>(st.batches) / static_cast<double>(st.transactions) : 0.0;
  }
  return 0.0;
}

void confirmed_appends(benchmark::State& state, std::string kind) {
  const auto in_flight = static_cast<std::size_t>(state.range(0));
  Scratch scratch(kind);
  auto store = open_store(scratch.options());
  const model::Body body = std::make_shared<const std::string>(256, 'x');
  Window window(in_flight);
  std::uint64_t n = 0;
  for (auto _ : state) {
    store->append({Record::added("queue:bench", bench_message(++n, body))}, window.slot());
  }
  window.drain();
  state.counters["batches_per_commit"] = batches_per_commit(*store);
  store->close();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void recovery(benchmark::State& state, std::string kind) {
  Scratch scratch(kind);
  const model::Body body = std::make_shared<const std::string>(256, 'x');
  double fill_seconds = 0;
  {
    auto store = open_store(scratch.options());
    Window window(4096);
    const auto began = std::chrono::steady_clock::now();
    for (std::uint64_t n = 1; n <= g_messages; ++n) {
      store->append({Record::added("queue:bench." + std::to_string(n % 16), bench_message(n, body))},
                    window.slot());
    }
    window.drain();
    fill_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    state.counters["fill_batches_per_commit"] = batches_per_commit(*store);
    store->close();
  }
  std::uint64_t recovered = 0;
  for (auto _ : state) {
    const auto began = std::chrono::steady_clock::now();
    auto store = open_store(scratch.options(), &recovered);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    state.SetIterationTime(seconds);
    store->close();
    if (recovered != g_messages) {
      state.SkipWithError("recovered a different number of messages than were appended");
      return;
    }
  }
  state.counters["messages"] = static_cast<double>(g_messages);
  state.counters["fill_per_s"] = static_cast<double>(g_messages) / fill_seconds;
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * recovered));
}

std::vector<std::string> backends() {
  std::vector<std::string> kinds = {"log", "sqlite"};
  if (postgres_url() != nullptr) kinds.emplace_back("postgres");
  return kinds;
}

}  // namespace
}  // namespace carrier::store

int main(int argc, char** argv) {
  using namespace carrier::store;
  // Our own flag first; the rest goes to Google Benchmark.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--messages=", 11) == 0) {
      g_messages = std::strtoull(argv[i] + 11, nullptr, 10);
      if (g_messages == 0) {
        std::fprintf(stderr, "--messages must be a positive count\n");
        return 2;
      }
      continue;
    }
    args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  for (const auto& kind : backends()) {
    benchmark::RegisterBenchmark(("ConfirmedAppends/" + kind).c_str(), confirmed_appends, kind)
        ->ArgName("in_flight")
        ->Arg(1)
        ->Arg(64)
        ->Arg(1024)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("Recovery/" + kind).c_str(), recovery, kind)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
