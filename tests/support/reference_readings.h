// The readings of a response built with protobuf's own classes: the reference that the hand-written
// encoder (server/step_wire.h, the only one the server uses) is tested against, and a convenience
// for tests that want readings as messages.
#ifndef TAXEL_TESTS_SUPPORT_REFERENCE_READINGS_H_
#define TAXEL_TESTS_SUPPORT_REFERENCE_READINGS_H_

#include <cstdint>

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "grpcpp/support/slice.h"
#include "server/codec.h"

namespace taxel::server {

/// Turns a dense tensor into its sparse form (Tensor.nonzero_mask, core/common/nonzero_mask.h).
void SparsifyTensor(v1::Tensor* tensor);

/// Appends one SensorReading per (sensor, branch) with the planned channels for `envs` (in that
/// order) to `out`. (`num_envs`, the scene's, is unused: kept so calls read like the writer's.)
void EncodeReadings(const ReadPlan& plan, absl::Span<const int32_t> envs, int num_envs,
                    google::protobuf::RepeatedPtrField<v1::SensorReading>* out);

/// One MEASURED SensorReading per planned sensor with its history channels shaped
/// [len(envs), history, <layout>, <channel>], index 0 the newest.
void EncodeHistory(const ReadPlan& plan, int history, absl::Span<const int32_t> envs,
                   google::protobuf::RepeatedPtrField<v1::SensorReading>* out);

/// The bytes of `slices`, concatenated.
std::string Joined(const std::vector<grpc::Slice>& slices);

/// The readings of `plan` for `envs` as the server writes them (ReadingsWireWriter, as
/// ReadSensorsResponse.readings), parsed back by protobuf. Fails the test when they do not parse.
google::protobuf::RepeatedPtrField<v1::SensorReading> WrittenReadings(const ReadPlan& plan,
                                                                      absl::Span<const int32_t> envs, int num_envs);

}  // namespace taxel::server

#endif  // TAXEL_TESTS_SUPPORT_REFERENCE_READINGS_H_
