// Step: bytes → taxel.v1.StepRequest → TaxelHandlers::Step (DecodeStep → PlanRead → the
// response-size check → Scene::Step on a 2-worker pool → the response bytes), on the fixed scene
// (fuzz_support.h: every sensor kind, every imperfection, an estimated contact matrix). The request runs twice, so that
// the second step sees the first one's state (velocities, delays, hysteresis, triggers).
// The scene is built once and reset before every input (fuzz::FixedScene).
#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  v1::StepRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  fuzz::LiveScene& live = fuzz::FixedScene(/*reported=*/false);
  if (live.Run(&server::TaxelHandlers::Step, request).ok())
    live.Run(&server::TaxelHandlers::Step, request).IgnoreError();
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::StepRequest)
