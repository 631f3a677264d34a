#pragma once

// The store conformance suite's fixture: one test body, run against every backend (nats's
// testAllStoreAllPermutations). A backend joins by adding its kind to backends() below; properties
// only a durable backend can have are skipped for the memory store. PostgreSQL joins when
// CARRIER_TEST_POSTGRES_URL names a server (ctest's store_test_postgres starts one with
// scripts/postgres-test-server); each test then gets a schema of its own.
//
// Its tests are in two files: the write and recovery contract in store_conformance_test.cpp, which
// instantiates the suite (once for the binary, so for both files), and the read path in
// store_read_conformance_test.cpp. Test binary only. A named namespace and inline functions, not
// an anonymous namespace: gtest wants the one fixture type in every file of a suite, and the unity
// build may compile both files in one batch.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "store/store.hpp"
#include "store/test_support.hpp"

namespace carrier::store::testing {

inline const char* postgres_url() { return std::getenv("CARRIER_TEST_POSTGRES_URL"); }

// A schema no other test uses, so every test starts from empty tables on a shared server.
inline std::string fresh_schema() {
  static std::mt19937_64 random{std::random_device{}()};
  return "conformance_" + std::to_string(random() % 1000000000000ull);
}

// The options of a conformance test's store: `kind` in `dir`, on its own PostgreSQL schema.
inline Options conformance_options(const std::string& kind, const std::filesystem::path& dir,
                                   std::uint64_t segment_bytes, const std::string& schema) {
  Options o;
  o.kind = kind;
  o.data_dir = dir;
  if (segment_bytes != 0) o.segment_bytes = segment_bytes;
  if (o.kind == "postgres") {
    o.postgres_url = postgres_url();
    o.postgres_schema = schema;
  }
  return o;
}

class StoreConformance : public ::testing::TestWithParam<const char*> {
 protected:
  bool durable() const { return std::string(GetParam()) != "memory"; }

  Options options() const { return conformance_options(GetParam(), dir_.path(), segment_bytes_, schema_); }

  // open → recover → start; returns what recover() visited.
  std::vector<RecoveredMessage> start_store(const RecoverOptions& recover_options = {}) {
    std::vector<RecoveredMessage> recovered;
    auto made = make_store(options());
    EXPECT_TRUE(made) << made.error().to_string();
    if (!made) return recovered;
    store_ = std::move(*made);
    auto opened = store_->open();
    EXPECT_TRUE(opened) << opened.error().to_string();
    auto rec = store_->recover(recover_options, [&](RecoveredMessage m) { recovered.push_back(std::move(m)); });
    EXPECT_TRUE(rec) << rec.error().to_string();
    store_->start();
    return recovered;
  }

  std::vector<RecoveredMessage> restart(const RecoverOptions& recover_options = {}) {
    store_->close();
    store_.reset();
    return start_store(recover_options);
  }

  // Appends and waits for the outcome.
  Status append_sync(Batch batch) {
    Outcomes out;
    store_->append(std::move(batch), out.callback());
    EXPECT_TRUE(out.wait_for(1));
    return out.statuses().at(0);
  }

  struct Appended {
    Status status;
    std::vector<Location> locations;
  };
  // append_located() and waits for the outcome.
  Appended append_located_sync(Batch batch) {
    std::mutex m;
    std::condition_variable cv;
    std::optional<Appended> got;
    store_->append_located(std::move(batch), [&](Status st, std::vector<Location> where) {
      std::lock_guard lock(m);
      got = Appended{std::move(st), std::move(where)};
      cv.notify_all();
    });
    std::unique_lock lock(m);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
    return got.value_or(Appended{unexpected(Errc::timed_out, "no callback"), {}});
  }

  struct ReadBack {
    std::vector<Result<model::MessagePtr>> answers;
    std::thread::id thread;
  };
  // read() and waits for its one callback.
  ReadBack read_sync(const std::string& queue, std::vector<ReadItem> items) {
    std::mutex m;
    std::condition_variable cv;
    std::optional<ReadBack> got;
    int calls = 0;
    store_->read(queue, std::move(items), [&](std::vector<Result<model::MessagePtr>> answers) {
      std::lock_guard lock(m);
      ++calls;
      got = ReadBack{std::move(answers), std::this_thread::get_id()};
      cv.notify_all();
    });
    std::unique_lock lock(m);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
    EXPECT_EQ(calls, 1);
    return got.value_or(ReadBack{});
  }

  TempDir dir_;
  const std::string schema_ = fresh_schema();
  std::uint64_t segment_bytes_ = 0;  // log: 0 keeps the default
  std::unique_ptr<Store> store_;
};

inline std::vector<const char*> backends() {
  std::vector<const char*> kinds = {"memory", "log", "sqlite"};
  if (postgres_url() != nullptr) kinds.push_back("postgres");
  return kinds;
}

}  // namespace carrier::store::testing
