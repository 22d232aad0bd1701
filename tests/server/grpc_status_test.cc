// The absl::Status → grpc::Status mapping (server/grpc_status.h): codes one to one, and a
// google.rpc.BadRequest field violation built from the field path a status carries
// (core/common/field_error.h) — never from its message text.
#include "server/grpc_status.h"

#include <string>

#include "core/common/field_error.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"

namespace taxel::server {
namespace {

using ::testing::EndsWith;
using ::testing::StartsWith;

struct Details {
  google::rpc::Status status;
  google::rpc::BadRequest bad_request;
  bool has_bad_request = false;
};

Details ParseDetails(const grpc::Status& s) {
  Details d;
  EXPECT_TRUE(d.status.ParseFromString(s.error_details()));
  for (const auto& any : d.status.details()) d.has_bad_request |= any.UnpackTo(&d.bad_request);
  return d;
}

TEST(ToGrpcStatusTest, OkStaysOk) { EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok()); }

TEST(ToGrpcStatusTest, InvalidArgumentCarriesBadRequestWithTheFieldPath) {
  const grpc::Status s =
      ToGrpcStatus(InvalidFieldError("poses", "expected shape [2, 2, 7] (or [4, 7]), got [2, 1, 7]"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "poses: expected shape [2, 2, 7] (or [4, 7]), got [2, 1, 7]");
  const Details d = ParseDetails(s);
  EXPECT_EQ(d.status.code(), 3);  // google.rpc.Code.INVALID_ARGUMENT
  EXPECT_EQ(d.status.message(), s.error_message());
  ASSERT_TRUE(d.has_bad_request);
  ASSERT_EQ(d.bad_request.field_violations_size(), 1);
  EXPECT_EQ(d.bad_request.field_violations(0).field(), "poses");
  EXPECT_EQ(d.bad_request.field_violations(0).description(), "expected shape [2, 2, 7] (or [4, 7]), got [2, 1, 7]");
}

TEST(ToGrpcStatusTest, PrefixIsPrependedToMessageAndField) {
  const grpc::Status s =
      ToGrpcStatus(InvalidFieldError("entities[1].links[0].shapes[0]", "expected one of sphere, box"), "spec.");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "spec.entities[1].links[0].shapes[0]: expected one of sphere, box");
  const Details d = ParseDetails(s);
  ASSERT_TRUE(d.has_bad_request);
  EXPECT_EQ(d.bad_request.field_violations(0).field(), "spec.entities[1].links[0].shapes[0]");
  EXPECT_EQ(d.bad_request.field_violations(0).description(), "expected one of sphere, box");
  EXPECT_EQ(d.status.message(), "spec.entities[1].links[0].shapes[0]: expected one of sphere, box");
}

TEST(ToGrpcStatusTest, OutOfRangeAlsoCarriesTheField) {
  const grpc::Status s =
      ToGrpcStatus(FieldError(absl::StatusCode::kOutOfRange, "env_ids[1]", "env id 5 out of range [0, 2)"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  const Details d = ParseDetails(s);
  EXPECT_EQ(d.status.code(), 11);  // google.rpc.Code.OUT_OF_RANGE
  ASSERT_TRUE(d.has_bad_request);
  EXPECT_EQ(d.bad_request.field_violations(0).field(), "env_ids[1]");
  EXPECT_EQ(d.bad_request.field_violations(0).description(), "env id 5 out of range [0, 2)");
}

TEST(ToGrpcStatusTest, TheFieldPathComesFromThePayloadNotTheText) {
  // The old parser took the space-free text before the first ": " for the path. Now a field whose
  // path the text would split elsewhere is kept whole, and a description with its own ": " too.
  const grpc::Status s = ToGrpcStatus(InvalidFieldError("read.sensors[0]", "no sensor named 'x: y' in this scene"));
  const Details d = ParseDetails(s);
  ASSERT_TRUE(d.has_bad_request);
  EXPECT_EQ(d.bad_request.field_violations(0).field(), "read.sensors[0]");
  EXPECT_EQ(d.bad_request.field_violations(0).description(), "no sensor named 'x: y' in this scene");
}

TEST(ToGrpcStatusTest, MessageThatLooksLikeAFieldWithoutThePayloadHasNoViolation) {
  // "poses: ..." is the shape of a field error, but nothing made it with FieldError: no detail,
  // no prefix, the message as it is.
  for (const absl::Status& plain : {absl::InvalidArgumentError("poses: expected shape [2, 2, 7]"),
                                    absl::OutOfRangeError("env_ids[1]: env id 5 out of range [0, 2)")}) {
    const grpc::Status s = ToGrpcStatus(plain, "spec.");
    EXPECT_EQ(static_cast<int>(s.error_code()), static_cast<int>(plain.code()));
    EXPECT_EQ(s.error_message(), std::string(plain.message()));
    EXPECT_TRUE(s.error_details().empty()) << s.error_message();
  }
}

TEST(ToGrpcStatusTest, OtherCodesThatNameAFieldCarryItToo) {
  const grpc::Status nf = ToGrpcStatus(FieldError(absl::StatusCode::kNotFound, "scene", "no scene named 'x'"));
  EXPECT_EQ(nf.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(nf.error_message(), "scene: no scene named 'x'");
  const Details d = ParseDetails(nf);
  EXPECT_EQ(d.status.code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));
  ASSERT_EQ(d.bad_request.field_violations_size(), 1);
  EXPECT_EQ(d.bad_request.field_violations(0).field(), "scene");
  EXPECT_EQ(d.bad_request.field_violations(0).description(), "no scene named 'x'");
  // The prefix applies to the message and the violation of any code that names a field.
  const grpc::Status mesh = ToGrpcStatus(
      FieldError(absl::StatusCode::kNotFound, "entities[0].links[0].shapes[0].mesh_id", "unknown"), "spec.");
  EXPECT_EQ(mesh.error_message(), "spec.entities[0].links[0].shapes[0].mesh_id: unknown");
  EXPECT_EQ(ParseDetails(mesh).bad_request.field_violations(0).field(), "spec.entities[0].links[0].shapes[0].mesh_id");
  const grpc::Status big = ToGrpcStatus(FieldError(absl::StatusCode::kResourceExhausted, "dt", "needs 240 GB"));
  EXPECT_EQ(ParseDetails(big).bad_request.field_violations(0).field(), "dt");
  // A message without a field path is kept as is.
  const grpc::Status full = ToGrpcStatus(absl::ResourceExhaustedError("the server already holds 4 scenes"), "spec.");
  EXPECT_EQ(full.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(full.error_message(), "the server already holds 4 scenes");
  // Codes map one to one (absl and gRPC share the canonical numbering).
  for (int c = 1; c <= 16; ++c) {
    const grpc::Status s = ToGrpcStatus(absl::Status(static_cast<absl::StatusCode>(c), "m"));
    EXPECT_EQ(static_cast<int>(s.error_code()), c);
  }
}

TEST(BoundedStatusTest, CutsMessageAndViolationAlike) {
  // A 2000-byte name quoted in the description: message 6 + 2000 bytes, description 2000 bytes.
  // Both become their first 1024 − 40 = 984 bytes + "... (N bytes)"; the field path stays.
  const std::string name(2000, 'n');
  const grpc::Status s = BoundedStatus(ToGrpcStatus(InvalidFieldError("name", name)));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "name: " + name.substr(0, 984 - 6) + "... (2006 bytes)");
  const Details d = ParseDetails(s);
  ASSERT_TRUE(d.has_bad_request);
  EXPECT_EQ(d.bad_request.field_violations(0).field(), "name");
  EXPECT_THAT(d.bad_request.field_violations(0).description(), StartsWith(name.substr(0, 984)));
  EXPECT_THAT(d.bad_request.field_violations(0).description(), EndsWith("... (2000 bytes)"));
  EXPECT_EQ(d.bad_request.field_violations(0).description().size(), 984 + std::string("... (2000 bytes)").size());
  EXPECT_EQ(d.status.message(), s.error_message());
}

}  // namespace
}  // namespace taxel::server
