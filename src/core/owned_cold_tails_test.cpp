// Cold tails (docs/storage.md, "Cold tails"), the owner's half, over a store double that
// implements Store::scan's contract: ordering, skips, expiry, errors, purge, delete, move,
// browse, overflow, recovery, acks naming their stored copy, the budget reloaded.
#include <gtest/gtest.h>

#include "core/cold_tail_test_fixture.hpp"

namespace carrier::core {
namespace {

using namespace cold_tail_testing;

TEST_F(OwnerColdTail, ABacklogGoesColdAndCostsNothingPerMessage) {
  send(1, 500);
  EXPECT_GT(queue().cold(), 450u);
  EXPECT_EQ(queue().paged(), 0u) << "a store that can scan: no paged entries";
  EXPECT_EQ(queue().depth(), 500u);
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(memory_.budget()));
  auto* oq = owner().owned_queues().find(kQueue.key());
  EXPECT_LE(oq->locations ? oq->locations->size() : 0u, 40u) << "cold messages leave the location map";
  BrokerStats stats;
  owner().owned_queues().add_stats(stats);
  EXPECT_EQ(stats.messages_cold, queue().cold());
  EXPECT_EQ(owner().context().counters.paged_out, queue().cold());
}

TEST_F(OwnerColdTail, DrainsInOrderAcrossPrioritiesWithEveryMessageOnce) {
  send(1, 100, 4);
  send(101, 200, 7);
  send(201, 220, 4);  // arrives behind the cold priority 4 tail
  ASSERT_GT(queue().cold(), 150u);
  auto c = subscribe();
  std::vector<int> want;
  for (int i = 101; i <= 200; ++i) want.push_back(i);
  for (int i = 1; i <= 100; ++i) want.push_back(i);
  for (int i = 201; i <= 220; ++i) want.push_back(i);
  EXPECT_EQ(numbers(*c), want);
  EXPECT_EQ(queue().depth(), 0u);
  EXPECT_EQ(queue().cold(), 0u);
  EXPECT_GE(store_.scans, 2u) << "read back in windows";
  EXPECT_LE(store_.scanned, 220u) << "each cold message read once";
}

TEST_F(OwnerColdTail, ArrivalsFromTwoShardsWhileDrainingComeOnceEach) {
  send(1, 300);
  auto c = subscribe(AckMode::client_individual, 50);
  for (int round = 0; round < 40; ++round) {
    // Two producers on two shards, their appends interleaved in the store.
    send(1000 + round * 10, 1004 + round * 10, 4, 0, 0);
    send(1005 + round * 10, 1009 + round * 10, 4, 0, 1);
  }
  // Ack everything delivered so far, repeatedly, until all has come.
  for (int round = 0; round < 200 && c->got.size() < 700; ++round) {
    std::vector<std::uint64_t> tags;
    for (const auto& d : c->got) tags.push_back(d.tag);
    on(model::owner_shard(kQueue.key(), kShards).value(), [&](Broker& b) {
      b.owned_queues().settle(kQueue.key(), last_id_, tags, true, true, {}, nullptr);
    });
    settle();
  }
  std::vector<int> got = numbers(*c);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "no duplicates";
  EXPECT_EQ(got.size(), 700u) << "no loss";
}

TEST_F(OwnerColdTail, ASelectorMatchingNothingReadsAColdBacklogOnce) {
  send(1, 600);
  ASSERT_GT(queue().cold(), 500u);
  auto sel = selector::parse("color = 'none'");
  ASSERT_TRUE(sel);
  auto c = std::make_shared<broker_testing::Collector>();
  SubscribeRequest req{kQueue, AckMode::auto_ack, 1000, c};
  req.selector = *sel;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  settle();
  EXPECT_TRUE(c->got.empty());
  EXPECT_LE(store_.scanned, 600u) << "refused messages are not read again and again";
  EXPECT_EQ(queue().cold(), 0u);
  EXPECT_EQ(queue().depth(), 600u);
  EXPECT_GT(queue().paged(), 0u) << "what was read and refused is paged again";
  // What stays in memory: the head a consumer keeps (two windows) and the last window read.
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(3 * OwnedQueues::kReadWindow * (kBody + 300) +
                                                      600 * OwnedQueues::kPagedEntryBytes));
  send(601, 601);
  EXPECT_LE(store_.scanned, 601u);
}

