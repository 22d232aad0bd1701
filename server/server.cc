#include "server/server.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "server/log.h"

namespace taxel::server {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) return InvalidFieldError(what, absl::StrCat("cannot read '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

absl::Status ValidateReplicaId(const std::string& replica_id) {
  if (replica_id.empty()) {
    return absl::InvalidArgumentError("replica_id: must not be empty (and the host name could not be read)");
  }
  if (replica_id.size() > kMaxReplicaIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("replica_id: ", replica_id.size(), " characters, at most ", kMaxReplicaIdBytes, " allowed"));
  }
  for (size_t i = 0; i < replica_id.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(replica_id[i]);
    if (c < 0x21 || c > 0x7E) {
      return absl::InvalidArgumentError(absl::StrCat("replica_id: character ", i, " (byte 0x",
                                                     absl::Hex(c, absl::kZeroPad2),
                                                     ") is not printable ASCII; spaces and control characters are "
                                                     "not allowed"));
    }
  }
  return absl::OkStatus();
}

int64_t LargestMeshUploadBytes(int64_t max_triangles) {
  // A closed mesh of T triangles has T/2 + 2 vertices (Euler, genus 0): 3 int32 per triangle and
  // 3 float64 per vertex, plus the two tensors' framing.
  return max_triangles * 12 + (max_triangles / 2 + 2) * 24 + 256;
}

int64_t ResolveMeshLimit(const Limits& limits) {
  if (limits.max_triangles_per_mesh > 0) return limits.max_triangles_per_mesh;
  // LargestMeshUploadBytes(T) = 24·T + 304 for even T: the largest even T within the message.
  const int64_t fits = (limits.max_message_bytes - 304) / 24 / 2 * 2;
  return std::clamp<int64_t>(fits, 1, kDefaultMaxTrianglesPerMesh);
}

absl::Status ValidateMeshLimits(const Limits& limits) {
  const int64_t need = LargestMeshUploadBytes(limits.max_triangles_per_mesh);
  if (need <= limits.max_message_bytes) return absl::OkStatus();
  return InvalidFieldError(
      "max_triangles_per_mesh",
      absl::StrCat("a closed mesh of ", limits.max_triangles_per_mesh, " triangles (float64 vertices) takes ", need,
                   " bytes to upload, over --max_message_bytes=", limits.max_message_bytes,
                   "; lower --max_triangles_per_mesh or raise --max_message_bytes"));
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

absl::StatusOr<std::unique_ptr<TaxelServer>> TaxelServer::Start(ServerOptions options, TlsOptions tls,
                                                                std::map<std::string, std::string> tokens) {
  std::unique_ptr<TaxelServer> s(new TaxelServer());
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (options.eval_threads <= 0) options.eval_threads = hw;
  if (options.request_threads <= 0) options.request_threads = std::max(2, options.eval_threads);
  if (options.replica_id.empty()) options.replica_id = HostName();
  if (absl::Status valid = ValidateReplicaId(options.replica_id); !valid.ok()) return valid;
  options.limits.max_triangles_per_mesh = ResolveMeshLimit(options.limits);
  if (absl::Status valid = ValidateMeshLimits(options.limits); !valid.ok()) return valid;
  if (options.limits.max_grid_build_queries <= 0) {
    return InvalidFieldError("max_grid_build_queries",
                             absl::StrCat("expected > 0, got ", options.limits.max_grid_build_queries));
  }
  s->options_ = options;

  // Security settings fail closed: a half-configured TLS never falls back to plaintext.
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return tls.cert_file.empty() ? InvalidFieldError("tls_key", "set without --tls_cert; TLS needs both")
                                 : InvalidFieldError("tls_cert", "set without --tls_key; TLS needs both");
  }
  if (!tls.client_ca_file.empty() && tls.cert_file.empty()) {
    return InvalidFieldError("tls_client_ca",
                             "mutual TLS needs the server's own certificate too (--tls_cert and --tls_key)");
  }
  options.limits.max_memory_bytes = ResolveMemoryLimit(options.limits.max_memory_bytes);
  s->options_ = options;
  std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
  if (!tls.cert_file.empty()) {
    auto cert = ReadFile(tls.cert_file, "tls_cert");
    if (!cert.ok()) return cert.status();
    auto key = ReadFile(tls.key_file, "tls_key");
    if (!key.ok()) return key.status();
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    if (!tls.client_ca_file.empty()) {
      auto ca = ReadFile(tls.client_ca_file, "tls_client_ca");
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *ca;
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    creds = grpc::SslServerCredentials(ssl);
  }

  if (!options.metrics_address.empty()) {
    auto metrics = MakePrometheusMetrics(options.metrics_address, &s->metrics_port_);
    if (!metrics.ok()) return metrics.status();
    s->metrics_ = *std::move(metrics);
  } else {
    s->metrics_ = std::make_unique<NullMetrics>();
  }
  s->meshes_ = std::make_unique<geometry::MeshStore>();
  s->registry_ = std::make_unique<SceneRegistry>(s->options_.limits, s->meshes_.get());
  s->eval_pool_ = std::make_unique<ThreadPool>(options.eval_threads);
  // Mesh grids build in parallel on the evaluation pool, each within the query limit.
  s->meshes_->set_grid_builds(s->eval_pool_.get(), static_cast<double>(options.limits.max_grid_build_queries));
  // The queue-depth gauge follows every change of the queue (not only submissions), so an idle
  // server reads 0.
  s->executor_ = std::make_unique<RequestExecutor>(
      options.request_threads, options.max_queue,
      [metrics = s->metrics_.get()](size_t depth) { metrics->SetExecutorQueueDepth(static_cast<int64_t>(depth)); });
  const bool auth = !tokens.empty();
  if (!options.ui_address.empty()) {
    // Its own threads: a slow or hostile viewer client never takes a gRPC handler.
    s->viewer_ = std::make_unique<Viewer>(s->registry_.get(), tokens);
    auto ui = HttpServer::Start(
        options.ui_address, [viewer = s->viewer_.get()](const HttpRequest& r) { return viewer->Handle(r); }, {},
        "ui_address");
    if (!ui.ok()) return ui.status();
    s->ui_ = *std::move(ui);
  }
  TaxelService::Deps deps{&s->options_,       s->meshes_.get(),    s->registry_.get(), s->metrics_.get(),
                          s->executor_.get(), s->eval_pool_.get(), std::move(tokens)};
  s->service_ = std::make_unique<TaxelService>(std::move(deps));

  grpc::EnableDefaultHealthCheckService(true);
  // The plugin is process-wide once initialised; tests of both settings run in separate processes.
  if (options.reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const int max_bytes = static_cast<int>(std::min<int64_t>(options.limits.max_message_bytes, INT32_MAX));
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  // Large batched responses (12 MB for 1024 envs × 512 taxels × force+torque): a stream window
  // as large as a message, so that one response is not paced by window updates.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, max_bytes);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, 1 << 24);
  builder.AddChannelArgument(GRPC_ARG_TCP_READ_CHUNK_SIZE, 1 << 20);
  builder.AddChannelArgument(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, 16 << 20);
  builder.AddListeningPort(options.address, creds, &s->port_);
  builder.RegisterService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || (!absl::StartsWith(options.address, "unix:") && s->port_ == 0)) {
    return FieldError(absl::StatusCode::kUnavailable, "address",
                      absl::StrCat("cannot listen on '", options.address, "'"));
  }
  auto* health = s->server_->GetHealthCheckService();
  for (const char* name : {"", "liveness", "readiness", "taxel.v1.Taxel"}) health->SetServingStatus(name, true);
  Log(LogLevel::kInfo, "server_started",
      {{"address", options.address},
       {"port", std::to_string(s->port_)},
       {"metrics_port", std::to_string(s->metrics_port_)},
       {"ui_port", std::to_string(s->ui_port())},
       {"eval_threads", std::to_string(options.eval_threads)},
       {"request_threads", std::to_string(options.request_threads)},
       {"tls", tls.cert_file.empty() ? "off" : "on"},
       {"auth", auth ? "bearer" : "off"},
       {"replica_id", options.replica_id}});
  return s;
}

TaxelServer::~TaxelServer() {
  // A Start that failed may leave no grpc::Server (address in use) or no service (metrics or TLS
  // setup failed): nothing to shut down then.
  if (!shut_down_ && server_ != nullptr) Shutdown(0);
}

std::string TaxelServer::target() const {
  if (absl::StartsWith(options_.address, "unix:")) return options_.address;
  return absl::StrCat("127.0.0.1:", port_);
}

void TaxelServer::Drain() {
  if (server_) server_->GetHealthCheckService()->SetServingStatus("readiness", false);
  service_->Drain();
  Log(LogLevel::kInfo, "server_draining", {});
}

void TaxelServer::Shutdown(double grace_seconds) {
  if (shut_down_) return;
  shut_down_ = true;
  if (ui_) ui_->Stop();  // the viewer's connections end first (each bounded by its timeouts)
  Drain();
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, grace_seconds) * 1e6));
  // At the deadline the calls still waiting for a handler are answered UNAVAILABLE and never run;
  // gRPC's Shutdown then only waits for the calls already running.
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::thread refuser([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_until(lock, deadline, [&] { return done; });
    lock.unlock();
    executor_->RefuseQueued();
  });
  server_->Shutdown(deadline);
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_one();
  refuser.join();
  executor_.reset();  // refuses anything left, joins
  Log(LogLevel::kInfo, "server_stopped", {});
}

void TaxelServer::Wait() { server_->Wait(); }

}  // namespace taxel::server
