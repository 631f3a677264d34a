#include "relay/pipe_id.hpp"

#include <gtest/gtest.h>

namespace carrier::relay {
namespace {

TEST(PipeId, CarriesItsDestination) {
  const model::Destination q{model::DestinationKind::queue, "testPipe"};
  EXPECT_EQ(pipe_id(q), "urn:jxta:uuid-51746573745069706504");
  EXPECT_EQ(pipe_destination(pipe_id(q)), q);
  const model::Destination t{model::DestinationKind::topic, "grp.chat"};
  EXPECT_EQ(pipe_destination(pipe_id(t)), t);
}

TEST(PipeId, GroupIds) {
  EXPECT_EQ(group_id("myPeerGroup"), "urn:jxta:uuid-476D795065657247726F757002");
  EXPECT_EQ(group_name(group_id("myPeerGroup")), "myPeerGroup");
  EXPECT_FALSE(group_name(pipe_id({model::DestinationKind::queue, "x"})).has_value());
  EXPECT_FALSE(pipe_destination(group_id("x")).has_value());
}

TEST(PipeId, RefusesOthers) {
  EXPECT_FALSE(pipe_destination("").has_value());
  EXPECT_FALSE(pipe_destination("urn:jxta:uuid-04").has_value());
  EXPECT_FALSE(pipe_destination("urn:jxta:uuid-5Z7404").has_value());
  EXPECT_FALSE(pipe_destination("urn:jxta:uuid-517404x").has_value());
  EXPECT_FALSE(pipe_destination("urn:jxta:uuid-58787804").has_value());  // 'X': no such kind
}

}  // namespace
}  // namespace carrier::relay