TEST_F(OwnerColdTail, ASelectorFindsItsMatchBehindColdTailsOfSeveralPriorities) {
  send(1, 300, 8);
  send(301, 600, 4);
  send(601, 900, 1);
  auto match = make_message(901, 0);
  auto with_color = std::make_shared<Message>(*match);
  with_color->properties.emplace_back("color", "none");
  on(0, [&](Broker& b) { b.send({with_color}, nullptr); });
  settle();
  ASSERT_GT(queue().cold(), 800u);
  auto sel = selector::parse("color = 'none'");
  ASSERT_TRUE(sel);
  auto c = std::make_shared<broker_testing::Collector>();
  SubscribeRequest req{kQueue, AckMode::auto_ack, 1000, c};
  req.selector = *sel;
  on(1, [&](Broker& b) { (void)b.subscribe(req, nullptr); });
  settle();
  ASSERT_EQ(c->got.size(), 1u) << "cold " << queue().cold() << " paged " << queue().paged() << " scanned " << store_.scanned
                               << " read " << store_.read_items;
  EXPECT_EQ(c->got[0].message->id.lo, 901u);
  // Refused arrivals, then a match: it comes without the refused backlog being read again.
  const auto scanned = store_.scanned + store_.read_items;
  send(902, 951, 0);
  auto second = std::make_shared<Message>(*make_message(952, 0));
  second->properties.emplace_back("color", "none");
  on(0, [&](Broker& b) { b.send({second}, nullptr); });
  settle();
  ASSERT_EQ(c->got.size(), 2u) << "cold " << queue().cold() << " paged " << queue().paged();
  EXPECT_EQ(c->got[1].message->id.lo, 952u);
  EXPECT_LT(store_.scanned + store_.read_items - scanned, 100u) << "scanned " << store_.scanned << " read " << store_.read_items << " before " << scanned;
}

TEST_F(OwnerColdTail, ScanErrorsStopTheTailAndCountItsMessages) {
  send(1, 100);
  const auto cold = queue().cold();
  ASSERT_GT(cold, 50u);
  store_.fail = Errc::corrupt_data;
  auto c = subscribe();
  EXPECT_EQ(c->got.size(), 100 - cold) << "what is in memory flows";
  EXPECT_EQ(owner().context().counters.page_in_failed, cold);
  EXPECT_EQ(queue().depth(), cold) << "still stored, still counted: a restart reads them";
  store_.fail.reset();
  send(101, 105);
  EXPECT_EQ(c->got.size(), 100 - cold + 5) << "new arrivals are not held behind a failed tail";
}

TEST_F(OwnerColdTail, ExpiredMessagesReadBackAreAckedNotDelivered) {
  send(1, 50, 4, now_ + 1000);
  send(51, 100);
  ASSERT_GT(queue().cold(), 50u);
  now_ += 2000;
  auto c = subscribe();
  EXPECT_LE(c->got.size(), 60u);
  for (int n : numbers(*c)) EXPECT_GT(n, 40) << "only the tail's head in memory may have been taken before";
  EXPECT_EQ(queue().depth(), 0u);
  EXPECT_EQ(store_.live(kQueue.key()), c->got.size()) << "expired ones acked as they were read (the "
                                                         "delivered ones wait for the session's auto-ack)";
}

TEST_F(OwnerColdTail, PurgeOfAColdTailAcksEveryMessageWithoutAConsumer) {
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  Result<std::size_t> purged = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) { purge_queue(b, kQueue.key(), {}, 1'000'000, [&](Result<std::size_t> r) { purged = r; }); });
  settle();
  ASSERT_TRUE(purged);
  EXPECT_EQ(*purged, 300u);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_LE(memory_.used(), 2 * OwnedQueues::kQueueOverheadBytes);
}

TEST_F(OwnerColdTail, DeleteAcksTheColdTailInTheBackground) {
  send(1, 300, 4);
  send(301, 350, 8);
  ASSERT_GT(queue().cold(), 250u);
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().remove(kQueue.key(), nullptr); });
  settle();
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(owner().owned_queues().find(kQueue.key()), nullptr);
}

TEST_F(OwnerColdTail, MoveReadsTheWholeTailBackFirst) {
  send(1, 200);
  ASSERT_GT(queue().cold(), 150u);
  Result<std::size_t> moved = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) {
    move_messages(b, kQueue.key(), {DestinationKind::queue, "elsewhere"}, {}, 1'000'000, true,
                  [&](Result<std::size_t> r) { moved = r; });
  });
  settle();
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, 200u);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(store_.live(model::Destination{DestinationKind::queue, "elsewhere"}.key()), 200u);
}

