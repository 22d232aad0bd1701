// A step on a fuzzed scene: bytes → taxel.fuzz.Session (fuzz/session.proto: a SceneSpec and up to
// 8 requests) → TaxelHandlers::CreateScene (guards included) → each request in order through its
// handler, addressed to the session's scene: Step, ResetEnvs, UpdateSensor, AddSensor,
// RemoveSensor, ReadSensors (history too) and GetContactMatrix. A failed request changes nothing
// and the session goes on, as a client would.
#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

namespace {

constexpr int kMaxOps = 8;  // bounds the time per input

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  fuzz::Session session;
  if (!session.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto live = fuzz::CreateScene(session.spec());
  if (!live.ok()) return 0;
  for (int i = 0; i < session.ops_size() && i < kMaxOps; ++i) fuzz::RunSessionOp(session.ops(i), *live).IgnoreError();
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::fuzz::Session)
