#include "http/codec/problem.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace carrier::http::codec {
namespace {

TEST(Problem, StatusForEachCode) {
  EXPECT_EQ(status_for(Errc::invalid_argument), 400);
  EXPECT_EQ(status_for(Errc::not_found), 404);
  EXPECT_EQ(status_for(Errc::permission_denied), 403);
  EXPECT_EQ(status_for(Errc::limit_exceeded), 429);
  EXPECT_EQ(status_for(Errc::io_error), 503);
  EXPECT_EQ(status_for(Errc::timed_out), 504);
}

TEST(Problem, DocumentHasTheFourMembers) {
  auto doc = nlohmann::json::parse(problem_json(413, "body over 10 bytes \xff"));
  EXPECT_EQ(doc["type"], "about:blank");
  EXPECT_EQ(doc["title"], "Content Too Large");
  EXPECT_EQ(doc["status"], 413);
  EXPECT_EQ(doc["detail"].get<std::string>().substr(0, 18), "body over 10 bytes");
}

}  // namespace
}  // namespace carrier::http::codec
