// Field errors: the path as a payload next to the message "<field>: <description>", and prefixing
// that keeps the two in step. Nothing here reads a field out of message text.
#include "core/common/field_error.h"

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "core/common/status_macros.h"
#include "gtest/gtest.h"

namespace taxel {
namespace {

TEST(FieldErrorTest, MessageIsFieldColonDescriptionAndThePathIsThePayload) {
  const absl::Status s = InvalidFieldError("entities[1].links[0].shapes[2].sphere.radius", "expected > 0, got -1");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "entities[1].links[0].shapes[2].sphere.radius: expected > 0, got -1");
  ASSERT_TRUE(FieldOf(s).has_value());
  EXPECT_EQ(*FieldOf(s), "entities[1].links[0].shapes[2].sphere.radius");
  EXPECT_EQ(DescriptionOf(s), "expected > 0, got -1");
  // The payload is the path's bytes under the documented type URL.
  const auto payload = s.GetPayload(kFieldPathTypeUrl);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(std::string(*payload), "entities[1].links[0].shapes[2].sphere.radius");
}

TEST(FieldErrorTest, AnyCodeCanNameAField) {
  const absl::Status s = FieldError(absl::StatusCode::kNotFound, "scene", "no scene named 'x'");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "scene: no scene named 'x'");
  EXPECT_EQ(FieldOf(s).value_or("<none>"), "scene");
}

TEST(FieldErrorTest, DescriptionMayContainColonsAndSpaces) {
  // Only the payload says where the field ends: a description with its own ": " is kept whole.
  const absl::Status s = InvalidFieldError("read.sensors[0]", "no sensor named 'a: b' here");
  EXPECT_EQ(FieldOf(s).value_or("<none>"), "read.sensors[0]");
  EXPECT_EQ(DescriptionOf(s), "no sensor named 'a: b' here");
}

TEST(FieldErrorTest, EmptyFieldGivesAPlainStatus) {
  const absl::Status s = FieldError(absl::StatusCode::kOutOfRange, "", "too far");
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "too far");
  EXPECT_FALSE(FieldOf(s).has_value());
}

TEST(FieldOfTest, MessageTextThatLooksLikeAFieldIsNotOne) {
  // The old text parser would have read "poses" out of this message.
  const absl::Status s = absl::InvalidArgumentError("poses: expected shape [2, 2, 7]");
  EXPECT_FALSE(FieldOf(s).has_value());
  EXPECT_EQ(DescriptionOf(s), "poses: expected shape [2, 2, 7]");
  EXPECT_FALSE(FieldOf(absl::OkStatus()).has_value());
}

TEST(FieldOfTest, PayloadSurvivesStatusOrAndTheReturnMacros) {
  const auto fail = [] { return absl::StatusOr<int>(InvalidFieldError("dt", "expected a finite value > 0")); };
  const auto assign = [&]() -> absl::Status {
    TAXEL_ASSIGN_OR_RETURN(int v, fail());
    (void)v;
    return absl::OkStatus();
  };
  const auto forward = [&]() -> absl::Status {
    TAXEL_RETURN_IF_ERROR(assign());
    return absl::OkStatus();
  };
  const absl::Status s = forward();
  EXPECT_EQ(s.message(), "dt: expected a finite value > 0");
  EXPECT_EQ(FieldOf(s).value_or("<none>"), "dt");
}

TEST(PrefixFieldTest, PrefixesPathAndMessageAndKeepsCodeAndOtherPayloads) {
  absl::Status s = FieldError(absl::StatusCode::kOutOfRange, "env_ids[1]", "env id 5 out of range [0, 2)");
  s.SetPayload("type.example/other", absl::Cord("kept"));
  const absl::Status p = PrefixField(s, "spec.");
  EXPECT_EQ(p.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(p.message(), "spec.env_ids[1]: env id 5 out of range [0, 2)");
  EXPECT_EQ(FieldOf(p).value_or("<none>"), "spec.env_ids[1]");
  EXPECT_EQ(DescriptionOf(p), "env id 5 out of range [0, 2)");
  const auto other = p.GetPayload("type.example/other");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(std::string(*other), "kept");
}

TEST(PrefixFieldTest, PrefixesNest) {
  // An AddSensor-style "sensor." inside a CreateScene-style "spec.": the outer one comes first.
  const absl::Status inner = InvalidFieldError("probe_radius[3]", "expected a finite value >= 0, got -1");
  const absl::Status p = PrefixField(PrefixField(inner, "sensors[0]."), "spec.");
  EXPECT_EQ(p.message(), "spec.sensors[0].probe_radius[3]: expected a finite value >= 0, got -1");
  EXPECT_EQ(FieldOf(p).value_or("<none>"), "spec.sensors[0].probe_radius[3]");
}

TEST(PrefixFieldTest, StatusesWithoutAFieldAreUnchanged) {
  // A message of the "x: y" form without the payload is not prefixed.
  const absl::Status plain = absl::ResourceExhaustedError("server: the maximum of 4 scenes");
  EXPECT_EQ(PrefixField(plain, "spec."), plain);
  EXPECT_EQ(PrefixField(plain, "spec.").message(), "server: the maximum of 4 scenes");
  EXPECT_TRUE(PrefixField(absl::OkStatus(), "spec.").ok());
  const absl::Status named = InvalidFieldError("name", "expected a non-empty name");
  EXPECT_EQ(PrefixField(named, ""), named);
}

}  // namespace
}  // namespace taxel
