#include "net/transport.hpp"

#include <gtest/gtest.h>

#include "net/fake_transport.hpp"

namespace carrier::net {
namespace {

using namespace std::chrono_literals;

TEST(TransportRates, CountsAndPerSecondRatesOverWholeSeconds) {
  asio::io_context io;
  auto t = std::make_shared<FakeTransport>(io.get_executor());
  const auto t0 = t->connected_at();
  // Younger than a second: what it did so far, per second of it (at least one second).
  t->count_in(3);
  auto r = t->sample_rates(t0 + 500ms);
  EXPECT_EQ(r.in, 3u);
  EXPECT_DOUBLE_EQ(r.in_per_second, 3.0);
  // Two seconds in: 10 more in, 4 out since connecting.
  t->count_in(7);
  t->count_out(4);
  r = t->sample_rates(t0 + 2s);
  EXPECT_EQ(r.in, 10u);
  EXPECT_EQ(r.out, 4u);
  EXPECT_DOUBLE_EQ(r.in_per_second, 5.0);
  EXPECT_DOUBLE_EQ(r.out_per_second, 2.0);
  // Within a second of that sample: the same rates (the window has not rolled).
  t->count_in(100);
  r = t->sample_rates(t0 + 2500ms);
  EXPECT_DOUBLE_EQ(r.in_per_second, 5.0);
  EXPECT_EQ(r.in, 110u);
  // The next window: 100 in over 2 s.
  r = t->sample_rates(t0 + 4s);
  EXPECT_DOUBLE_EQ(r.in_per_second, 50.0);
  EXPECT_DOUBLE_EQ(r.out_per_second, 0.0);
  // Quiet since: zero.
  r = t->sample_rates(t0 + 5s);
  EXPECT_DOUBLE_EQ(r.in_per_second, 0.0);
}

TEST(TransportClient, IdUserAndTheAdminReasonAreKept) {
  asio::io_context io;
  auto t = std::make_shared<FakeTransport>(io.get_executor());
  EXPECT_TRUE(t->client_id().empty());
  t->set_client("billing-1", "alice");
  EXPECT_EQ(t->client_id(), "billing-1");
  EXPECT_EQ(t->user(), "alice");
  t->close_by_admin("maintenance");  // no handler: nothing to tell, the reason is kept
  EXPECT_EQ(t->close_reason(), "maintenance");
  EXPECT_EQ(t->log_prefix("/queue/a"), "[test c" + std::to_string(t->id()) + " 127.0.0.1:40000 /queue/a]");
}

}  // namespace
}  // namespace carrier::net
