// The live-set checkpoint (docs/storage.md, "Checkpoint"): recovery from it must give the same
// live set as a full replay, tails expanded by scan() included; a damaged or stale one is not
// used; what it cannot resolve is never lost.

#include "store/log/live_set_checkpoint.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <tuple>

#include "store/log/journal_test_support.hpp"
#include "store/log/segment_index_file.hpp"

namespace carrier::store::log {
namespace {

using namespace log::testing;
using store::testing::TempDir;

bool paged_queue(std::string_view q) { return q.rfind("queue:$", 0) != 0; }

// One live copy as recovery (or a scan) reports it.
struct Seen {
  std::string queue;
  model::MessageId id;
  Location location;
  std::uint32_t deliveries = 0;
  bool one_by_one = false;  // visited, not in a tail
  auto key() const { return std::tie(queue, id.hi, id.lo, location); }
  bool operator<(const Seen& o) const { return key() < o.key(); }
};

// A LogStore opened and recovered the way a paging broker does (summary_only + tail), then
// started; waits on every append.
class Broker {
 public:
  explicit Broker(const Options& o, bool with_tails = true) : store_(o) {
    EXPECT_TRUE(store_.open());
    RecoverOptions ro;
    ro.summary_only = paged_queue;
    if (with_tails) ro.tail = [this](RecoveredTail t) {
      EXPECT_TRUE(visited_.empty()) << "a tail after a message";
      tails_.push_back(t);
    };
    status_ = store_.recover(ro, [this](RecoveredMessage m) {
      if (!paged_queue(m.queue)) {
        EXPECT_TRUE(m.message) << "a queue not summary_only comes back whole";
      }
      visited_.push_back(std::move(m));
    });
    EXPECT_TRUE(status_) << status_.error().to_string();
    store_.start();
  }

  LogStore& store() { return store_; }
  const std::vector<RecoveredTail>& tails() const { return tails_; }
  const std::vector<RecoveredMessage>& visited() const { return visited_; }
  RecoveryReport report() const { return store_.recovery_report(); }

  std::vector<Location> append(Batch b) {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::vector<Location> where;
    Status st = ok();
    store_.append_located(std::move(b), [&](Status s, std::vector<Location> l) {
      std::lock_guard lock(m);
      st = std::move(s);
      where = std::move(l);
      done = true;
      cv.notify_all();
    });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return done; });
    EXPECT_TRUE(st);
    return where;
  }

  // Writer idle: the group holding the last append is reclaimed and checkpointed.
  void quiesce() {
    append({});
    append({});
  }

  Result<ScanResult> scan(const std::string& q, std::uint8_t p, Location from) {
    std::mutex m;
    std::condition_variable cv;
    std::optional<Result<ScanResult>> got;
    store_.scan(q, p, from, 64, [&](Result<ScanResult> r) {
      std::lock_guard lock(m);
      got.emplace(std::move(r));
      cv.notify_all();
    });
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return got.has_value(); });
    return std::move(*got);
  }

  // The live set: what was visited, and each tail read through with scan() (less what was
  // visited one by one), each tail's count checked.
  std::set<Seen> live_set() {
    std::set<Seen> out;
    std::set<std::tuple<std::string, std::uint64_t, std::uint64_t, Location>> one_by_one;
    for (const auto& m : visited_) {
      out.insert(Seen{m.queue, m.message ? m.message->id : m.summary.id, m.location, m.delivery_count, true});
      one_by_one.insert({m.queue, (m.message ? m.message->id : m.summary.id).hi,
                         (m.message ? m.message->id : m.summary.id).lo, m.location});
    }
    for (const auto& t : tails_) {
      std::uint64_t found = 0;
      Location from = t.from;
      for (;;) {
        auto r = scan(t.queue, t.priority, from);
        EXPECT_TRUE(r);
        if (!r) break;
        for (const auto& s : r->messages) {
          if (s.message->deliver_at_ms != 0) continue;  // the core's scan skips these; listed
          if (one_by_one.count({t.queue, s.message->id.hi, s.message->id.lo, s.location}) != 0) continue;
          ++found;
          out.insert(Seen{t.queue, s.message->id, s.location, s.delivery_count, false});
        }
        from = r->next;
        if (r->exhausted) break;
      }
      EXPECT_EQ(found, t.count) << "tail of " << t.queue << " priority " << int(t.priority);
    }
    return out;
  }

 private:
  LogStore store_;
  Status status_ = ok();
  std::vector<RecoveredTail> tails_;
  std::vector<RecoveredMessage> visited_;
};