TEST_F(OwnerColdTail, BrowseShowsColdMessagesWithoutTakingThem) {
  send(1, 100);
  const auto cold = queue().cold();
  ASSERT_GT(cold, 50u);
  Result<std::vector<BrowsedMessage>> got = unexpected(Errc::not_found, "");
  on(0, [&](Broker& b) {
    browse_queue(b, kQueue.key(), 90, 5, [&](Result<std::vector<BrowsedMessage>> r) { got = std::move(r); });
  });
  settle();
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 5u);
  EXPECT_EQ((*got)[0].message->body->substr(0, 2), "91");
  EXPECT_EQ(queue().cold(), cold);
}

TEST_F(OwnerColdTail, DropOldestOverflowDropsFromTheColdTail) {
  destination_ = {DestinationKind::queue, "capped"};
  send(1, 100);
  ASSERT_GT(queue().cold(), 50u);
  send(101, 110);
  EXPECT_EQ(queue().depth(), 100u);
  auto c = subscribe();
  EXPECT_EQ(c->got.size(), 100u);
  std::vector<int> got = numbers(*c);
  EXPECT_EQ(std::count_if(got.begin(), got.end(), [](int n) { return n > 100; }), 10) << "the new ones kept";
  EXPECT_EQ(std::count_if(got.begin(), got.end(), [](int n) { return n <= 10; }), 0) << "the oldest dropped";
  EXPECT_EQ(store_.live(destination_.key()), c->got.size()) << "the dropped ones acked";
}

TEST_F(OwnerColdTail, RecoveredSummariesFoldIntoColdTailsAndComeBackWithTheirDeliveryCounts) {
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  const auto before = memory_.used();
  for (int i = 1; i <= 1000; ++i) {
    auto m = make_message(i, i % 3 == 0 ? 8 : 4);
    const std::uint64_t at = static_cast<std::uint64_t>(5000 + i);
    store_.records[at] = ScanningStore::Stored{kQueue.key(), m, i == 3 ? 2u : 0u, true};
    store::RecoveredMessage r;
    r.queue = kQueue.key();
    r.location = store::Location{at, 0, 0};
    r.summary = store::MessageSummary{m->id, m->priority, true, 0, 0, 0, static_cast<std::uint32_t>(m->footprint())};
    Broker::recover(peers, std::move(r));
  }
  EXPECT_EQ(queue().depth(), 1000u);
  EXPECT_EQ(queue().cold(), 1000u);
  EXPECT_LE(memory_.used() - before, 2 * OwnedQueues::kQueueOverheadBytes) << "no per-message state";
  auto c = subscribe();
  ASSERT_EQ(c->got.size(), 1000u);
  std::vector<int> want;
  for (int i = 3; i <= 1000; i += 3) want.push_back(i);
  for (int i = 1; i <= 1000; ++i) {
    if (i % 3 != 0) want.push_back(i);
  }
  EXPECT_EQ(numbers(*c), want);
  EXPECT_TRUE(c->got[0].redelivered);
  EXPECT_EQ(c->got[0].delivery_count, 3u);
}

// ---------------------------------------------------------------- StoredRef on acks

// Every ack and delivered record of a message the core was told the location of names its
// stored copy (Record::stored): a journal that keeps nothing per message for what it recovered
// from its checkpoint finds the copy by it, or pays a full replay at the next start.
TEST_F(OwnerColdTail, AcksOfScannedAndInMemoryMessagesNameTheirStoredCopies) {
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  auto c = subscribe(AckMode::client_individual, 1000);
  ASSERT_EQ(c->got.size(), 300u);
  ack_all(*c);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u) << "the head that never went cold too: located once the store can scan";
  EXPECT_EQ(store_.ack_refs.named, 300u);
  EXPECT_EQ(store_.delivered_refs.wrong, 0u);
  EXPECT_EQ(store_.delivered_refs.unnamed, 0u);
  EXPECT_EQ(store_.delivered_refs.named, 300u);
}

TEST_F(OwnerColdTail, AcksOfRecoveredMessagesNameTheirStoredCopies) {
  std::vector<Broker*> peers;
  for (auto& b : brokers_) peers.push_back(b.get());
  for (int i = 1; i <= 200; ++i) {
    auto m = make_message(i, i % 2 == 0 ? 7 : 4);
    const std::uint64_t at = static_cast<std::uint64_t>(5000 + i);
    store_.records[at] = ScanningStore::Stored{kQueue.key(), m, 0, true};
    store::RecoveredMessage r;
    r.queue = kQueue.key();
    r.location = store::Location{at, 0, 0};
    if (i % 10 == 0) {
      r.message = m;  // some come back whole (a backend that reads them, a protocol's)
    } else {
      r.summary = store::MessageSummary{m->id, m->priority, true, 0, 0, 0, static_cast<std::uint32_t>(m->footprint())};
    }
    Broker::recover(peers, std::move(r));
  }
  auto c = subscribe(AckMode::client_individual, 1000);
  ASSERT_EQ(c->got.size(), 200u);
  ack_all(*c);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 200u);
}

