#pragma once

// Helpers for the journal's own tests: write a journal through LogStore, find and damage
// frames in its files.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "store/log/journal_directory.hpp"
#include "store/log/log_store.hpp"
#include "store/log/segment_reader.hpp"
#include "store/test_support.hpp"

namespace carrier::store::log::testing {

using store::testing::make_message;
using store::testing::Outcomes;

inline Options journal_options(const std::filesystem::path& data_dir,
                               std::uint64_t segment_bytes = 64ull << 20) {
  Options o;
  o.kind = "log";
  o.data_dir = data_dir;
  o.segment_bytes = segment_bytes;
  o.fsync = false;  // these tests are about layout, not power loss
  return o;
}

// Writes each batch (waiting for each, so one batch per group commit) and closes.
inline void write_journal(const Options& options, std::vector<Batch> batches) {
  LogStore store(options);
  ASSERT_TRUE(store.open());
  ASSERT_TRUE(store.recover([](RecoveredMessage) {}));
  store.start();
  for (auto& b : batches) {
    Outcomes out;
    store.append(std::move(b), out.callback());
    ASSERT_TRUE(out.wait_for(1));
    ASSERT_TRUE(out.statuses()[0]) << out.statuses()[0].error().to_string();
  }
  store.close();
}

struct Reopened {
  Status status;
  std::vector<RecoveredMessage> messages;
  RecoveryReport report;
};

inline Reopened reopen(const Options& options) {
  Reopened out;
  LogStore store(options);
  out.status = store.open();
  if (!out.status) return out;
  out.status = store.recover([&](RecoveredMessage m) { out.messages.push_back(std::move(m)); });
  out.report = store.recovery_report();
  store.close();
  return out;
}

inline std::vector<std::string> correlation_ids(const std::vector<RecoveredMessage>& ms) {
  std::vector<std::string> out;
  for (const auto& m : ms) out.push_back(m.message->correlation_id);
  return out;
}

inline std::vector<SegmentFile> segments_of(const Options& options) {
  auto listed = list_segments(journal_dir(options.data_dir));
  EXPECT_TRUE(listed);
  return listed ? *listed : std::vector<SegmentFile>{};
}

// Offsets of the frames in a segment file, in order, with the end of the last as the final
// element.
inline std::vector<std::uint64_t> frame_offsets(const std::filesystem::path& file) {
  auto reader = SegmentReader::open(file);
  EXPECT_TRUE(reader);
  std::vector<std::uint64_t> out;
  if (!reader || !reader->read_header()) return out;
  for (;;) {
    auto item = reader->next();
    if (item.kind != SegmentReader::Item::Kind::batch) {
      out.push_back(item.offset);
      return out;
    }
    out.push_back(item.offset);
  }
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline void flip_byte(const std::filesystem::path& p, std::uint64_t offset) {
  std::string bytes = read_file(p);
  ASSERT_LT(offset, bytes.size());
  bytes[offset] ^= 0x5a;
  write_file(p, bytes);
}

inline void truncate_file(const std::filesystem::path& p, std::uint64_t size) {
  std::filesystem::resize_file(p, size);
}

inline Batch one_message(int n, const std::string& queue = "queue:q") {
  return {Record::added(queue, make_message(n))};
}

}  // namespace carrier::store::log::testing
