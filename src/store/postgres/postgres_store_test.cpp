// What only the PostgreSQL store has: its schema versions, the one-broker-per-schema lock, the
// pipeline. Needs a server: CARRIER_TEST_POSTGRES_URL (ctest's store_test_postgres starts one
// with scripts/postgres-test-server); skipped without it. The Store contract is tested in
// store_conformance_test.cpp, including the server going away.

#include "store/postgres/postgres_store.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <random>

#include "store/test_support.hpp"

namespace carrier::store::postgres {
namespace {

using testing::make_message;
using testing::Outcomes;

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* url = std::getenv("CARRIER_TEST_POSTGRES_URL");
    if (url == nullptr) GTEST_SKIP() << "CARRIER_TEST_POSTGRES_URL is not set";
    url_ = url;
    static std::mt19937_64 random{std::random_device{}()};
    schema_ = "pgtest_" + std::to_string(random() % 1000000000000ull);
    auto c = PgConnection::connect(url_);
    ASSERT_TRUE(c) << c.error().to_string();
    admin_ = std::move(*c);
  }

  Options options() const {
    Options o;
    o.kind = "postgres";
    o.postgres_url = url_;
    o.postgres_schema = schema_;
    return o;
  }

  std::string value(const std::string& sql) {
    auto r = admin_.exec(sql);
    EXPECT_TRUE(r) << r.error().to_string();
    return r && PQntuples(r->get()) > 0 ? std::string(PQgetvalue(r->get(), 0, 0)) : std::string();
  }

  std::string url_;
  std::string schema_;
  PgConnection admin_;
};

TEST_F(PostgresStoreTest, ANewSchemaGetsTheCurrentVersion) {
  PostgresStore store(options());
  ASSERT_TRUE(store.open());
  store.close();
  EXPECT_EQ(value("SELECT version FROM " + schema_ + ".schema_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(value("SELECT count(*) FROM " + schema_ + ".messages"), "0");
}

// Version 2 adds messages_by_lane for Store::scan. A version-1 schema (made here by taking a new
// one back: the step only adds the index) migrates at open, and the scan's query can use it.
TEST_F(PostgresStoreTest, AVersionOneSchemaGetsTheLaneIndexThatServesScans) {
  {
    PostgresStore store(options());
    ASSERT_TRUE(store.open());
  }
  value("DROP INDEX " + schema_ + ".messages_by_lane");
  value("UPDATE " + schema_ + ".schema_version SET version = 1 RETURNING version");
  {
    PostgresStore store(options());
    ASSERT_TRUE(store.open());
  }
  EXPECT_EQ(value("SELECT version FROM " + schema_ + ".schema_version"), "2");
  EXPECT_EQ(value("SELECT count(*) FROM pg_indexes WHERE schemaname = '" + schema_ +
                  "' AND indexname = 'messages_by_lane'"),
            "1");
  // Planner costs say nothing on an empty table: forbid the alternatives, then ask.
  value("SET enable_seqscan = off");
  value("SET enable_sort = off");
  auto plan = admin_.exec("EXPLAIN SELECT seq, id_hi, id_lo, delivery_count, message FROM " + schema_ +
                          ".messages WHERE queue_id = 1 AND priority = 4 AND seq >= 0 ORDER BY seq LIMIT 129");
  ASSERT_TRUE(plan) << plan.error().to_string();
  std::string text;
  for (int i = 0; i < PQntuples(plan->get()); ++i) text += std::string(PQgetvalue(plan->get(), i, 0)) + "\n";
  EXPECT_NE(text.find("messages_by_lane"), std::string::npos) << text;
  EXPECT_EQ(text.find("Sort"), std::string::npos) << "the index gives seq order: " << text;
  value("RESET enable_seqscan");
  value("RESET enable_sort");
}

TEST_F(PostgresStoreTest, ANewerSchemaVersionIsRefusedByName) {
  {
    PostgresStore store(options());
    ASSERT_TRUE(store.open());
  }
  value("UPDATE " + schema_ + ".schema_version SET version = 42 RETURNING version");
  PostgresStore store(options());
  auto opened = store.open();
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, Errc::corrupt_data);
  EXPECT_NE(opened.error().detail.find("unsupported schema version 42"), std::string::npos) << opened.error().detail;
}

TEST_F(PostgresStoreTest, ASecondBrokerOnTheSameSchemaIsRefused) {
  PostgresStore first(options());
  ASSERT_TRUE(first.open());
  PostgresStore second(options());
  auto opened = second.open();  // waits out the lock for a few seconds first
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, Errc::unavailable);
  EXPECT_NE(opened.error().detail.find("in use by another Carrier broker"), std::string::npos) << opened.error().detail;
  first.close();
  PostgresStore third(options());
  EXPECT_TRUE(third.open());
}