void copy_journal(const std::filesystem::path& from_data, const std::filesystem::path& to_data) {
  std::filesystem::remove_all(to_data);
  std::filesystem::create_directories(journal_dir(to_data));
  for (const auto& e : std::filesystem::directory_iterator(journal_dir(from_data))) {
    if (e.path().filename() == "LOCK") continue;
    std::filesystem::copy_file(e.path(), journal_dir(to_data) / e.path().filename());
  }
}

// Recovers a copy of `o`'s journal with its checkpoint and another without, and checks they
// agree with each other and with `expected`. Returns whether the checkpoint was used.
bool check_equivalent(const Options& o, const std::set<Seen>& expected, const std::string& where) {
  TempDir a, b;
  copy_journal(o.data_dir, a.path());
  copy_journal(o.data_dir, b.path());
  std::filesystem::remove(checkpoint_path(journal_dir(b.path())));
  auto oa = o, ob = o;
  oa.data_dir = a.path();
  ob.data_dir = b.path();
  std::set<Seen> with, without;
  bool used = false;
  {
    Broker ba(oa);
    with = ba.live_set();
    used = ba.report().checkpoint_used;
  }
  {
    Broker bb(ob);
    EXPECT_FALSE(bb.report().checkpoint_used);
    EXPECT_TRUE(bb.tails().empty());
    without = bb.live_set();
  }
  auto strip = [](std::set<Seen> s) {
    std::set<std::tuple<std::string, std::uint64_t, std::uint64_t, Location, std::uint32_t>> out;
    for (const auto& e : s) out.insert({e.queue, e.id.hi, e.id.lo, e.location, e.deliveries});
    return out;
  };
  EXPECT_EQ(strip(with), strip(without)) << where;
  EXPECT_EQ(strip(with), strip(expected)) << where << (used ? " (from the checkpoint)" : " (full replay)");
  return used;
}

