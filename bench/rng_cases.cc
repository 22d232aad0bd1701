// Micro cases for the counter-based generator of core/common/rng.h, single-threaded:
//  - rng/normals: FillStandardNormals in 512-value pieces (the measured pipeline's chunk), 2^22
//    normals per repeat, unit ms, with "ns_per_draw";
//  - rng/blocks: FillBlocks, 2^20 Philox blocks per repeat, unit ms, with "ns_per_block".
#include <cstdint>
#include <vector>

#include "bench/bench_registry.h"
#include "core/common/rng.h"

namespace taxel::bench {
namespace {

constexpr size_t kNormals = size_t{1} << 22;
constexpr size_t kPiece = 512;
constexpr size_t kBlocks = size_t{1} << 20;

void RunNormals(Context& ctx) {
  const Philox4x32 rng(11, 106);
  std::vector<float> out(kPiece);
  double sink = 0;
  Record r = ctx.NewRecord(1, "ms");
  r.samples = TimeRepeats(ctx.repeats(), [&] {
    // Keyed like the pipeline: (sensor, env, step) per piece sequence, offsets within a sample.
    for (size_t done = 0; done < kNormals; done += kPiece) {
      const uint32_t env = static_cast<uint32_t>(done / 3072);
      FillStandardNormals(rng, 0, env, 1, out.data(), kPiece, done % 3072 / kPiece * kPiece);
      sink += out[done % kPiece];
    }
  });
  ScaleSamples(&r, 1e3);
  r.AddInt("draws", static_cast<int64_t>(kNormals));
  r.AddNumber("ns_per_draw", Median(r.samples) * 1e6 / kNormals);
  r.AddNumber("checksum", sink);  // keeps the fills observable
  ctx.Emit(r);
}

void RunBlocks(Context& ctx) {
  const Philox4x32 rng(11, 101);
  std::vector<uint32_t> out(4 * 1024);
  uint64_t sink = 0;
  Record r = ctx.NewRecord(1, "ms");
  r.samples = TimeRepeats(ctx.repeats(), [&] {
    for (size_t done = 0; done < kBlocks; done += 1024) {
      FillBlocks(rng, 0, static_cast<uint32_t>(done >> 10), 0, 1, out.data(), 1024);
      sink += out[done % 4096];
    }
  });
  ScaleSamples(&r, 1e3);
  r.AddInt("blocks", static_cast<int64_t>(kBlocks));
  r.AddNumber("ns_per_block", Median(r.samples) * 1e6 / kBlocks);
  r.AddNumber("checksum", static_cast<double>(sink % 1000003));
  ctx.Emit(r);
}

TAXEL_BENCH_CASE("rng/normals", RunNormals);
TAXEL_BENCH_CASE("rng/blocks", RunBlocks);

}  // namespace
}  // namespace taxel::bench
