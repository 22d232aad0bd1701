// A step on a fuzzed scene: bytes → taxel.fuzz.Session (fuzz/session.proto: a SceneSpec and up to
// 8 requests) → CreateScene as the server does it (guards included) → each request in order:
// Step, ResetEnvs, UpdateSensor, AddSensor, RemoveSensor, ReadSensors (history too) and
// GetContactMatrix. A failed request changes nothing and the session goes on, as a client would.
#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"
#include "fuzz/session.pb.h"

namespace {

constexpr int kMaxOps = 8;  // bounds the time per input

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  fuzz::Session session;
  if (!session.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto live = fuzz::CreateScene(session.spec());
  if (!live.ok()) return 0;
  scene::Scene& scene = live->scene();
  for (int i = 0; i < session.ops_size() && i < kMaxOps; ++i) {
    const fuzz::SessionOp& op = session.ops(i);
    switch (op.op_case()) {
      case fuzz::SessionOp::kStep: fuzz::RunStep(op.step(), *live).IgnoreError(); break;
      case fuzz::SessionOp::kReset: fuzz::RunReset(op.reset(), scene).IgnoreError(); break;
      case fuzz::SessionOp::kUpdateSensor: fuzz::RunUpdateSensor(op.update_sensor(), scene).IgnoreError(); break;
      case fuzz::SessionOp::kAddSensor: fuzz::RunAddSensor(op.add_sensor(), *live).IgnoreError(); break;
      case fuzz::SessionOp::kRemoveSensor: fuzz::RunRemoveSensor(op.remove_sensor(), *live).IgnoreError(); break;
      case fuzz::SessionOp::kReadSensors: fuzz::RunReadSensors(op.read_sensors(), scene).IgnoreError(); break;
      case fuzz::SessionOp::kGetContactMatrix:
        fuzz::RunGetContactMatrix(op.get_contact_matrix(), scene).IgnoreError();
        break;
      case fuzz::SessionOp::OP_NOT_SET: break;
    }
  }
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::fuzz::Session)
