// Codec: wire tensors and poses (server/codec.h). Specs and steps are in codec_scene_spec_test.cc
// and codec_step_test.cc; the absl::Status → grpc::Status mapping in grpc_status_test.cc.
#include "server/codec.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace taxel::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

template <typename T>
v1::Tensor Make(v1::DType dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
  v1::Tensor t;
  t.set_dtype(dtype);
  t.mutable_shape()->Assign(shape.begin(), shape.end());
  t.set_data(values.data(), values.size() * sizeof(T));
  return t;
}

// ---------------------------------------------------------------------------------------------
// ViewTensor

TEST(ViewTensorTest, AcceptsEveryDtypeWithExactByteLength) {
  struct Case {
    v1::Tensor t;
    size_t item;
    int64_t n;
  };
  const std::vector<Case> cases = {
      {Make<float>(v1::FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6}), 4, 6},
      {Make<double>(v1::FLOAT64, {3, 2}, {1, 2, 3, 4, 5, 6}), 8, 6},
      {Make<int32_t>(v1::INT32, {4}, {-1, 0, 1, 2}), 4, 4},
      {Make<uint8_t>(v1::BOOL, {2, 2}, {0, 1, 1, 0}), 1, 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(v1::DType_Name(c.t.dtype()));
    EXPECT_EQ(DTypeSize(c.t.dtype()), c.item);
    auto view = ViewTensor(c.t, "x");
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->dtype, c.t.dtype());
    EXPECT_EQ(view->num_elements, c.n);
    EXPECT_EQ(view->shape, std::vector<int64_t>(c.t.shape().begin(), c.t.shape().end()));
    // A view, not a copy.
    EXPECT_EQ(view->bytes.data(), c.t.data().data());
    EXPECT_EQ(view->bytes.size(), c.n * c.item);
  }
  EXPECT_EQ(DTypeSize(v1::DTYPE_UNSPECIFIED), 0u);
}

TEST(ViewTensorTest, ScalarAndEmptyShapes) {
  // shape [] is a scalar: one element.
  auto scalar = ViewTensor(Make<double>(v1::FLOAT64, {}, {2.5}), "r");
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_THAT(scalar->shape, IsEmpty());
  EXPECT_EQ(scalar->num_elements, 1);
  // A zero dimension holds no element and no byte.
  auto empty = ViewTensor(Make<float>(v1::FLOAT32, {0, 3}, {}), "p");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->num_elements, 0);
  // A scalar without its 8 bytes is refused.
  auto missing = ViewTensor(Make<double>(v1::FLOAT64, {}, {}), "r");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.status().message(), HasSubstr("r: shape [] of FLOAT64 needs 8 bytes, got 0"));
}

TEST(ViewTensorTest, RefusesNegativeDimension) {
  auto v = ViewTensor(Make<float>(v1::FLOAT32, {2, -1}, {1, 2}), "poses");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("poses: shape [2, -1] has a negative dimension"));
}

TEST(ViewTensorTest, RefusesByteLengthMismatchNamingBothLengths) {
  // [2, 3] FLOAT64 needs 2·3·8 = 48 bytes; 5 values are 40.
  auto v = ViewTensor(Make<double>(v1::FLOAT64, {2, 3}, {1, 2, 3, 4, 5}), "twists");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("twists: shape [2, 3] of FLOAT64 needs 48 bytes, got 40"));
  // BOOL: one byte per element, [3] needs 3.
  auto b = ViewTensor(Make<uint8_t>(v1::BOOL, {3}, {1, 0, 1, 1}), "flags");
  EXPECT_THAT(b.status().message(), HasSubstr("needs 3 bytes, got 4"));
}

TEST(ViewTensorTest, RefusesUnspecifiedOrUnknownDtype) {
  auto v = ViewTensor(Make<float>(v1::DTYPE_UNSPECIFIED, {1}, {1}), "heights");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(),
              HasSubstr("heights: dtype must be FLOAT32, FLOAT64, INT32 or BOOL, got DTYPE_UNSPECIFIED"));
  // An enum value this server does not know still names what it got.
  auto unknown = ViewTensor(Make<float>(static_cast<v1::DType>(9), {1}, {1}), "heights");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("got 9"));
}

TEST(ViewTensorTest, RefusesShapesWhoseElementCountOverflows) {
  // 2^40 · 2^40 elements overflow int64.
  auto v = ViewTensor(Make<float>(v1::FLOAT32, {int64_t{1} << 40, int64_t{1} << 40}, {}), "poses");
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(), HasSubstr("is too large"));
}

