// End-to-end cases over loopback gRPC (docs/reference.md#benchmarks): a TaxelServer in this process on
// 127.0.0.1:0 with 2 evaluation threads, driven by the C++ client.
//
//   e2e_step/1env_unary, e2e_step/1env_stream  1 env × 2 pads × 16×16 KinematicTaxels; latency of
//                                              one step round trip, unit us, with p50 and p99
//   e2e_grasp_batch/unary, .../stream          the 1024-env grasp batch, unit ms per round trip,
//                                              with the C++ client's defaults: readings in the
//                                              sparse form, expanded to dense tensors on receipt
//   e2e_grasp_batch/unary_dense, .../stream_dense   the same with dense readings on the wire
//                                              (Client::Options::sparse_readings = false)
//   inproc_grasp_batch                         the same scene stepped in process in the same run
//   e2e_grasp_batch/sharded2                   the grasp batch as a ShardedScene over 2 more servers
//                                              in this process, 1 evaluation thread each, over
//                                              ShardedStepStream; alternated step by step with the
//                                              one-server stream of e2e_grasp_batch/stream (2
//                                              threads): "stream_ms" and "ratio_vs_stream"
//
// The grasp-batch records carry "ratio_vs_inproc" (gRPC round trip / in-process step, medians of
// the same run, the two alternated step by step so that both see the same machine load) and
// "wire_response_bytes" (the serialised StepResponse as sent).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>

#include "bench/bench_registry.h"
#include "bench/grasp_scenario.h"
#include "bench/scene_timing.h"
#include "core/common/check.h"
#include "core/common/executor.h"
#include "core/geometry/mesh_generators.h"
#include "core/scene/scene.h"
#include "server/codec.h"
#include "server/log.h"
#include "server/server.h"
#include "server/thread_pool.h"
#include "taxel/client.h"
#include "taxel/sharded_scene.h"

