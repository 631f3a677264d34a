#include "stomp/destination_name.hpp"

#include <gtest/gtest.h>

namespace carrier::stomp {
namespace {

using core::DestinationKind;

core::Destination parsed(std::string_view text, bool for_subscribe = false) {
  auto d = parse_destination(text, for_subscribe);
  EXPECT_TRUE(d.has_value()) << text;
  return d ? *d : core::Destination{};
}

TEST(DestinationName, Spellings) {
  EXPECT_EQ(parsed("/queue/a.b"), (core::Destination{DestinationKind::queue, "a.b"}));
  EXPECT_EQ(parsed("/amq/queue/a"), (core::Destination{DestinationKind::queue, "a"}));
  EXPECT_EQ(parsed("/topic/x.*"), (core::Destination{DestinationKind::topic, "x.*"}));
  EXPECT_EQ(parsed("/temp-queue/r"), (core::Destination{DestinationKind::temp_queue, "r"}));
  EXPECT_EQ(parsed("plain"), (core::Destination{DestinationKind::queue, "plain"}));
  EXPECT_EQ(parsed("a/b"), (core::Destination{DestinationKind::queue, "a/b"}));
}

TEST(DestinationName, UnknownPrefixesAndEmptyNamesAreErrors) {
  for (const char* text : {"", "/", "/queue/", "/queue", "/topic", "/topic/", "/temp-queue", "/amq/queue",
                           "/something/x", "/plain"}) {
    auto d = parse_destination(text, false);
    EXPECT_FALSE(d.has_value()) << text;
    if (!d) {
      EXPECT_EQ(d.error().code, Errc::invalid_argument) << text;
    }
  }
}

TEST(DestinationName, FormatRoundTrips) {
  for (const char* text : {"/queue/a.b", "/topic/t", "/temp-queue/r"}) {
    EXPECT_EQ(format_destination(parsed(text)), text);
  }
  // As ActiveMQ and RabbitMQ write them back: their canonical spelling.
  EXPECT_EQ(format_destination(parsed("plain")), "/queue/plain");
  EXPECT_EQ(format_destination(parsed("/amq/queue/q")), "/queue/q");
}

}  // namespace
}  // namespace carrier::stomp