TEST_F(OwnerColdTail, DropsPurgesDeletesAndExpiriesOfColdMessagesNameTheirCopies) {
  destination_ = {DestinationKind::queue, "capped"};
  send(1, 100);
  ASSERT_GT(queue().cold(), 50u);
  send(101, 110);  // ten owed as drops from the cold tail, acked as a scan reads them
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().remove(destination_.key(), nullptr); });
  settle();
  EXPECT_EQ(store_.live(destination_.key()), 0u);
  destination_ = kQueue;
  send(1001, 1100, 4, now_ + 1000);
  send(1101, 1200);
  now_ += 2000;
  auto c = subscribe(AckMode::client_individual, 1000);  // the expired ones are acked as the scan reads them
  ack_all(*c);
  EXPECT_EQ(store_.live(kQueue.key()), 0u);
  destination_ = {DestinationKind::queue, "purged"};
  send(2001, 2300);
  ASSERT_GT(queue().cold(), 250u);
  on(0, [&](Broker& b) { purge_queue(b, destination_.key(), {}, 1'000'000, [](Result<std::size_t>) {}); });
  settle();
  EXPECT_EQ(store_.records.size(), 0u);
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 610u);
}

TEST_F(OwnerColdTail, AMessageDeadLetteredIntoItsOwnQueueAcksItsOldCopyByItsRef) {
  destination_ = {DestinationKind::queue, "own-dlq"};
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  auto c = subscribe(AckMode::client_individual, 1000);
  ASSERT_EQ(c->got.size(), 300u);
  std::vector<std::uint64_t> tags;
  for (const auto& d : c->got) tags.push_back(d.tag);
  // Nacked past max_deliveries: moved to the DLQ, which is the queue itself.
  on(owner().shard().value(), [&](Broker& b) { b.owned_queues().settle(destination_.key(), last_id_, tags, false, true, {}, nullptr); });
  settle();
  EXPECT_EQ(store_.live(destination_.key()), 300u) << "each stored once: the old copy acked, the new one added";
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 300u);
}

// docs/storage.md, "Cold tails", the duplicates its Limits named. (a): a message in memory
// that no location was asked for (appended under half the budget) and a tail whose `from` is
// lowered before it (a scheduled message stored earlier, due behind the tail).
TEST_F(OwnerColdTail, AnUnacknowledgedMessageBeforeALoweredTailIsNotHandedOutAgain) {
  auto scheduled = std::make_shared<Message>(*make_message(1));
  scheduled->deliver_at_ms = now_ + 5000;
  memory_.add(15 * static_cast<std::int64_t>(kBody));  // over half the budget: its location is asked
  on(0, [&](Broker& b) { b.send({scheduled}, nullptr); });
  settle();
  memory_.sub(15 * static_cast<std::int64_t>(kBody));
  auto first = subscribe(AckMode::client_individual, 1);
  send(2, 2);  // under half the budget: before the fix, no location asked
  ASSERT_EQ(first->got.size(), 1u);
  ASSERT_EQ(first->got[0].message->id.lo, 2u);
  send(3, 600);  // over the budget: the tail goes cold, starting after message 2
  ASSERT_GT(queue().cold(), 100u);
  now_ += 6000;
  ex_.fire_timers();  // the scheduled one is due behind the tail: joins it, lowering `from` before 2
  settle();
  auto second = subscribe(AckMode::client_individual, 5000);
  std::vector<std::uint64_t> ids;
  for (const auto& d : second->got) ids.push_back(d.message->id.lo);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2u), 0) << "message 2 is the first consumer's, unacked";
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "no duplicates";
  EXPECT_EQ(ids.size(), 599u) << "all but message 2";
}