// The equivalence the design rests on: a random workload (several queues and priorities, a
// protocol-state queue, scheduled messages, acks by StoredRef and by id, delivered records,
// segment rolls, reclamation, clean restarts and crash snapshots), recovered with the
// checkpoint and without it: the same live set, locations and delivery counts.
TEST(LiveSetCheckpoint, RecoveryFromItMatchesAFullReplay) {
  TempDir dir;
  auto o = journal_options(dir.path(), 4096);
  struct Live {
    std::string queue;
    model::MessagePtr message;
    Location location;
    std::uint32_t deliveries = 0;
    bool this_session = true;  // appended since the last restart: in the writer's table
  };
  std::vector<Live> model;
  // Spilled messages (non-persistent, stored to leave memory) are live in the process that
  // stored them and in no recovery.
  auto expected = [&] {
    std::set<Seen> s;
    for (const auto& l : model) {
      if (!l.message->spilled) s.insert(Seen{l.queue, l.message->id, l.location, l.deliveries, false});
    }
    return s;
  };
  std::mt19937 rng(77);
  int next = 0;
  const std::vector<std::string> queues{"queue:a", "queue:b", "subscription:s1", "queue:$state"};
  auto broker = std::make_unique<Broker>(o);
  int used = 0, checks = 0;
  for (int op = 0; op < 1000; ++op) {
    const unsigned what = rng() % 100;
    if (what < 40) {
      Batch b;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int r = 0; r < n; ++r) {
        auto m = store::testing::make_message(static_cast<std::uint64_t>(next++), std::string(40 + rng() % 200, 'x'));
        auto mm = std::make_shared<model::Message>(*m);
        mm->priority = static_cast<std::uint8_t>(rng() % 3);
        const std::string& queue = queues[rng() % queues.size()];
        if (paged_queue(queue) && rng() % 5 == 0) {
          mm->persistent = false;
          mm->spilled = true;
        } else if (rng() % 10 == 0) {
          mm->deliver_at_ms = 4000000000000;  // scheduled, far ahead
        }
        b.push_back(Record::added(queue, mm));
      }
      Batch copy = b;
      auto where = broker->append(std::move(b));
      ASSERT_EQ(where.size(), copy.size());
      for (std::size_t r = 0; r < copy.size(); ++r) model.push_back(Live{copy[r].queue, copy[r].message, where[r]});
    } else if (what < 75) {
      if (model.empty()) continue;
      const std::size_t k = rng() % 2 ? rng() % model.size() : rng() % std::min<std::size_t>(model.size(), 5);
      const Live& l = model[k];
      // By StoredRef as the core acks what it was told the location of; by id only what it
      // stored in this session without asking (and the protocol-state queue).
      const bool by_id = !l.message->spilled && ((l.this_session && rng() % 2) || !paged_queue(l.queue));
      StoredRef ref;
      if (!by_id) ref = StoredRef{l.location, l.message->priority, static_cast<std::uint32_t>(l.message->footprint())};
      broker->append({Record::acked(l.queue, l.message->id, ref)});
      model.erase(model.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (what < 94) {
      if (model.empty()) continue;
      Live& l = model[rng() % model.size()];
      if (l.message->spilled) continue;  // the core writes no delivered record for one
      StoredRef ref{l.location, l.message->priority, static_cast<std::uint32_t>(l.message->footprint())};
      const bool by_id = !paged_queue(l.queue) || l.this_session;
      broker->append({Record::delivered(l.queue, l.message->id, ++l.deliveries, by_id ? StoredRef{} : ref)});
    } else if (what < 97) {
      // A crash snapshot: whatever checkpoint is there, and the journal past it.
      broker->quiesce();
      used += check_equivalent(o, expected(), "crash snapshot at op " + std::to_string(op)) ? 1 : 0;
      ++checks;
      if (::testing::Test::HasFailure()) return;
    } else {
      // A clean restart: the checkpoint covers everything.
      broker.reset();
      used += check_equivalent(o, expected(), "clean restart at op " + std::to_string(op)) ? 1 : 0;
      ++checks;
      if (::testing::Test::HasFailure()) return;
      broker = std::make_unique<Broker>(o);
      EXPECT_TRUE(broker->report().checkpoint_used) << "a clean stop leaves a checkpoint that covers all";
      EXPECT_EQ(broker->report().batches, 0u) << "and nothing to replay";
      std::erase_if(model, [](const Live& l) { return l.message->spilled; });
      for (auto& l : model) l.this_session = false;
    }
  }
  broker.reset();
  used += check_equivalent(o, expected(), "the end") ? 1 : 0;
  ++checks;
  EXPECT_GT(checks, 30);
  EXPECT_GT(used, checks / 2) << "most recoveries should have used the checkpoint";
}

// Writes a backlog of `n` messages over several segments with a clean stop, so live.ckpt covers
// all of it.
std::vector<std::pair<model::MessagePtr, Location>> write_backlog(const Options& o, int n, int first = 0) {
  std::vector<std::pair<model::MessagePtr, Location>> out;
  Broker b(o);
  for (int i = first; i < first + n; ++i) {
    auto m = store::testing::make_message(static_cast<std::uint64_t>(i), std::string(100, 'b'));
    auto where = b.append({Record::added("queue:a", m)});
    out.push_back({m, where.at(0)});
  }
  return out;
}

std::set<std::uint64_t> ids_of(Broker& b) {
  std::set<std::uint64_t> out;
  for (const auto& s : b.live_set()) out.insert(s.id.lo);
  return out;
}

TEST(LiveSetCheckpoint, ACleanStopLeavesOneThatCoversEverything) {
  TempDir dir;
  auto o = journal_options(dir.path(), 2048);
  write_backlog(o, 100);
  Broker b(o);
  EXPECT_TRUE(b.report().checkpoint_used);
  EXPECT_EQ(b.report().batches, 0u);
  EXPECT_EQ(b.report().index_records, 0u);
  EXPECT_TRUE(b.visited().empty());
  std::uint64_t in_tails = 0;
  for (const auto& t : b.tails()) in_tails += t.count;
  EXPECT_EQ(in_tails, 100u);
  EXPECT_EQ(ids_of(b).size(), 100u);
}

// Damaged (a flipped byte anywhere, truncated) or stale (a segment it names missing or grown):
// not used, a full replay instead; nothing lost, nothing resurrected.
TEST(LiveSetCheckpoint, DamagedOrStaleIsNotUsed) {
  TempDir base;
  auto o = journal_options(base.path(), 2048);
  auto backlog = write_backlog(o, 60);
  {
    // Ack the first ten by StoredRef: the checkpoint (at the clean stop) knows.
    Broker b(o);
    for (int i = 0; i < 10; ++i) {
      b.append({Record::acked("queue:a", backlog[i].first->id, StoredRef{backlog[i].second, backlog[i].first->priority, 0})});
    }
  }
  std::set<std::uint64_t> want;
  for (int i = 10; i < 60; ++i) want.insert(backlog[i].first->id.lo);
  const auto ckpt = checkpoint_path(journal_dir(base.path()));
  const std::string good = read_file(ckpt);
  ASSERT_GT(good.size(), kCheckpointHeaderBytes);

  auto expect_full_replay = [&](const std::function<void(const std::filesystem::path& data)>& damage,
                                const std::string& what) {
    TempDir d;
    copy_journal(base.path(), d.path());
    damage(d.path());
    auto od = o;
    od.data_dir = d.path();
    Broker b(od);
    EXPECT_FALSE(b.report().checkpoint_used) << what;
    EXPECT_EQ(ids_of(b), want) << what;
  };
  for (std::size_t at : {std::size_t{3}, std::size_t{20}, kCheckpointHeaderBytes + 1, good.size() - 1}) {
    expect_full_replay([&](const auto& d) { flip_byte(checkpoint_path(journal_dir(d)), at); },
                       "byte " + std::to_string(at) + " flipped");
  }
  for (std::size_t size : {std::size_t{0}, std::size_t{10}, kCheckpointHeaderBytes, good.size() - 1}) {
    expect_full_replay([&](const auto& d) { truncate_file(checkpoint_path(journal_dir(d)), size); },
                       "truncated to " + std::to_string(size));
  }
  auto segs = segments_of(o);
  ASSERT_GE(segs.size(), 3u);
  const auto second = segs[1];
  expect_full_replay(
      [&](const auto& d) {
        // Grown: appended to by a broker that did not keep the checkpoint (as if): a good frame.
        auto p = journal_dir(d) / second.path.filename();
        std::string frame;
        ASSERT_TRUE(encode_batch({}, frame));
        write_file(p, read_file(p) + frame);
      },
      "a segment it names grew");
  // A segment it names, with live messages, gone: the full replay then brings back only what
  // is still on disk. (That is what happens when segments are deleted by hand.)
  {
    TempDir d;
    copy_journal(base.path(), d.path());
    std::filesystem::remove(journal_dir(d.path()) / segs.back().path.filename());
    auto od = o;
    od.data_dir = d.path();
    Broker b(od);
    EXPECT_FALSE(b.report().checkpoint_used) << "its last segment is missing";
  }
}

// Missing index files do not matter to a checkpoint that covers their segments; a newer segment
// written after it (a crash: the checkpoint is older than the journal) is replayed.
TEST(LiveSetCheckpoint, ANewerSegmentAndMissingIndexesAreReplayed) {
  TempDir dir;
  auto o = journal_options(dir.path(), 2048);
  write_backlog(o, 40);
  const std::string old_checkpoint = read_file(checkpoint_path(journal_dir(dir.path())));
  write_backlog(o, 40, 1000);  // more segments, and a newer checkpoint
  // Back to the older checkpoint, no index files: what follows it is read from the segments.
  write_file(checkpoint_path(journal_dir(dir.path())), old_checkpoint);
  auto listed = list_index_files(journal_dir(dir.path()));
  ASSERT_TRUE(listed);
  for (const auto& f : *listed) std::filesystem::remove(f.path);
  Broker b(o);
  EXPECT_TRUE(b.report().checkpoint_used);
  EXPECT_GT(b.report().segments_read, 0u);
  EXPECT_EQ(b.visited().size(), 40u) << "the messages after the checkpoint come one by one";
  EXPECT_EQ(ids_of(b).size(), 80u);
}

// An ack that names neither a location nor a message this process stored, in a queue whose
// messages the checkpoint knows by bit only: the checkpoint goes, and the next start replays
// the journal in full, which finds the message by id. Nothing acked comes back.
TEST(LiveSetCheckpoint, AnAckWithoutItsLocationIsNotLost) {
  TempDir dir;
  auto o = journal_options(dir.path(), 2048);
  auto backlog = write_backlog(o, 30);
  {
    Broker b(o);
    ASSERT_TRUE(b.report().checkpoint_used);
    b.append({Record::acked("queue:a", backlog[5].first->id)});
    b.quiesce();
    EXPECT_FALSE(std::filesystem::exists(checkpoint_path(journal_dir(dir.path()))))
        << "a checkpoint that would bring it back is removed at once";
  }
  EXPECT_FALSE(std::filesystem::exists(checkpoint_path(journal_dir(dir.path()))))
      << "and not written again by this process";
  Broker b(o);
  EXPECT_FALSE(b.report().checkpoint_used);
  const auto ids = ids_of(b);
  EXPECT_EQ(ids.size(), 29u);
  EXPECT_EQ(ids.count(backlog[5].first->id.lo), 0u);
}

// Reclamation works on the bits: a segment whose messages were all acked by StoredRef goes (and
// an ack segment waits for the segment its acks cover).
TEST(LiveSetCheckpoint, SegmentsGoOnceTheirBitsAreClear) {
  TempDir dir;
  auto o = journal_options(dir.path(), 2048);
  auto backlog = write_backlog(o, 60);
  const auto before = segments_of(o).size();
  ASSERT_GE(before, 3u);
  {
    Broker b(o);
    ASSERT_TRUE(b.report().checkpoint_used);
    ASSERT_EQ(b.store().recovery_report().tail_messages, 60u);
    // Ack all but the last message, by StoredRef.
    for (std::size_t i = 0; i + 1 < backlog.size(); ++i) {
      b.append({Record::acked("queue:a", backlog[i].first->id,
                              StoredRef{backlog[i].second, backlog[i].first->priority, 0})});
    }
    b.quiesce();
    EXPECT_GT(b.store().stats().segments_deleted, 0u);
    // The segment of the last message stays; so do the ack segments that depend on... nothing
    // older than it: every segment before the last message's is gone.
    for (const auto& s : segments_of(o)) EXPECT_GE(s.id, backlog.back().second.file);
  }
  Broker b(o);
  EXPECT_EQ(ids_of(b), (std::set<std::uint64_t>{backlog.back().first->id.lo}));
}

// Spilled messages (docs/storage.md, "Non-persistent messages past the budget") are live while
// the process that stored them runs: a scan hands them out and their segments stay. No recovery
// brings them back, from the checkpoint or past it, and an ack of one that names no copy does
// not make a start give up the checkpoint.
TEST(LiveSetCheckpoint, SpilledMessagesAreLiveOnlyInTheProcessThatStoredThem) {
  TempDir dir;
  auto o = journal_options(dir.path(), 2048);
  const auto backlog = write_backlog(o, 20);
  std::set<Seen> persistent;
  for (const auto& [m, at] : backlog) persistent.insert(Seen{"queue:a", m->id, at, 0, false});
  {
    Broker b(o);
    ASSERT_TRUE(b.report().checkpoint_used);
    std::vector<model::MessagePtr> spilled;
    for (int i = 0; i < 30; ++i) {
      auto m = std::make_shared<model::Message>(*store::testing::make_message(100 + i, std::string(100, 's')));
      m->persistent = false;
      m->spilled = true;
      b.append({Record::added("queue:a", m)});
      spilled.push_back(m);
    }
    std::set<std::uint64_t> scanned;
    for (std::uint8_t p = 0; p < 10; ++p) {
      for (Location from;;) {
        auto r = b.scan("queue:a", p, from);
        ASSERT_TRUE(r);
        for (const auto& s : r->messages) {
          scanned.insert(s.message->id.lo);
          EXPECT_EQ(s.message->spilled, s.message->id.lo >= spilled.front()->id.lo);
        }
        from = r->next;
        if (r->exhausted) break;
      }
    }
    EXPECT_EQ(scanned.size(), 50u) << "live while this process runs";
    // Acked by queue and id, as an ack that knows no location is (a transaction's, say).
    for (int i = 0; i < 5; ++i) b.append({Record::acked("queue:a", spilled[static_cast<std::size_t>(i)]->id)});
    b.quiesce();
    EXPECT_TRUE(std::filesystem::exists(checkpoint_path(journal_dir(dir.path()))))
        << "an ack of a spilled message resolves in this process";
    // A crash now: the checkpoint is used, the spilled records past it are dead, and so is the
    // rest; nothing else changes.
    EXPECT_TRUE(check_equivalent(o, persistent, "crash with spilled messages"));
  }
  // A clean stop: its checkpoint counts none of them either.
  Broker b(o);
  EXPECT_TRUE(b.report().checkpoint_used);
  EXPECT_EQ(ids_of(b).size(), 20u);
  for (const auto& s : b.live_set()) EXPECT_LT(s.id.lo & 0xffffffffu, 100u);
}

TEST(LiveSetCheckpoint, EncodesAndDecodesAndRefusesWhatIsDamaged) {
  LiveSetCheckpoint c;
  c.covered_segment = 7;
  c.covered_bytes = 4096;
  c.queues = {"queue:a", "queue:$x"};
  c.segments.push_back({5, 2048, 70, 3, {}, {0b1011}});
  c.segments.push_back({7, 4096, 3, 1, {5}, {0b1}});
  c.lanes.push_back({0, 4, 3, 300, Location{5, 32, 0}});
  c.delivered.push_back({5, 1, 7});
  LiveSetCheckpoint::Listed l;
  l.queue = 1;
  l.location = Location{7, 32, 0};
  l.delivery_count = 2;
  l.summary.id = model::MessageId{1, 2};
  l.summary.deliver_at_ms = 99;
  c.listed.push_back(l);
  const std::string bytes = encode_checkpoint(c);
  auto back = decode_checkpoint(bytes);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_EQ(back->covered_segment, 7u);
  EXPECT_EQ(back->segments.size(), 2u);
  EXPECT_EQ(back->segments[1].depends_on, (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(back->segments[0].bits, (std::vector<std::uint64_t>{0b1011}));
  EXPECT_EQ(back->lanes.at(0).from, (Location{5, 32, 0}));
  EXPECT_EQ(back->listed.at(0).summary.deliver_at_ms, 99);
  EXPECT_EQ(encode_checkpoint(*back), bytes);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x01;
    EXPECT_FALSE(decode_checkpoint(bad)) << "byte " << i;
  }
  for (std::size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(decode_checkpoint(bytes.substr(0, n))) << n;
}

}  // namespace
}  // namespace carrier::store::log
