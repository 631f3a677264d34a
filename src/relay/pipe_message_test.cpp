#include "relay/pipe_message.hpp"

#include <gtest/gtest.h>

#include "relay/codec/seed_listings.hpp"

namespace carrier::relay {
namespace {

codec::Message listing14() {
  auto d = codec::decode_one(codec::seed::bytes_of(codec::seed::listings()[11]), codec::Limits{});
  EXPECT_TRUE(d.has_value());
  return d->message;
}

TEST(PipeMessage, ASendBecomesBodyAndPropertiesAndComesBackByteIdentical) {
  const auto app = application_elements(listing14());
  ASSERT_EQ(app.size(), 3u);  // sender, message, records:fileReference
  model::Message m;
  fill_message(app, m);
  EXPECT_EQ(*m.body, "Hello");
  ASSERT_GE(m.properties.size(), 2u);
  EXPECT_EQ(m.properties[0], (std::pair<std::string, std::string>{"sender", "tester"}));
  EXPECT_EQ(m.properties[1], (std::pair<std::string, std::string>{"records:fileReference", "3"}));
  EXPECT_EQ(elements_of(m), app);
}

TEST(PipeMessage, AMessageFromAnotherClient) {
  model::Message m;
  m.properties = {{"sender", "stomp"}, {"app:kind", "k"}};
  m.content_type = "text/plain";
  m.body = std::make_shared<const std::string>("hi");
  auto e = elements_of(m);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0], (codec::Element{"", "sender", "stomp", std::nullopt, std::nullopt}));
  EXPECT_EQ(e[1], (codec::Element{"app", "kind", "k", std::nullopt, std::nullopt}));
  EXPECT_EQ(e[2], (codec::Element{"", "message", "hi", "text/plain", std::nullopt}));
}

TEST(PipeMessage, BinaryContentTravelsOnlyInTheCopy) {
  std::vector<codec::Element> app{{"", "blob", std::string("\0\x01\xff", 3), std::nullopt, std::nullopt}};
  model::Message m;
  fill_message(app, m);
  ASSERT_EQ(m.properties.size(), 1u);
  EXPECT_EQ(m.properties[0].first, kElementsProperty);
  EXPECT_EQ(elements_of(m), app);
}

}  // namespace
}  // namespace carrier::relay
