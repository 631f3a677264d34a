#include "client/relay_correlator.hpp"

#include <gtest/gtest.h>

namespace carrier::client {
namespace {

using Clock = RelayCorrelator::Clock;
using Responses = Result<std::vector<RelayResponse>>;

relay::codec::Message response(std::string kind, std::string request_id, std::string id = {}) {
  relay::codec::Message m;
  m.namespaces = {"proxy"};
  m.add("proxy", "response", std::move(kind));
  m.add("proxy", "requestId", std::move(request_id));
  if (!id.empty()) m.add("proxy", "id", std::move(id));
  return m;
}

struct Captured {
  std::optional<Responses> got;
  RelayCorrelator::Done done() {
    return [this](Responses r) { got = std::move(r); };
  }
};

const auto kLater = Clock::now() + std::chrono::hours(1);

TEST(RelayCorrelator, ResponsesInAnyOrderCompleteTheirRequests) {
  RelayCorrelator c(41);
  Captured a, b;
  EXPECT_EQ(c.add("create", kLater, a.done()), "41");
  EXPECT_EQ(c.add("listen", kLater, b.done()), "42");
  c.sent(1);
  std::vector<relay::codec::Message> in;
  in.push_back(response("success", "42"));
  in.push_back(response("message", "42", "pipe"));  // a pipe message of listen 42: not an answer
  in.push_back(response("success", "41", "urn:jxta:uuid-1"));
  auto rest = c.dispatch(1, std::move(in), 100);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].kind, "message");
  EXPECT_EQ(rest[0].get("id"), "pipe");
  ASSERT_TRUE(a.got && a.got->has_value());
  EXPECT_EQ((*a.got)->front().get("id"), "urn:jxta:uuid-1");
  ASSERT_TRUE(b.got && b.got->has_value());
  EXPECT_TRUE(c.empty());
}

TEST(RelayCorrelator, AnErrorFailsItsRequestWithTheReason) {
  RelayCorrelator c;
  Captured denied, wrong;
  auto d = c.add("send", kLater, denied.done());
  auto w = c.add("join", kLater, wrong.done());
  c.sent(1);
  auto e1 = response("error", d);
  e1.add("proxy", "reason", "user \"bob\" may not send to queue x");
  auto e2 = response("error", w);
  e2.add("proxy", "reason", "join's id is not a group id of this relay");
  std::vector<relay::codec::Message> in{e1, e2};
  c.dispatch(1, std::move(in), 100);
  ASSERT_TRUE(denied.got && !denied.got->has_value());
  EXPECT_EQ(denied.got->error().code, Errc::permission_denied);
  EXPECT_EQ(denied.got->error().detail, "user \"bob\" may not send to queue x");
  ASSERT_TRUE(wrong.got && !wrong.got->has_value());
  EXPECT_EQ(wrong.got->error().code, Errc::protocol_error);
}

// A search ends with the first answer, from its POST or a later one, that did not fill the
// maximum: results spread over several answers are all collected; none is a complete answer too.
TEST(RelayCorrelator, ASearchCollectsResultsUntilAnAnswerIsNotFull) {
  RelayCorrelator c;
  Captured s, none;
  auto id = c.add("search", kLater, s.done());
  c.sent(1);
  std::vector<relay::codec::Message> full{response("result", id, "p1"), response("result", id, "p2")};
  c.dispatch(1, std::move(full), 2);
  EXPECT_FALSE(s.got);  // the answer was full: more may wait
  std::vector<relay::codec::Message> last{response("result", id, "p3")};
  c.dispatch(2, std::move(last), 2);
  ASSERT_TRUE(s.got && s.got->has_value());
  ASSERT_EQ((*s.got)->size(), 3u);
  EXPECT_EQ((*s.got)->at(2).get("id"), "p3");

  auto later = c.add("search", kLater, none.done());
  c.dispatch(2, {}, 2);  // an answer to a POST sent before the search: says nothing about it
  EXPECT_FALSE(none.got);
  c.sent(3);
  c.dispatch(3, {}, 2);
  ASSERT_TRUE(none.got && none.got->has_value());
  EXPECT_TRUE((*none.got)->empty());
  (void)later;
}

TEST(RelayCorrelator, DeadlinesLostPostsAndTheEnd) {
  RelayCorrelator c;
  Captured late, lost, open;
  const auto now = Clock::now();
  c.add("create", now + std::chrono::seconds(1), late.done());
  c.sent(1);
  c.add("send", now + std::chrono::seconds(5), lost.done());
  c.sent(2);
  c.add("listen", now + std::chrono::seconds(9), open.done());
  auto next = c.expire(now + std::chrono::seconds(2));
  ASSERT_TRUE(late.got && !late.got->has_value());
  EXPECT_EQ(late.got->error().code, Errc::timed_out);
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, now + std::chrono::seconds(5));
  c.fail_post(2, Error{Errc::io_error, "connection reset"});
  ASSERT_TRUE(lost.got && !lost.got->has_value());
  EXPECT_EQ(lost.got->error().code, Errc::io_error);
  EXPECT_FALSE(open.got);  // not sent yet: not in post 2
  c.fail_all(Error{Errc::shutting_down, "closed"});
  ASSERT_TRUE(open.got && !open.got->has_value());
  EXPECT_TRUE(c.empty());
}

// An answer naming a request id never asked (another run's, or garbage) is handed back.
TEST(RelayCorrelator, UnknownRequestIdsAreNotAnswers) {
  RelayCorrelator c;
  Captured a;
  c.add("create", kLater, a.done());
  c.sent(1);
  std::vector<relay::codec::Message> in{response("success", "999"), response("success", "x1")};
  EXPECT_EQ(c.dispatch(1, std::move(in), 100).size(), 2u);
  EXPECT_FALSE(a.got);
}

}  // namespace
}  // namespace carrier::client
