#include "tests/support/reference_readings.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/common/nonzero_mask.h"
#include "gtest/gtest.h"
#include "server/step_wire.h"

namespace taxel::server {
namespace {

// Appends the probe axes of `layout` ([rows, cols] or [n]) and, for 3-vectors, the component axis.
void AppendProbeShape(const sensors::ProbeLayout& layout, int width, v1::Tensor* t) {
  for (int64_t d : layout.shape()) t->add_shape(d);
  if (width == 3) t->add_shape(3);
}

}  // namespace

void SparsifyTensor(v1::Tensor* tensor) {
  const size_t item = DTypeSize(tensor->dtype());
  const std::string dense = std::move(*tensor->mutable_data());
  const size_t n = dense.size() / item;
  std::string mask(NonzeroMaskBytes(n), '\0');
  const size_t count = BuildNonzeroMask(dense.data(), n, item, reinterpret_cast<uint8_t*>(mask.data()));
  std::string packed(count * item, '\0');
  PackNonzero(dense.data(), n, item, reinterpret_cast<const uint8_t*>(mask.data()), packed.data());
  tensor->set_data(std::move(packed));
  tensor->set_nonzero_mask(std::move(mask));
}

void EncodeReadings(const ReadPlan& plan, absl::Span<const int32_t> envs, int /*num_envs*/,
                    google::protobuf::RepeatedPtrField<v1::SensorReading>* out) {
  for (const ReadPlan::Item& item : plan.items) {
    const sensors::Sensor& s = *item.sensor;
    for (sensors::Branch b : plan.branches) {
      v1::SensorReading* r = out->Add();
      r->set_sensor(s.spec().name);
      r->set_sensor_id(s.id().value());
      r->set_branch(b == sensors::Branch::kMeasured ? v1::MEASURED : v1::GROUND_TRUTH);
      // The output arrays themselves: outputs() first copies readings still in a delay ring
      // into them, so that ChannelOutput points at them.
      s.outputs(b);
      for (sensors::Channel c : item.channels) {
        v1::Tensor& t = (*r->mutable_channels())[std::string(sensors::ChannelName(c))];
        const ChannelArray a = ChannelOutput(s, b, c);
        t.set_dtype(a.dtype);
        t.add_shape(static_cast<int64_t>(envs.size()));
        for (int64_t d : a.probe_shape) t.add_shape(d);
        std::string* data = t.mutable_data();
        for (int32_t e : envs) data->append(a.data + a.bytes_per_env * e, a.bytes_per_env);
        if (plan.sparse) SparsifyTensor(&t);
      }
    }
  }
}

void EncodeHistory(const ReadPlan& plan, int history, absl::Span<const int32_t> envs,
                   google::protobuf::RepeatedPtrField<v1::SensorReading>* out) {
  for (const ReadPlan::Item& item : plan.items) {
    const sensors::Sensor& s = *item.sensor;
    const auto& layout = s.layout();
    v1::SensorReading* r = out->Add();
    r->set_sensor(s.spec().name);
    r->set_sensor_id(s.id().value());
    r->set_branch(v1::MEASURED);
    for (sensors::Channel c : s.history_channels()) {
      if (std::find(item.channels.begin(), item.channels.end(), c) == item.channels.end()) continue;
      v1::Tensor& t = (*r->mutable_channels())[std::string(sensors::ChannelName(c))];
      const int width = sensors::ChannelWidth(c);
      t.set_dtype(v1::FLOAT32);
      t.add_shape(static_cast<int64_t>(envs.size()));
      t.add_shape(history);
      AppendProbeShape(layout, width, &t);
      const size_t per_sample = static_cast<size_t>(layout.size()) * width;
      std::vector<float> values(per_sample * envs.size() * history);
      float* dst = values.data();
      for (int32_t e : envs) {
        for (int h = 0; h < history; ++h, dst += per_sample) s.CopyHistory(e, h, c, dst);
      }
      t.set_data(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
      if (plan.sparse) SparsifyTensor(&t);
    }
  }
}

std::string Joined(const std::vector<grpc::Slice>& slices) {
  std::string out;
  for (const grpc::Slice& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

google::protobuf::RepeatedPtrField<v1::SensorReading> WrittenReadings(const ReadPlan& plan,
                                                                      absl::Span<const int32_t> envs, int num_envs) {
  const ReadingsWireWriter writer(v1::ReadSensorsResponse::kReadingsFieldNumber, PlannedReadings(plan), plan.sparse,
                                  envs, num_envs);
  v1::ReadSensorsResponse parsed;
  EXPECT_TRUE(parsed.ParseFromString(Joined(writer.Slices(""))));
  return parsed.readings();
}

}  // namespace taxel::server
