// Step with reported contacts: bytes → taxel.v1.StepRequest (with ReportedContacts) →
// TaxelHandlers::Step → DecodeStep → Scene::Step on the fixed scene whose contact matrix is
// REPORTED (indices, envs and forces come straight from the request) → the response with the
// contact matrix, then GetContactMatrix. Runs twice, like step_fuzzer; the scene is built once and
// reset before every input.
#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  v1::StepRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  fuzz::LiveScene& live = fuzz::FixedScene(/*reported=*/true);
  if (live.Run(&server::TaxelHandlers::Step, request).ok()) {
    live.Run(&server::TaxelHandlers::Step, request).IgnoreError();
    v1::GetContactMatrixRequest all;
    all.set_friction(true);
    live.Run(&server::TaxelHandlers::GetContactMatrix, all).IgnoreError();
  }
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::StepRequest)