TEST_F(PostgresStoreTest, AnUnreachableServerIsUnavailableAtOpen) {
  Options o = options();
  o.postgres_url = "postgresql://carrier@127.0.0.1:1/carrier?connect_timeout=2";
  PostgresStore store(o);
  auto opened = store.open();
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, Errc::unavailable);
  // Appends made anyway are answered with the reason, not lost or hung.
  store.start();
  Outcomes out;
  store.append({Record::added("queue:q", make_message(1))}, out.callback());
  ASSERT_TRUE(out.wait_for(1));
  ASSERT_FALSE(out.statuses()[0]);
  EXPECT_EQ(out.statuses()[0].error().code, Errc::unavailable);
}

TEST_F(PostgresStoreTest, AStatementErrorFailsTheGroupAndKeepsTheConnection) {
  PostgresStore store(options());
  ASSERT_TRUE(store.open());
  ASSERT_TRUE(store.recover([](RecoveredMessage) {}));
  store.start();
  Outcomes out;
  store.append({Record::added("queue:q", make_message(1))}, out.callback());
  ASSERT_TRUE(out.wait_for(1));
  ASSERT_TRUE(out.statuses()[0]);
  // A constraint the store does not know about makes its next insert fail.
  value("ALTER TABLE " + schema_ + ".messages ADD CONSTRAINT no_big CHECK (length(message) < 1000) NOT VALID");
  store.append({Record::added("queue:q", make_message(2, std::string(5000, 'x')))}, out.callback());
  store.append({Record::added("queue:new", make_message(3, std::string(5000, 'y')))}, out.callback());
  ASSERT_TRUE(out.wait_for(3));
  EXPECT_FALSE(out.statuses()[1]);
  EXPECT_FALSE(out.statuses()[2]);
  EXPECT_EQ(out.statuses()[1].error().code, Errc::io_error) << out.statuses()[1].error().to_string();
  value("ALTER TABLE " + schema_ + ".messages DROP CONSTRAINT no_big");
  // The queue id invented by the failed group is forgotten: queue:new works afterwards.
  store.append({Record::added("queue:new", make_message(4))}, out.callback());
  ASSERT_TRUE(out.wait_for(4));
  EXPECT_TRUE(out.statuses()[3]) << out.statuses()[3].error().to_string();
  EXPECT_EQ(store.stats().reconnects, 0u);
  store.close();
  EXPECT_EQ(value("SELECT count(*) FROM " + schema_ + ".messages"), "2");
}

TEST_F(PostgresStoreTest, AGroupLargerThanTheSocketBuffersIsOneTransaction) {
  PostgresStore store(options());
  ASSERT_TRUE(store.open());
  Outcomes out;
  constexpr int kBatches = 5000;
  // Appended before start(): the writer takes them as one group.
  for (int i = 0; i < kBatches; ++i) {
    store.append({Record::added("queue:q" + std::to_string(i % 7), make_message(i, std::string(300, 'b')))},
                 out.callback());
  }
  store.start();
  ASSERT_TRUE(out.wait_for(kBatches));
  EXPECT_EQ(out.failures(), 0u);
  EXPECT_EQ(store.stats().transactions, 1u);
  store.close();
  EXPECT_EQ(value("SELECT count(*) FROM " + schema_ + ".messages"), std::to_string(kBatches));
}

}  // namespace
}  // namespace carrier::store::postgres
