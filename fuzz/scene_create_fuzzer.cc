// CreateScene: bytes → taxel.v1.SceneSpec → TaxelHandlers::CreateScene → DecodeSceneSpec →
// SceneRegistry::Create (the server's name, env, probe and memory guards under FuzzLimits()) →
// Scene::Create → EncodeSceneInfo, with the fixture meshes uploaded (their ids are in the
// dictionary and the seeds).
#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  taxel::v1::SceneSpec spec;
  if (!spec.ParseFromArray(data, static_cast<int>(size))) return 0;
  taxel::fuzz::CreateScene(spec).IgnoreError();
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::SceneSpec)
