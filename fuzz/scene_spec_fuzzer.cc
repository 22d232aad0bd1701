// CreateScene's first stage: bytes → taxel.v1.SceneSpec → server::DecodeSceneSpec.
// Invariant checked: a spec the server decodes survives the clients' encoder (EncodeSceneSpec)
// and decodes again; otherwise a client could not send back a spec it holds.
#include <cstdio>
#include <cstdlib>

#include "fuzz/fuzz_support.h"
#include "fuzz/proto_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taxel;  // NOLINT: a fuzz entry point
  v1::SceneSpec spec;
  if (!spec.ParseFromArray(data, static_cast<int>(size))) return 0;
  auto decoded = server::DecodeSceneSpec(spec);
  if (!decoded.ok()) return 0;
  v1::SceneSpec encoded;
  server::EncodeSceneSpec(*decoded, &encoded);
  auto again = server::DecodeSceneSpec(encoded);
  if (!again.ok()) {
    std::fprintf(stderr, "re-encoded spec no longer decodes: %s\n", again.status().ToString().c_str());
    std::abort();
  }
  return 0;
}

TAXEL_FUZZ_PROTO_MUTATOR(taxel::v1::SceneSpec)
