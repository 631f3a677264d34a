#include "stomp/destination_name.hpp"

#include <gtest/gtest.h>

namespace carrier::stomp {
namespace {

using model::DestinationKind;

model::Destination parsed(std::string_view text, bool for_subscribe = false) {
  auto d = parse_destination(text, for_subscribe);
  EXPECT_TRUE(d.has_value()) << text;
  return d ? *d : model::Destination{};
}

TEST(DestinationName, Spellings) {
  EXPECT_EQ(parsed("/queue/a.b"), (model::Destination{DestinationKind::queue, "a.b"}));
  EXPECT_EQ(parsed("/amq/queue/a"), (model::Destination{DestinationKind::queue, "a"}));
  EXPECT_EQ(parsed("/topic/x.*"), (model::Destination{DestinationKind::topic, "x.*"}));
  EXPECT_EQ(parsed("/temp-queue/r"), (model::Destination{DestinationKind::temp_queue, "r"}));
  EXPECT_EQ(parsed("plain"), (model::Destination{DestinationKind::queue, "plain"}));
  EXPECT_EQ(parsed("a/b"), (model::Destination{DestinationKind::queue, "a/b"}));
}

TEST(DestinationName, UnknownPrefixesAndEmptyNamesAreErrors) {
  for (const char* text : {"", "/", "/queue/", "/queue", "/topic", "/topic/", "/temp-queue", "/amq/queue",
                           "/something/x", "/plain", "/exchange", "/exchange/", "/topic/$exchange.amq.fanout"}) {
    auto d = parse_destination(text, false);
    EXPECT_FALSE(d.has_value()) << text;
    if (!d) {
      EXPECT_EQ(d.error().code, Errc::invalid_argument) << text;
    }
  }
}

TEST(DestinationName, RabbitMqExchanges) {
  EXPECT_EQ(parsed("/exchange/amq.topic/a.b"), (model::Destination{DestinationKind::topic, "a.b"}));
  EXPECT_EQ(parsed("/exchange/amq.topic/a.#", true), (model::Destination{DestinationKind::topic, "a.>"}));
  EXPECT_EQ(parsed("/exchange/amq.topic/*.b", true), (model::Destination{DestinationKind::topic, "*.b"}));
  EXPECT_EQ(parsed("/topic/#", true), (model::Destination{DestinationKind::topic, ">"}));
  EXPECT_EQ(parsed("/topic/a.#"), (model::Destination{DestinationKind::topic, "a.#"}));  // sent: a plain name
  EXPECT_FALSE(parse_destination("/exchange/amq.topic/#.a", true).has_value());
  EXPECT_FALSE(parse_destination("/exchange/amq.topic", true).has_value());
  EXPECT_EQ(parsed("/exchange/amq.fanout"), (model::Destination{DestinationKind::topic, "$exchange.amq.fanout"}));
  EXPECT_EQ(parsed("/exchange/amq.fanout/ignored", true),
            (model::Destination{DestinationKind::topic, "$exchange.amq.fanout"}));
  EXPECT_EQ(parsed("/exchange/amq.direct/k.1"), (model::Destination{DestinationKind::topic, "$exchange.amq.direct.k.1"}));
  EXPECT_FALSE(parse_destination("/exchange/amq.direct/k.*", true).has_value());
  auto unknown = parse_destination("/exchange/nope/x", false);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, Errc::not_found);
}

TEST(DestinationName, FormatRoundTrips) {
  for (const char* text : {"/queue/a.b", "/topic/t", "/temp-queue/r", "/exchange/amq.fanout", "/exchange/amq.direct",
                           "/exchange/amq.direct/k.1"}) {
    EXPECT_EQ(format_destination(parsed(text)), text);
  }
  // As ActiveMQ and RabbitMQ write them back: their canonical spelling.
  EXPECT_EQ(format_destination(parsed("plain")), "/queue/plain");
  EXPECT_EQ(format_destination(parsed("/amq/queue/q")), "/queue/q");
  EXPECT_EQ(format_destination(parsed("/exchange/amq.topic/a.b")), "/topic/a.b");
}

}  // namespace
}  // namespace carrier::stomp
