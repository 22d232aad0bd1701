// UpdateSensor: bytes → taxel.v1.UpdateSensorRequest → TaxelHandlers::UpdateSensor
// (DecodeSensorUpdate on the fixed scene → ApplySensorUpdate → EncodeSensorInfo), then two valid
// steps and a history read, so that the new gains and noise levels flow through the measured
// branch; then the fixture's levels are restored.
#include <cstdio>
#include <cstdlib>

#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

namespace {

taxel::v1::StepRequest ValidStep(double phase) {
  taxel::v1::StepRequest step;
  step.set_quat_order(taxel::v1::XYZW);
  step.set_dt(0.01);
  taxel::server::EncodeDoubles({taxel::fuzz::kFixedEnvs, taxel::fuzz::kFixedMovingLinks, 7},
                               taxel::fuzz::FixedPoses(taxel::fuzz::kFixedEnvs, phase), step.mutable_poses());
  step.mutable_read()->add_branches(taxel::v1::MEASURED);
  step.mutable_read()->add_branches(taxel::v1::GROUND_TRUTH);
  return step;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  v1::UpdateSensorRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  static const v1::StepRequest* steps[2] = {new v1::StepRequest(ValidStep(0)), new v1::StepRequest(ValidStep(1))};
  fuzz::LiveScene& live = fuzz::FixedScene(/*reported=*/false);
  if (!live.Run(&server::TaxelHandlers::UpdateSensor, request).ok()) return 0;
  for (const v1::StepRequest* step : steps) {
    const absl::Status s = live.Run(&server::TaxelHandlers::Step, *step);
    if (!s.ok()) {
      std::fprintf(stderr, "a valid step failed after an accepted update: %s\n", s.ToString().c_str());
      std::abort();
    }
  }
  v1::ReadSensorsRequest history;
  history.set_history(1);
  history.mutable_read()->add_sensors(request.sensor());
  live.Run(&server::TaxelHandlers::ReadSensors, history).IgnoreError();
  // Undo the update (a reset redraws only gains with a resample range), so that the next input
  // starts from the fixture's levels. No RPC sets a gain back to the spec's: under the scene's lock.
  const absl::Status restored = live.WithScene([](scene::Scene& scene) {
    for (const std::string& name : fuzz::FixedMeasuredSensors()) {
      sensors::MeasuredPipeline* pipe = scene.FindMutableSensor(name)->pipeline();
      const sensors::ImperfectionSpec& im = pipe->spec();
      std::vector<double> gains(scene.FindSensor(name)->num_probes(), im.probe_gain[0]);
      if (im.probe_gain.size() == gains.size()) gains = im.probe_gain;
      for (int e = 0; e < scene.num_envs(); ++e) pipe->SetGains(e, gains.data());
      pipe->SetNoise(im.noise, im.random_walk, im.bias);
    }
    return absl::OkStatus();
  });
  if (!restored.ok()) std::abort();  // the fixed scene is never deleted
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::UpdateSensorRequest)
