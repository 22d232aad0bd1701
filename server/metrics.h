// Server metrics behind a small interface, with a null implementation for tests and a Prometheus
// one (prometheus-cpp, HTTP /metrics). No label per scene or env: cardinality stays bounded.
#ifndef TAXEL_SERVER_METRICS_H_
#define TAXEL_SERVER_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status_code_enum.h"

namespace taxel::server {

/// Step phases of taxel_step_duration_seconds{phase}.
enum class StepPhase { kDecode, kEvaluate, kEncode, kQueue };

class Metrics {
 public:
  virtual ~Metrics() = default;
  /// grpc_server_started_total{grpc_service, grpc_method, grpc_type}
  virtual void RpcStarted(absl::string_view method, absl::string_view type) = 0;
  /// grpc_server_handled_total{..., grpc_code} and grpc_server_handling_seconds{...}
  virtual void RpcHandled(absl::string_view method, absl::string_view type, grpc::StatusCode code, double seconds) = 0;
  /// taxel_step_duration_seconds{phase}
  virtual void StepPhaseSeconds(StepPhase phase, double seconds) = 0;
  /// taxel_probe_evaluations_total{sensor_kind}
  virtual void ProbeEvaluations(absl::string_view sensor_kind, int64_t count) = 0;
  virtual void SetScenes(int64_t scenes) = 0;             ///< taxel_scenes
  virtual void SetMemoryBytes(int64_t bytes) = 0;         ///< taxel_memory_bytes
  virtual void SetExecutorQueueDepth(int64_t depth) = 0;  ///< taxel_executor_queue_depth
};

class NullMetrics final : public Metrics {
 public:
  void RpcStarted(absl::string_view, absl::string_view) override {}
  void RpcHandled(absl::string_view, absl::string_view, grpc::StatusCode, double) override {}
  void StepPhaseSeconds(StepPhase, double) override {}
  void ProbeEvaluations(absl::string_view, int64_t) override {}
  void SetScenes(int64_t) override {}
  void SetMemoryBytes(int64_t) override {}
  void SetExecutorQueueDepth(int64_t) override {}
};

/// Serves the Prometheus text format on http://<address>/metrics. `address` is "host:port"
/// (port 0 picks a free port; see port()). Errors: UNAVAILABLE when the port cannot be bound.
/// Also exports taxel_build_info{version}.
absl::StatusOr<std::unique_ptr<Metrics>> MakePrometheusMetrics(const std::string& address, int* port);

/// The µs-to-seconds bucket boundaries used for every latency histogram.
const std::vector<double>& LatencyBuckets();

}  // namespace taxel::server

#endif  // TAXEL_SERVER_METRICS_H_
