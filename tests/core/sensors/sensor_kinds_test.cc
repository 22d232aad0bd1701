// The per-kind traits table (core/sensors/sensor.h): one row per SensorKind, in enum order, with
// the channels, pipeline groups and needs that docs/reference.md#sensors and the proto give each kind.
#include <vector>

#include "core/sensors/sensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taxel::sensors {
namespace {

using ::testing::ElementsAre;

TEST(SensorKindTraitsTest, OneRowPerKindInEnumOrder) {
  ASSERT_EQ(kNumSensorKinds, 5);
  const char* names[] = {"contact_probe", "contact_depth_probe", "kinematic_taxel", "elastomer_taxel",
                         "proximity_taxel"};
  for (int k = 0; k < kNumSensorKinds; ++k) {
    EXPECT_EQ(static_cast<int>(kSensorKinds[k]), k);
    EXPECT_EQ(TraitsOf(kSensorKinds[k]).name, names[k]);
    EXPECT_EQ(SensorKindName(kSensorKinds[k]), names[k]);
  }
}

TEST(SensorKindTraitsTest, ChannelsGroupsAndNeeds) {
  const auto& contact = TraitsOf(SensorKind::kContactProbe);
  EXPECT_THAT(contact.channels, ElementsAre(Channel::kContact, Channel::kDepth));
  EXPECT_THAT(contact.groups, ElementsAre(ChannelGroup::kScalar));
  const auto& depth = TraitsOf(SensorKind::kContactDepthProbe);
  EXPECT_THAT(depth.channels, ElementsAre(Channel::kDepth, Channel::kNormal, Channel::kArea, Channel::kPartner));
  EXPECT_THAT(depth.history, ElementsAre(Channel::kDepth));
  const auto& kin = TraitsOf(SensorKind::kKinematicTaxel);
  EXPECT_THAT(kin.groups, ElementsAre(ChannelGroup::kForceLike, ChannelGroup::kTorque));
  EXPECT_TRUE(kin.needs_velocities);
  EXPECT_FALSE(kin.tracks_links);
  EXPECT_EQ(kin.evaluator, Evaluator::kProbeRange);
  const auto& gel = TraitsOf(SensorKind::kElastomerTaxel);
  EXPECT_THAT(gel.channels, ElementsAre(Channel::kDisplacement));
  EXPECT_TRUE(gel.tracks_links);
  EXPECT_FALSE(gel.needs_velocities);
  EXPECT_EQ(gel.evaluator, Evaluator::kElastomer);
  const auto& prox = TraitsOf(SensorKind::kProximityTaxel);
  EXPECT_THAT(prox.history, ElementsAre(Channel::kForce, Channel::kTorque));
  EXPECT_TRUE(prox.tracks_links && prox.needs_velocities);
  EXPECT_EQ(prox.evaluator, Evaluator::kProximity);
}

}  // namespace
}  // namespace taxel::sensors
