// Server configuration: addresses, threads, limits. Filled from flags by main, directly by tests.
#ifndef TAXEL_SERVER_OPTIONS_H_
#define TAXEL_SERVER_OPTIONS_H_

#include <cstdint>
#include <string>

namespace taxel::server {

/// The triangle limit a server with the default 64 MiB messages resolves to.
inline constexpr int64_t kDefaultMaxTrianglesPerMesh = 2'000'000;

struct Limits {
  int64_t max_message_bytes = 64LL << 20;  ///< largest request or response
  int32_t max_scenes = 256;                ///< per server
  int32_t max_scenes_per_tenant = 0;       ///< 0: only the server's limit
  int32_t max_envs_per_scene = 65536;
  int64_t max_probes_per_scene = 64LL << 20;  ///< num_envs × probes over all sensors
  /// A closed mesh this large must upload in one message of max_message_bytes (the server refuses
  /// to start otherwise). 0: the largest that fits, at most kDefaultMaxTrianglesPerMesh, resolved
  /// when the server starts (2M triangles take 48 MB with float64 vertices).
  int64_t max_triangles_per_mesh = 0;
  /// Scenes + meshes + reservations in flight. 0: three quarters of the memory the process may
  /// use (cgroup limit or MemTotal), resolved when the server starts.
  int64_t max_memory_bytes = 0;
  int64_t max_memory_bytes_per_tenant = 0;  ///< 0: only the server's limit
  /// Exact distance queries one mesh grid build may make (its work: the cell-size search and the
  /// nodes, core/geometry/mesh_sdf_grid_cost.h), refused before they are made. Measured on 2
  /// threads: a 200k-triangle sphere at 1e-4 m takes 4.5e5 (band 5 mm, 0.7 s) to 1.1e6 (band 2 mm,
  /// 1.0 s) at 0.6 to 1.1 M queries/s; an 80 × 60 × 40 mm box at 2e-4 m 2.2e7 (2.2 s, its queries
  /// far cheaper). The default takes those and bounds a build of a large mesh to tens of seconds.
  int64_t max_grid_build_queries = 30'000'000;
};

struct ServerOptions {
  /// gRPC listening address: "host:port" (port 0 picks one) or "unix:/path/to.sock". This machine
  /// only by default; a container or cluster passes 0.0.0.0 explicitly (with tokens and TLS).
  std::string address = "127.0.0.1:50051";
  /// Prometheus /metrics address ("host:port"); empty disables the endpoint.
  std::string metrics_address = "127.0.0.1:9464";
  /// Live viewer address ("host:port", IPv4 or localhost; port 0 picks one): the page and its JSON
  /// API over plain HTTP (server/viewer.h). Empty (the default) disables it.
  std::string ui_address;
  int eval_threads = 0;     ///< sensor evaluation threads; 0 = hardware concurrency
  int request_threads = 0;  ///< request handler threads; 0 = max(2, eval_threads)
  size_t max_queue = 1024;  ///< requests waiting for a handler thread
  Limits limits;
  double shutdown_grace_seconds = 10;  ///< in-flight requests get this long after SIGTERM
  bool reflection = true;              ///< serve gRPC server reflection
  /// This replica's identity, returned by GetServerInfo (clients place scenes by it). Empty: the
  /// host name, resolved by TaxelServer::Start; either way checked by ValidateReplicaId.
  std::string replica_id;
};

/// Longest replica id accepted (a Kubernetes pod name is at most 63 characters).
inline constexpr size_t kMaxReplicaIdBytes = 128;

}  // namespace taxel::server

#endif  // TAXEL_SERVER_OPTIONS_H_
