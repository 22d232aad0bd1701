// A running Taxel server: gRPC service + health + reflection + metrics + executors. Used by
// taxel-server's main and by the integration tests (which bind port 0).
#ifndef TAXEL_SERVER_SERVER_H_
#define TAXEL_SERVER_SERVER_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/common/executor.h"
#include "core/geometry/mesh_store.h"
#include "grpcpp/server.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/request_executor.h"
#include "server/scene_registry.h"
#include "server/service.h"
#include "server/thread_pool.h"
#include "server/viewer.h"

namespace taxel::server {

struct TlsOptions {
  std::string cert_file, key_file;  ///< server certificate chain and key (PEM); empty: plaintext
  std::string client_ca_file;       ///< if set, clients must present a certificate (mutual TLS)
};

/// Checks a replica id (ServerOptions::replica_id once resolved): 1 to kMaxReplicaIdBytes
/// characters, each printable ASCII other than space (0x21–0x7E). INVALID_ARGUMENT naming
/// `replica_id` and the rule otherwise.
absl::Status ValidateReplicaId(const std::string& replica_id);

/// Bytes of the UploadMesh request of a closed mesh with `max_triangles` triangles and float64
/// vertices (T/2 + 2 of them): what one message must hold for a mesh at the triangle limit.
int64_t LargestMeshUploadBytes(int64_t max_triangles);
/// limits.max_triangles_per_mesh when set (> 0), else the largest closed mesh that fits in one
/// message (LargestMeshUploadBytes <= max_message_bytes), at most kDefaultMaxTrianglesPerMesh.
int64_t ResolveMeshLimit(const Limits& limits);
/// INVALID_ARGUMENT naming --max_triangles_per_mesh when a mesh at that limit would not fit in
/// one message of --max_message_bytes (TaxelServer::Start refuses such settings).
absl::Status ValidateMeshLimits(const Limits& limits);

/// This machine's host name (gethostname), "" when it cannot be read.
std::string HostName();

class TaxelServer {
 public:
  /// Starts listening. Errors: UNAVAILABLE when an address cannot be bound, INVALID_ARGUMENT for
  /// unreadable TLS files or an invalid replica id (an empty one is first replaced by HostName()).
  static absl::StatusOr<std::unique_ptr<TaxelServer>> Start(ServerOptions options, TlsOptions tls = {},
                                                            std::map<std::string, std::string> tokens = {});
  ~TaxelServer();

  /// The TCP port bound (for "host:0"), 0 for a unix socket.
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  /// The live viewer's TCP port (ServerOptions::ui_address), 0 when it is off.
  int ui_port() const { return ui_ ? ui_->port() : 0; }
  /// A client target for this server ("127.0.0.1:<port>" or the unix address).
  std::string target() const;
  /// Requests waiting for a request thread now (what taxel_executor_queue_depth reports).
  size_t queued_requests() const { return executor_->queue_depth(); }

  /// readiness → NOT_SERVING, new scenes refused, open streams ended with UNAVAILABLE.
  void Drain();
  /// Drain(), then stop accepting calls and give in-flight ones `grace_seconds`.
  void Shutdown(double grace_seconds);
  /// Blocks until Shutdown completes.
  void Wait();

 private:
  TaxelServer() = default;
  ServerOptions options_;
  std::unique_ptr<geometry::MeshStore> meshes_;
  std::unique_ptr<SceneRegistry> registry_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<ThreadPool> eval_pool_;
  std::unique_ptr<RequestExecutor> executor_;
  std::unique_ptr<TaxelService> service_;
  std::unique_ptr<grpc::Server> server_;
  // The viewer reads registry_: declared after it, so destroyed (stopped) before it.
  std::unique_ptr<Viewer> viewer_;
  std::unique_ptr<HttpServer> ui_;
  int port_ = 0, metrics_port_ = 0;
  bool shut_down_ = false;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_SERVER_H_