namespace taxel::bench {
namespace {

constexpr int kServerThreads = 2;

struct Harness {
  std::unique_ptr<server::TaxelServer> server;
  std::unique_ptr<Client> client;        // defaults: sparse readings, expanded
  std::unique_ptr<Client> dense_client;  // sparse_readings = false
};

// The grasp object mesh: same bytes as the in-process scenario, so the same content id.
void UploadGraspMesh(Client& client) {
  auto mesh = geometry::GeodesicSphere(0.04, 32);
  std::vector<double> v;
  std::vector<int32_t> t;
  for (const auto& p : mesh.vertices) v.insert(v.end(), {p.x(), p.y(), p.z()});
  for (const auto& tri : mesh.triangles) t.insert(t.end(), tri.begin(), tri.end());
  TAXEL_CHECK(client.UploadMesh(v, t).ok());
}

Harness& GetHarness() {
  static Harness* h = [] {
    auto* harness = new Harness();
    server::ServerOptions options;
    // TAXEL_BENCH_ADDRESS=unix:/tmp/x.sock measures a Unix-socket sidecar instead of loopback TCP.
    const char* address = std::getenv("TAXEL_BENCH_ADDRESS");
    options.address = address != nullptr ? address : "127.0.0.1:0";
    options.metrics_address = "";
    options.eval_threads = kServerThreads;
    server::SetLogLevel(server::LogLevel::kWarning);
    auto s = server::TaxelServer::Start(options);
    TAXEL_CHECK(s.ok());
    harness->server = *std::move(s);
    auto c = Client::Connect(harness->server->target());
    TAXEL_CHECK(c.ok());
    harness->client = *std::move(c);
    Client::Options dense;
    dense.target = harness->server->target();
    dense.sparse_readings = false;
    auto d = Client::Connect(dense);
    TAXEL_CHECK(d.ok());
    harness->dense_client = *std::move(d);
    UploadGraspMesh(*harness->client);
    return harness;
  }();
  return *h;
}

// Creates (once) the grasp scene with `envs` envs on the server and returns its step request.
const v1::StepRequest& GraspRequest(int envs) {
  static auto* cache = new std::map<int, v1::StepRequest>();
  if (auto it = cache->find(envs); it != cache->end()) return it->second;
  geometry::MeshStore meshes;
  GraspScenario g = MakeGraspScenario(GraspObject::kMesh20k, envs, meshes);
  g.spec.name = "bench_grasp_" + std::to_string(envs);
  v1::SceneSpec wire;
  server::EncodeSceneSpec(g.spec, &wire);
  TAXEL_CHECK(GetHarness().client->CreateScene(wire).ok());
  v1::StepRequest req;
  req.set_scene(g.spec.name);
  *req.mutable_poses() = DoubleTensor({envs, 3, 7}, g.poses);
  req.set_quat_order(v1::XYZW);
  req.set_dt(0.01);
  return cache->emplace(envs, req).first->second;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

// Server-side phase times of the last timed step (from StepResponse.timing), in ms.
struct ServerPhases {
  double queue = 0, decode = 0, evaluate = 0, encode = 0;
};
ServerPhases g_last_phases;

// Round-trip times (s) of `count` steps after 3 untimed ones. With `between`, that is called
// (untimed here) before every timed step.
std::vector<double> TimeSteps(int envs, bool stream, int count, bool dense = false,
                              const std::function<void()>& between = nullptr) {
  Client& client = dense ? *GetHarness().dense_client : *GetHarness().client;
  const v1::StepRequest& req = GraspRequest(envs);
  std::unique_ptr<StepStream> s;
  if (stream) s = client.OpenStepStream();
  auto step = [&] {
    auto r = stream ? s->Step(req) : client.Step(req);
    TAXEL_CHECK(r.ok());
    const auto& t = r->timing();
    g_last_phases = {t.queue_us() * 1e-3, t.decode_us() * 1e-3, t.evaluate_us() * 1e-3, t.encode_us() * 1e-3};
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: connection, caches
  std::vector<double> seconds;
  for (int i = 0; i < count; ++i) {
    if (between) between();
    seconds.push_back(TimeOnce(step));
  }
  if (s) TAXEL_CHECK(s->Close().ok());
  return seconds;
}

void RunLatency(Context& ctx, bool stream) {
  const int count = ctx.quick() ? 200 : 2000;
  Record r = ctx.NewRecord(kServerThreads, "us");
  r.samples = TimeSteps(1, stream, count);
  ScaleSamples(&r, 1e6);
  r.AddNumber("p50", Percentile(r.samples, 0.5));
  r.AddNumber("p99", Percentile(r.samples, 0.99));
  r.AddInt("envs", 1);
  r.AddInt("taxels", 512);
  ctx.Emit(r);
}

// The grasp batch in process: the twin of the server's scene (same spec and poses), created once,
// stepped on its own pool of the server's thread count.
struct InprocTwin {
  geometry::MeshStore meshes;
  GraspScenario scenario = MakeGraspScenario(GraspObject::kMesh20k, 1024, meshes);
  std::unique_ptr<scene::Scene> scene = MustCreate(scenario.spec, meshes);
  server::ThreadPool pool{kServerThreads};
  scene::StepInput in = XyzwStepInput(scenario.poses);
  // One step; its wall time in ms.
  double StepMs() {
    return 1e3 * TimeOnce([&] { TAXEL_CHECK(scene->Step(in, pool).ok()); });
  }
};

InprocTwin& Twin() {
  static InprocTwin* twin = [] {
    auto* t = new InprocTwin();
    t->StepMs();  // warm-up
    return t;
  }();
  return *twin;
}

// The grasp batch stepped with read.none: the round trip without the 12 MB of readings.
double NoReadMedianMs(int repeats) {
  Client& client = *GetHarness().client;
  v1::StepRequest req = GraspRequest(1024);
  req.mutable_read()->set_none(true);
  std::vector<double> ms;
  for (int i = 0; i < repeats + 1; ++i) {
    const double s = TimeOnce([&] { TAXEL_CHECK(client.Step(req).ok()); });
    if (i > 0) ms.push_back(1e3 * s);
  }
  return Median(ms);
}

// Bytes of the serialised StepResponse of the grasp batch as the server sends it.
int64_t WireResponseBytes(bool dense) {
  v1::StepRequest req = GraspRequest(1024);
  req.mutable_read()->set_sparse(!dense);
  auto r = GetHarness().dense_client->Step(req);  // (returns the response as sent)
  TAXEL_CHECK(r.ok());
  return static_cast<int64_t>(r->ByteSizeLong());
}

void RunGraspBatch(Context& ctx, bool stream, bool dense) {
  InprocTwin& twin = Twin();  // (built before the server's scene, as the timed steps expect)
  std::vector<double> inproc;
  Record r = ctx.NewRecord(kServerThreads, "ms");
  r.samples = TimeSteps(1024, stream, ctx.repeats(), dense, [&] { inproc.push_back(twin.StepMs()); });
  ScaleSamples(&r, 1e3);
  const double median = Median(r.samples);
  r.AddNumber("p50", Percentile(r.samples, 0.5));
  r.AddNumber("p99", Percentile(r.samples, 0.99));
  r.AddNumber("steps_per_s", 1e3 / median);
  r.AddInt("envs", 1024);
  r.AddInt("response_bytes", 2LL * 1024 * 512 * 3 * 4);  // the readings, dense
  r.AddString("readings_form", dense ? "dense" : "sparse");
  r.AddInt("wire_response_bytes", WireResponseBytes(dense));
  r.AddNumber("inproc_ms", Median(inproc));
  r.AddNumber("server_evaluate_ms", g_last_phases.evaluate);
  r.AddNumber("server_encode_ms", g_last_phases.encode);
  r.AddNumber("server_decode_ms", g_last_phases.decode);
  r.AddNumber("server_queue_ms", g_last_phases.queue);
  r.AddNumber("read_none_ms", NoReadMedianMs(ctx.repeats()));
  r.AddNumber("ratio_vs_inproc", median / Median(inproc));
  ctx.Emit(r);
}

// Two servers of one evaluation thread each and the 1024-env grasp batch sharded over them.
struct ShardedHarness {
  std::vector<std::unique_ptr<server::TaxelServer>> servers;
  std::vector<std::unique_ptr<Client>> clients;
  std::unique_ptr<ShardedScene> scene;
  v1::StepRequest request;
};

ShardedHarness& GetSharded() {
  static ShardedHarness* h = [] {
    auto* harness = new ShardedHarness();
    std::vector<Client*> clients;
    for (int i = 0; i < 2; ++i) {
      server::ServerOptions options;
      options.address = "127.0.0.1:0";
      options.metrics_address = "";
      options.eval_threads = 1;
      auto s = server::TaxelServer::Start(options);
      TAXEL_CHECK(s.ok());
      auto c = Client::Connect((*s)->target());
      TAXEL_CHECK(c.ok());
      UploadGraspMesh(**c);
      clients.push_back(c->get());
      harness->servers.push_back(*std::move(s));
      harness->clients.push_back(*std::move(c));
    }
    geometry::MeshStore meshes;
    GraspScenario g = MakeGraspScenario(GraspObject::kMesh20k, 1024, meshes);
    g.spec.name = "bench_grasp_sharded";
    v1::SceneSpec wire;
    server::EncodeSceneSpec(g.spec, &wire);
    auto scene = ShardedScene::Create(clients, wire);
    TAXEL_CHECK(scene.ok());
    harness->scene = *std::move(scene);
    *harness->request.mutable_poses() = DoubleTensor({1024, 3, 7}, g.poses);
    harness->request.set_quat_order(v1::XYZW);
    harness->request.set_dt(0.01);
    return harness;
  }();
  return *h;
}

void RunSharded(Context& ctx) {
  const v1::StepRequest& single_req = GraspRequest(1024);
  ShardedHarness& h = GetSharded();
  auto sharded = h.scene->OpenStepStream();
  auto single = GetHarness().client->OpenStepStream();
  auto sharded_step = [&] { TAXEL_CHECK(sharded->Step(h.request).ok()); };
  auto single_step = [&] { TAXEL_CHECK(single->Step(single_req).ok()); };
  for (int i = 0; i < 3; ++i) {  // warm-up: connections, caches
    sharded_step();
    single_step();
  }
  // Alternated step by step, so that both see the same machine load.
  std::vector<double> one_server;
  Record r = ctx.NewRecord(2, "ms");
  for (int i = 0; i < ctx.repeats(); ++i) {
    r.samples.push_back(TimeOnce(sharded_step));
    one_server.push_back(1e3 * TimeOnce(single_step));
  }
  TAXEL_CHECK(sharded->Close().ok());
  TAXEL_CHECK(single->Close().ok());
  ScaleSamples(&r, 1e3);
  r.AddNumber("p50", Percentile(r.samples, 0.5));
  r.AddNumber("p99", Percentile(r.samples, 0.99));
  r.AddInt("envs", 1024);
  r.AddInt("servers", 2);
  r.AddInt("threads_per_server", 1);
  r.AddNumber("stream_ms", Median(one_server));
  r.AddNumber("ratio_vs_stream", Median(r.samples) / Median(one_server));
  ctx.Emit(r);
}

TAXEL_BENCH_CASE("e2e_step/1env_unary", [](Context& ctx) { RunLatency(ctx, false); });
TAXEL_BENCH_CASE("e2e_step/1env_stream", [](Context& ctx) { RunLatency(ctx, true); });
TAXEL_BENCH_CASE("e2e_grasp_batch/unary", [](Context& ctx) { RunGraspBatch(ctx, false, false); });
TAXEL_BENCH_CASE("e2e_grasp_batch/stream", [](Context& ctx) { RunGraspBatch(ctx, true, false); });
TAXEL_BENCH_CASE("e2e_grasp_batch/unary_dense", [](Context& ctx) { RunGraspBatch(ctx, false, true); });
TAXEL_BENCH_CASE("e2e_grasp_batch/stream_dense", [](Context& ctx) { RunGraspBatch(ctx, true, true); });
TAXEL_BENCH_CASE("e2e_grasp_batch/sharded2", RunSharded);
TAXEL_BENCH_CASE("inproc_grasp_batch", [](Context& ctx) {
  Record r = ctx.NewRecord(kServerThreads, "ms");
  for (int i = 0; i < ctx.repeats(); ++i) r.samples.push_back(Twin().StepMs());
  r.AddInt("envs", 1024);
  ctx.Emit(r);
});

}  // namespace
}  // namespace taxel::bench
