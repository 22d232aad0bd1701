// AddSensor: bytes → taxel.v1.SensorSpec → TaxelHandlers::AddSensor (DecodeSensorSpec →
// SceneRegistry::CheckAddSensor, the probe and memory guards → Scene::AddSensor on the fixed
// scene → EncodeSensorInfo), then two valid steps that evaluate the new sensor, a read of its
// history, and RemoveSensor, each through its handler.
#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  v1::SensorSpec sensor;
  if (!sensor.ParseFromArray(data, static_cast<int>(size))) return 0;
  fuzz::LiveScene& live = fuzz::FixedScene(/*reported=*/false);
  if (!fuzz::AddSensor(sensor, live).ok()) return 0;
  for (double phase : {0.0, 1.0}) {
    v1::StepRequest step;
    step.set_quat_order(v1::XYZW);
    step.set_dt(0.01);
    server::EncodeDoubles({fuzz::kFixedEnvs, fuzz::kFixedMovingLinks, 7}, fuzz::FixedPoses(fuzz::kFixedEnvs, phase),
                          step.mutable_poses());
    step.mutable_read()->add_sensors(sensor.name());
    step.mutable_read()->set_sparse(phase > 0);
    live.Run(&server::TaxelHandlers::Step, step).IgnoreError();  // may exceed the message limit: refused, fine
  }
  v1::ReadSensorsRequest history;
  history.set_history(sensor.imperfections().history_length());
  history.mutable_read()->add_sensors(sensor.name());
  live.Run(&server::TaxelHandlers::ReadSensors, history).IgnoreError();
  v1::RemoveSensorRequest remove;
  remove.set_name(sensor.name());
  live.Run(&server::TaxelHandlers::RemoveSensor, remove).IgnoreError();
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::SensorSpec)
