#include "stomp/destination_name.hpp"

#include <gtest/gtest.h>

namespace carrier::stomp {
namespace {

using core::DestinationKind;

TEST(DestinationName, Spellings) {
  EXPECT_EQ(parse_destination("/queue/a.b"), (core::Destination{DestinationKind::queue, "a.b"}));
  EXPECT_EQ(parse_destination("/amq/queue/a"), (core::Destination{DestinationKind::queue, "a"}));
  EXPECT_EQ(parse_destination("/topic/x.*"), (core::Destination{DestinationKind::topic, "x.*"}));
  EXPECT_EQ(parse_destination("/temp-queue/r"), (core::Destination{DestinationKind::temp_queue, "r"}));
  EXPECT_EQ(parse_destination("plain"), (core::Destination{DestinationKind::queue, "plain"}));
  EXPECT_FALSE(parse_destination("/queue/").has_value());
  EXPECT_FALSE(parse_destination("").has_value());
}

TEST(DestinationName, FormatRoundTrips) {
  for (const char* text : {"/queue/a.b", "/topic/t", "/temp-queue/r"}) {
    EXPECT_EQ(format_destination(*parse_destination(text)), text);
  }
}

}  // namespace
}  // namespace carrier::stomp