TEST(ShapeStringTest, Formats) {
  EXPECT_EQ(ShapeString({}), "[]");
  EXPECT_EQ(ShapeString({1024, 6, 7}), "[1024, 6, 7]");
}

// ---------------------------------------------------------------------------------------------
// RealValues

TEST(RealValuesTest, Float32IsConvertedExactly) {
  // Every float is exactly representable as a double, so the conversion is exact.
  const std::vector<float> in = {0.1f, -3.5f, 1e-8f, std::numeric_limits<float>::max(),
                                 std::numeric_limits<float>::denorm_min()};
  const v1::Tensor t = Make<float>(v1::FLOAT32, {5}, in);
  auto view = ViewTensor(t, "x");
  ASSERT_TRUE(view.ok());
  std::vector<double> storage;
  auto values = RealValues(*view, "x", &storage);
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->size(), 5u);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ((*values)[i], static_cast<double>(in[i])) << i;
  EXPECT_EQ(values->data(), storage.data());
  EXPECT_EQ(static_cast<double>(0.1f), 0.100000001490116119384765625);  // the float nearest 0.1
}

TEST(RealValuesTest, AlignedFloat64IsZeroCopy) {
  const std::vector<double> in = {1.5, -2.25, 3e-300, 4, 5, 6};  // 48 bytes: heap storage, 8-aligned
  const v1::Tensor t = Make<double>(v1::FLOAT64, {2, 3}, in);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(t.data().data()) % alignof(double), 0u);
  auto view = ViewTensor(t, "x");
  ASSERT_TRUE(view.ok());
  std::vector<double> storage;
  auto values = RealValues(*view, "x", &storage);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(reinterpret_cast<const char*>(values->data()), t.data().data());  // points into the tensor
  EXPECT_TRUE(storage.empty());
  EXPECT_THAT(*values, ElementsAre(1.5, -2.25, 3e-300, 4, 5, 6));
}

TEST(RealValuesTest, MisalignedFloat64IsCopied) {
  const std::vector<double> in = {1.5, -2.25, 7};
  std::string buffer(1 + sizeof(double) * in.size(), '\0');
  std::memcpy(&buffer[1], in.data(), sizeof(double) * in.size());
  TensorView view;
  view.dtype = v1::FLOAT64;
  view.shape = {3};
  view.num_elements = 3;
  view.bytes = absl::string_view(buffer.data() + 1, sizeof(double) * in.size());
  ASSERT_NE(reinterpret_cast<uintptr_t>(view.bytes.data()) % alignof(double), 0u);
  std::vector<double> storage;
  auto values = RealValues(view, "x", &storage);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(values->data(), storage.data());
  EXPECT_THAT(*values, ElementsAre(1.5, -2.25, 7));
}

