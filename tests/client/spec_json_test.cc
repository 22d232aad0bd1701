// taxel/spec_json.h: SceneSpec JSON whose tensors give their data as lists of numbers. Expected
// bytes are packed here value by value (little-endian, like the wire).
#include "taxel/spec_json.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taxel {
namespace {

using ::testing::HasSubstr;

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// One KinematicTaxel on link "pad" whose probe_local_pos and probe_radius are the given JSON.
std::string SensorJson(const std::string& pos, const std::string& radius = R"({"data": 0.002})") {
  return R"({"name": "s", "num_envs": 1,
             "entities": [{"name": "hand", "kind": "ROBOT", "links": [{"name": "pad"}]}],
             "sensors": [{"name": "k", "kind": "KINEMATIC_TAXEL", "link": "pad",
                          "probe_local_pos": )" +
         pos + R"(, "probe_radius": )" + radius + "}]}";
}

TEST(SceneSpecFromJsonTest, NestedListsGiveTheShapeAndFloat64ByDefault) {
  auto spec = SceneSpecFromJson(SensorJson(R"({"data": [[0, 0, 0], [0.01, -0.02, 0.5]]})"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::Tensor& pos = spec->sensors(0).probe_local_pos();
  EXPECT_EQ(pos.dtype(), v1::FLOAT64);
  EXPECT_THAT(pos.shape(), ::testing::ElementsAre(2, 3));
  EXPECT_EQ(pos.data(), Bytes<double>({0, 0, 0, 0.01, -0.02, 0.5}));
  // A bare number is a scalar: no shape, one value.
  const v1::Tensor& r = spec->sensors(0).probe_radius();
  EXPECT_EQ(r.shape_size(), 0);
  EXPECT_EQ(r.data(), Bytes<double>({0.002}));
}

TEST(SceneSpecFromJsonTest, AFlatListTakesTheGivenShapeAndDtype) {
  auto spec =
      SceneSpecFromJson(SensorJson(R"({"dtype": "FLOAT32", "shape": [1, 2, 3], "data": [1, 2, 3, 4, 5, 6.5]})"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::Tensor& pos = spec->sensors(0).probe_local_pos();
  EXPECT_EQ(pos.dtype(), v1::FLOAT32);
  EXPECT_THAT(pos.shape(), ::testing::ElementsAre(1, 2, 3));
  EXPECT_EQ(pos.data(), Bytes<float>({1, 2, 3, 4, 5, 6.5f}));
}

TEST(SceneSpecFromJsonTest, IntegersAndBooleans) {
  v1::Tensor t;
  ASSERT_TRUE(MessageFromJson(R"({"dtype": "INT32", "data": [[-1, 7], [2147483647, 0]]})", &t).ok());
  EXPECT_EQ(t.data(), Bytes<int32_t>({-1, 7, 2147483647, 0}));
  ASSERT_TRUE(MessageFromJson(R"({"dtype": "BOOL", "data": [true, false, 1]})", &t).ok());
  EXPECT_EQ(t.data(), std::string("\x01\x00\x01", 3));
  const absl::Status frac = MessageFromJson(R"({"dtype": "INT32", "data": [1, 2.5]})", &t);
  EXPECT_EQ(frac.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(frac.message()), "data value 1: expected a 32-bit integer, got 2.5");
}

TEST(SceneSpecFromJsonTest, Base64DataPassesThrough) {
  // 0.002 as a little-endian double, base64: the protobuf JSON form is still accepted.
  auto spec = SceneSpecFromJson(SensorJson(R"({"dtype": "FLOAT64", "shape": [1, 3], "data": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"})",
                                           R"({"dtype": "FLOAT64", "data": "/Knx0k1iYD8="})"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->sensors(0).probe_radius().data(), Bytes<double>({0.002}));
  EXPECT_EQ(spec->sensors(0).probe_local_pos().data(), std::string(24, '\0'));
}

TEST(SceneSpecFromJsonTest, ErrorsNameTheJsonPath) {
  const auto message = [](const std::string& pos) {
    auto spec = SceneSpecFromJson(SensorJson(pos));
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(spec.status().message());
  };
  EXPECT_EQ(message(R"({"data": [[0, 0, 0], [0, 0]]})"),
            "sensors[0].probe_local_pos.data[1]: expected 3 values like its siblings, got 2");
  EXPECT_EQ(message(R"({"data": [[0, "a", 0]]})"), "sensors[0].probe_local_pos.data[0][1]: expected a number, got \"a\"");
  EXPECT_EQ(message(R"({"data": [[0, 0, 0], 1]})"),
            "sensors[0].probe_local_pos.data[1]: expected a list of 3 values, got a number");
  EXPECT_EQ(message(R"({"shape": [2, 3], "data": [0, 0, 0]})"),
            "sensors[0].probe_local_pos.data: 3 values for shape [2, 3], which holds 6");
  EXPECT_EQ(message(R"({"dtype": "UINT8", "data": [1]})"),
            "sensors[0].probe_local_pos.data: dtype 'UINT8' has no list form (FLOAT32, FLOAT64, INT32 or BOOL)");
  // What is not a SceneSpec at all keeps protobuf's message.
  auto bad = SceneSpecFromJson(R"({"name": "s", "no_such_field": 1})");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("not a taxel.v1.SceneSpec"));
  EXPECT_THAT(std::string(SceneSpecFromJson("{").status().message()), HasSubstr("not valid JSON"));
}

}  // namespace
}  // namespace taxel

namespace taxel {
namespace {

TEST(SceneSpecFromJsonTest, ImplicitShapesAreProtoJson) {
  // The CLI's JSON specs take implicit shapes as the proto's JSON: no tensors, plain fields.
  auto spec = SceneSpecFromJson(R"({"name": "s", "num_envs": 1, "entities": [{"name": "soap", "kind": "OBJECT",
      "links": [{"name": "body", "shapes": [
        {"implicit": {"superellipsoid": {"n": 4, "semi_axes": [0.04, 0.03, 0.02]}}},
        {"implicit": {"smooth_polytope": {"normals": [1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1, 0, 0, 0, 1, 0, 0, -1],
                                          "offsets": [0.02, 0.02, 0.02, 0.02, 0.02, 0.02], "beta": 20}}},
        {"implicit": {"truncated_cone": {"beta": 8, "bottom_radius": 0.02, "top_radius": 0.01, "a": 0.03,
                                         "b": 0.04}}}]}]}]})");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& shapes = spec->entities(0).links(0).shapes();
  ASSERT_EQ(shapes.size(), 3);
  EXPECT_EQ(shapes[0].implicit().superellipsoid().n(), 4);
  EXPECT_THAT(shapes[0].implicit().superellipsoid().semi_axes(), ::testing::ElementsAre(0.04, 0.03, 0.02));
  EXPECT_EQ(shapes[1].implicit().smooth_polytope().normals_size(), 18);
  EXPECT_EQ(shapes[1].implicit().smooth_polytope().beta(), 20);
  EXPECT_EQ(shapes[2].implicit().truncated_cone().b(), 0.04);
}

}  // namespace
}  // namespace taxel
