// taxel-server: the Taxel gRPC service.
#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/flags_help.h"
#include "server/log.h"
#include "server/server.h"
#include "server/tokens.h"
#include "server/version.h"

// Every default is ServerOptions' own (server/options.h): written once.
static const taxel::server::ServerOptions kDefaults;

ABSL_FLAG(std::string, address, kDefaults.address, "gRPC address: host:port, or unix:/path/to.sock");
ABSL_FLAG(std::string, metrics_address, kDefaults.metrics_address,
          "Prometheus /metrics address (host:port); empty disables");
ABSL_FLAG(std::string, ui_address, kDefaults.ui_address,
          "live viewer (web page and JSON API, plain HTTP) address, host:port; empty disables. With "
          "--auth_tokens_file every request needs the token. Bind it to 127.0.0.1 or put it behind a TLS proxy");
ABSL_FLAG(int, threads, kDefaults.eval_threads, "sensor evaluation threads (0 = all cores)");
ABSL_FLAG(int, request_threads, kDefaults.request_threads, "request handler threads (0 = max(2, threads))");
ABSL_FLAG(int, max_queue, static_cast<int>(kDefaults.max_queue),
          "requests waiting for a handler before RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_message_bytes, kDefaults.limits.max_message_bytes, "largest request or response, bytes");
ABSL_FLAG(int, max_scenes, kDefaults.limits.max_scenes, "scenes per server");
ABSL_FLAG(int, max_envs_per_scene, kDefaults.limits.max_envs_per_scene, "envs per scene");
ABSL_FLAG(int64_t, max_probes_per_scene, kDefaults.limits.max_probes_per_scene,
          "num_envs x probes over all sensors of a scene");
ABSL_FLAG(int64_t, max_triangles_per_mesh, kDefaults.limits.max_triangles_per_mesh, "triangles per uploaded mesh; 0 = the largest closed mesh that fits in --max_message_bytes, "
          "at most 2000000");
ABSL_FLAG(int64_t, max_memory_bytes, kDefaults.limits.max_memory_bytes,
          "bytes held by scenes and meshes, server-wide (0 = three quarters of the memory the process may use: the "
          "cgroup limit or the machine's)");
ABSL_FLAG(int, max_scenes_per_tenant, kDefaults.limits.max_scenes_per_tenant,
          "scenes per tenant (0 = only --max_scenes)");
ABSL_FLAG(int64_t, max_memory_bytes_per_tenant, kDefaults.limits.max_memory_bytes_per_tenant,
          "bytes held by one tenant's scenes and meshes (0 = only --max_memory_bytes)");
ABSL_FLAG(int64_t, max_grid_build_queries, kDefaults.limits.max_grid_build_queries,
          "exact distance queries one mesh grid build may make (UploadMesh grid, or a GRID sensor's first use); "
          "a build that would need more is refused with RESOURCE_EXHAUSTED before it makes them");
ABSL_FLAG(std::string, log_level, "info", "debug, info, warning, error or off");
ABSL_FLAG(double, shutdown_grace_seconds, kDefaults.shutdown_grace_seconds,
          "time given to in-flight calls after SIGTERM/SIGINT");
ABSL_FLAG(std::string, tls_cert, "", "server certificate chain (PEM); enables TLS");
ABSL_FLAG(std::string, tls_key, "", "server private key (PEM)");
ABSL_FLAG(std::string, tls_client_ca, "", "CA bundle (PEM) for client certificates; enables mutual TLS");
ABSL_FLAG(std::string, auth_tokens_file, "",
          "file of 'token tenant' lines; when set, calls need 'authorization: Bearer <token>' and each tenant "
          "sees only its own scenes and meshes. The server refuses to start on a malformed line or a file without "
          "tokens");
ABSL_FLAG(std::string, replica_id, kDefaults.replica_id,
          "this replica's identity, returned by GetServerInfo; clients place scenes by it (empty = the host name; "
          "1-128 printable ASCII characters, no space)");
ABSL_FLAG(bool, reflection, kDefaults.reflection,
          "serve gRPC server reflection (the public schema of the API; answers without a token)");

namespace {

using namespace taxel::server;  // NOLINT

int Run() {
  LogLevel level;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    std::fprintf(stderr, "taxel-server: --log_level must be debug, info, warning, error or off\n");
    return 2;
  }
  SetLogLevel(level);
  ServerOptions options;
  options.address = absl::GetFlag(FLAGS_address);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  options.ui_address = absl::GetFlag(FLAGS_ui_address);
  options.eval_threads = absl::GetFlag(FLAGS_threads);
  options.request_threads = absl::GetFlag(FLAGS_request_threads);
  options.max_queue = static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_max_queue)));
  options.limits.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.limits.max_scenes = absl::GetFlag(FLAGS_max_scenes);
  options.limits.max_envs_per_scene = absl::GetFlag(FLAGS_max_envs_per_scene);
  options.limits.max_probes_per_scene = absl::GetFlag(FLAGS_max_probes_per_scene);
  options.limits.max_triangles_per_mesh = absl::GetFlag(FLAGS_max_triangles_per_mesh);
  options.limits.max_memory_bytes = absl::GetFlag(FLAGS_max_memory_bytes);
  options.shutdown_grace_seconds = absl::GetFlag(FLAGS_shutdown_grace_seconds);
  TlsOptions tls{absl::GetFlag(FLAGS_tls_cert), absl::GetFlag(FLAGS_tls_key), absl::GetFlag(FLAGS_tls_client_ca)};
  options.limits.max_scenes_per_tenant = absl::GetFlag(FLAGS_max_scenes_per_tenant);
  options.limits.max_memory_bytes_per_tenant = absl::GetFlag(FLAGS_max_memory_bytes_per_tenant);
  options.limits.max_grid_build_queries = absl::GetFlag(FLAGS_max_grid_build_queries);
  options.reflection = absl::GetFlag(FLAGS_reflection);
  options.replica_id = absl::GetFlag(FLAGS_replica_id);
  std::map<std::string, std::string> tokens;
  if (const std::string path = absl::GetFlag(FLAGS_auth_tokens_file); !path.empty()) {
    auto read = ReadTokensFile(path);
    if (!read.ok()) {
      std::fprintf(stderr, "taxel-server: %s\n", std::string(read.status().message()).c_str());
      return 2;
    }
    tokens = *std::move(read);
  }

  // Block the termination signals in every thread; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto server = TaxelServer::Start(options, tls, std::move(tokens));
  if (!server.ok()) {
    Log(LogLevel::kError, "start_failed", {{"error", std::string(server.status().message())}});
    std::fprintf(stderr, "taxel-server: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    Log(LogLevel::kInfo, "signal", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    (*server)->Shutdown(options.shutdown_grace_seconds);
  });
  (*server)->Wait();
  waiter.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Responses of large batches are tens of MB. Without this glibc serves each one with a fresh
  // mmap, and first-touch page faults then cost more than the copy itself (measured: 5 ms of a
  // 12 MB encode); keep such blocks in the heap and reuse them.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  absl::SetProgramUsageMessage(
      "Taxel: tactile-sensor readings and contact forces as a gRPC service.\n"
      "  taxel-server [--address=127.0.0.1:50051] [--metrics_address=127.0.0.1:9464] [--threads=N] ...");
  absl::FlagsUsageConfig usage;
  usage.version_string = [] { return std::string("taxel-server ") + taxel::server::kTaxelVersion + "\n"; };
  absl::SetFlagsUsageConfig(usage);
  if (taxel::server::HelpRequested(argc, argv)) {  // every flag of this file, exit 0 (absl's --help exits 1)
    taxel::server::PrintFlagsHelp(std::cout, absl::ProgramUsageMessage(), "address");
    return 0;
  }
  absl::ParseCommandLine(argc, argv);
  return Run();
}