TEST(RealValuesTest, RefusesIntegerAndBoolTensors) {
  for (v1::DType dtype : {v1::INT32, v1::BOOL}) {
    const v1::Tensor t = Make<uint8_t>(dtype, {1}, std::vector<uint8_t>(DTypeSize(dtype), 0));
    auto view = ViewTensor(t, "heights");
    ASSERT_TRUE(view.ok());
    std::vector<double> storage;
    auto values = RealValues(*view, "heights", &storage);
    EXPECT_EQ(values.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(values.status().message(),
                HasSubstr("heights: expected dtype FLOAT32 or FLOAT64, got " + v1::DType_Name(dtype)));
  }
}

// ---------------------------------------------------------------------------------------------
// Poses

TEST(DecodePoseTest, AbsentPoseIsTheIdentity) {
  auto X = DecodePose(v1::Pose(), "pose");
  ASSERT_TRUE(X.ok()) << X.status();
  EXPECT_EQ(X->R, Eigen::Matrix3d::Identity());
  EXPECT_EQ(X->p, Eigen::Vector3d::Zero());
}

TEST(DecodePoseTest, PositionOnlyNeedsNoQuaternionOrder) {
  v1::Pose pose;
  pose.add_position(1), pose.add_position(-2), pose.add_position(0.5);
  auto X = DecodePose(pose, "pose");
  ASSERT_TRUE(X.ok()) << X.status();
  EXPECT_EQ(X->p, Eigen::Vector3d(1, -2, 0.5));
  EXPECT_EQ(X->R, Eigen::Matrix3d::Identity());
}

TEST(DecodePoseTest, NormalisesTheQuaternionInEitherOrder) {
  // (x, y, z, w) = (0, 0, 2, 2) is, once normalised, a quarter turn about +z:
  // R = [[0, −1, 0], [1, 0, 0], [0, 0, 1]].
  Eigen::Matrix3d expected;
  expected << 0, -1, 0, 1, 0, 0, 0, 0, 1;
  v1::Pose xyzw;
  for (double q : {0.0, 0.0, 2.0, 2.0}) xyzw.add_quaternion(q);
  xyzw.set_quat_order(v1::XYZW);
  v1::Pose wxyz;
  for (double q : {2.0, 0.0, 0.0, 2.0}) wxyz.add_quaternion(q);
  wxyz.set_quat_order(v1::WXYZ);
  for (const v1::Pose& pose : {xyzw, wxyz}) {
    auto X = DecodePose(pose, "pose");
    ASSERT_TRUE(X.ok()) << X.status();
    EXPECT_TRUE(X->R.isApprox(expected, 1e-15)) << X->R;
    EXPECT_NEAR(X->R.determinant(), 1.0, 1e-15);
  }
}

TEST(DecodePoseTest, RefusesWrongCountsMissingOrderAndBadNumbers) {
  struct Case {
    v1::Pose pose;
    std::string message;
  };
  std::vector<Case> cases(6);
  cases[0].pose.add_position(1), cases[0].pose.add_position(2);
  cases[0].message = "shapes[0].pose.position: expected 3 values or none, got 2";
  for (int i = 0; i < 3; ++i) cases[1].pose.add_quaternion(1);
  cases[1].pose.set_quat_order(v1::XYZW);
  cases[1].message = "shapes[0].pose.quaternion: expected 4 values or none, got 3";
  for (double q : {0.0, 0.0, 0.0, 1.0}) cases[2].pose.add_quaternion(q);
  cases[2].message = "shapes[0].pose.quat_order: expected XYZW or WXYZ, got QUAT_ORDER_UNSPECIFIED";
  for (int i = 0; i < 4; ++i) cases[3].pose.add_quaternion(0);
  cases[3].pose.set_quat_order(v1::WXYZ);
  cases[3].message = "shapes[0].pose: quaternion norm must be at least 1e-6, got 0";
  for (double p : {0.0, std::nan(""), 0.0}) cases[4].pose.add_position(p);
  cases[4].message = "shapes[0].pose.position[1]: expected a finite number";
  for (double q : {0.0, 0.0, std::numeric_limits<double>::infinity(), 1.0}) cases[5].pose.add_quaternion(q);
  cases[5].pose.set_quat_order(v1::XYZW);
  cases[5].message = "shapes[0].pose.quaternion[2]: expected a finite number";  // the wire field and index
  for (const Case& c : cases) {
    auto X = DecodePose(c.pose, "shapes[0].pose");
    EXPECT_EQ(X.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(X.status().message(), HasSubstr(c.message));
  }
}

TEST(EncodePoseTest, WritesXyzwThatDecodesBack) {
  RigidTransform X;
  X.R << 0, -1, 0, 1, 0, 0, 0, 0, 1;  // quarter turn about +z: q = (0, 0, √½, √½)
  X.p = Eigen::Vector3d(0.1, 0.2, 0.3);
  v1::Pose pose;
  EncodePose(X, &pose);
  EXPECT_EQ(pose.quat_order(), v1::XYZW);
  ASSERT_EQ(pose.quaternion_size(), 4);
  const double h = std::sqrt(0.5);
  const double sign = pose.quaternion(3) < 0 ? -1 : 1;  // q and −q are the same rotation
  EXPECT_NEAR(sign * pose.quaternion(0), 0, 1e-15);
  EXPECT_NEAR(sign * pose.quaternion(1), 0, 1e-15);
  EXPECT_NEAR(sign * pose.quaternion(2), h, 1e-15);
  EXPECT_NEAR(sign * pose.quaternion(3), h, 1e-15);
  EXPECT_THAT(pose.position(), ElementsAre(0.1, 0.2, 0.3));
  auto back = DecodePose(pose, "pose");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->R.isApprox(X.R, 1e-15));
  EXPECT_EQ(back->p, X.p);
}

TEST(QuatOrderTest, MapsBothWays) {
  EXPECT_EQ(FromProto(v1::XYZW), QuatOrder::kXyzw);
  EXPECT_EQ(FromProto(v1::WXYZ), QuatOrder::kWxyz);
  EXPECT_EQ(FromProto(v1::QUAT_ORDER_UNSPECIFIED), QuatOrder::kUnspecified);
  EXPECT_EQ(ToProto(QuatOrder::kXyzw), v1::XYZW);
  EXPECT_EQ(ToProto(QuatOrder::kWxyz), v1::WXYZ);
}

}  // namespace
}  // namespace taxel::server