// (b): a redelivery waiting out its delay outside the queue while the sweep prunes the location
// map, and a tail that starts before it.
TEST_F(OwnerColdTail, ARedeliveryWaitingOutItsDelayIsNotReadBackFromATail) {
  destination_ = {DestinationKind::queue, "delayed"};
  auto colored = [&](int n, const char* color) {
    auto m = std::make_shared<Message>(*make_message(n));
    m->properties.emplace_back("color", color);
    return m;
  };
  on(0, [&](Broker& b) { b.send({colored(1, "red")}, nullptr); });
  settle();
  auto sel = selector::parse("color = 'blue'");
  ASSERT_TRUE(sel);
  auto blue = std::make_shared<broker_testing::Collector>();
  SubscribeRequest req{destination_, AckMode::client_individual, 5000, blue};
  req.selector = *sel;
  ConsumerId blue_id;
  on(1, [&](Broker& b) { blue_id = *b.subscribe(req, nullptr); });
  settle();
  std::vector<MessagePtr> batch;
  for (int i = 2; i <= 1101; ++i) batch.push_back(colored(i, "blue"));
  on(0, [&](Broker& b) { b.send(std::move(batch), nullptr); });
  settle();
  ASSERT_EQ(blue->got.size(), 1100u);
  // The consumer goes: its 1100 deliveries wait out their redelivery delay outside the queue.
  on(1, [&](Broker& b) { b.unsubscribe(blue_id, nullptr); });
  settle();
  ASSERT_EQ(queue().depth(), 1u);
  on(owner().shard().value(), [&](Broker& b) {
    store::Batch records;
    std::vector<Routed> moved;
    b.owned_queues().sweep(now_, records, moved);  // prunes the location map
  });
  send(2000, 2000);  // over the budget: message 1 and this go cold, the tail starting at 1
  ASSERT_EQ(queue().cold(), 2u);
  now_ += 2000;
  ex_.fire_timers();  // the 1100 are back in the queue, in memory
  settle();
  auto c = subscribe(AckMode::client_individual, 5000);
  std::vector<std::uint64_t> ids;
  for (const auto& d : c->got) ids.push_back(d.message->id.lo);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "no duplicates";
  EXPECT_EQ(ids.size(), 1102u);
  EXPECT_EQ(store_.delivered_refs.wrong, 0u);
}

// [core] memory_budget_bytes reloaded (SIGHUP): serve sets the new budget and has every shard
// page if it is now over it; a raised one reads nothing back at once.
TEST_F(OwnerColdTail, ALoweredBudgetPagesOutAtOnceAndARaisedOneKeepsWhatIsReadBack) {
  memory_.set_budget(1000 * kBody);
  send(1, 300);
  EXPECT_EQ(queue().cold(), 0u) << "under the budget";
  memory_.set_budget(20 * kBody);
  for (auto& b : brokers_) on(b->shard().value(), [](Broker& br) { br.owned_queues().page_if_over_budget(); });
  EXPECT_GT(queue().cold(), 250u) << "every message was located: the lowered budget pages them out";
  EXPECT_LE(memory_.used(), static_cast<std::int64_t>(memory_.budget()));
  memory_.set_budget(1000 * kBody);
  for (auto& b : brokers_) on(b->shard().value(), [](Broker& br) { br.owned_queues().page_if_over_budget(); });
  EXPECT_GT(queue().cold(), 250u) << "nothing read back until a consumer needs it";
  auto c = subscribe(AckMode::client_individual, 1000);
  std::vector<int> want;
  for (int i = 1; i <= 300; ++i) want.push_back(i);
  EXPECT_EQ(numbers(*c), want);
  EXPECT_EQ(queue().cold(), 0u);
  EXPECT_GT(memory_.used(), 250 * static_cast<std::int64_t>(kBody)) << "what is read back under the raised budget stays";
}

// Only when the transaction runs on the queue's owner: elsewhere the location map is another
// shard's (docs/storage.md, "Paging").
TEST_F(OwnerColdTail, AcksInATransactionOnTheQueuesOwnerNameTheirStoredCopies) {
  send(1, 300);
  ASSERT_GT(queue().cold(), 250u);
  const auto home = owner().shard().value();
  auto c = std::make_shared<broker_testing::Collector>();
  on(home, [&](Broker& b) { last_id_ = *b.subscribe({destination_, AckMode::client_individual, 1000, c}, nullptr); });
  settle();
  ASSERT_EQ(c->got.size(), 300u);
  Transaction tx;
  for (const auto& d : c->got) tx.acks.push_back(DeliveryRef{last_id_, d.tag, d.message});
  tx.sends.push_back(make_message(301));
  Status committed = unexpected(Errc::not_found, "not yet");
  on(home, [&](Broker& b) { b.commit(std::move(tx), [&](Status st) { committed = std::move(st); }); });
  settle();
  ASSERT_TRUE(committed);
  EXPECT_EQ(store_.live(kQueue.key()), 1u) << "the one sent in the transaction";
  EXPECT_EQ(store_.ack_refs.wrong, 0u);
  EXPECT_EQ(store_.ack_refs.unnamed, 0u);
  EXPECT_EQ(store_.ack_refs.named, 300u);
}

}  // namespace
}  // namespace carrier::core
