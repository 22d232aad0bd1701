#include "server/metrics.h"

#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/version.h"

namespace taxel::server {
namespace {

const char* CodeName(grpc::StatusCode code) {
  static const char* kNames[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  const int c = static_cast<int>(code);
  return (c >= 0 && c <= 16) ? kNames[c] : "UNKNOWN";
}

const char* PhaseName(StepPhase p) {
  switch (p) {
    case StepPhase::kDecode: return "decode";
    case StepPhase::kEvaluate: return "evaluate";
    case StepPhase::kEncode: return "encode";
    case StepPhase::kQueue: return "queue";
  }
  return "unknown";
}

class PrometheusMetrics final : public Metrics {
 public:
  PrometheusMetrics(std::unique_ptr<prometheus::Exposer> exposer)
      : exposer_(std::move(exposer)),
        registry_(std::make_shared<prometheus::Registry>()),
        started_(prometheus::BuildCounter()
                     .Name("grpc_server_started_total")
                     .Help("RPCs started on the server.")
                     .Register(*registry_)),
        handled_(prometheus::BuildCounter()
                     .Name("grpc_server_handled_total")
                     .Help("RPCs completed on the server, by status code.")
                     .Register(*registry_)),
        handling_(prometheus::BuildHistogram()
                      .Name("grpc_server_handling_seconds")
                      .Help("Response latency of RPCs handled by the server (seconds).")
                      .Register(*registry_)),
        step_(prometheus::BuildHistogram()
                  .Name("taxel_step_duration_seconds")
                  .Help("Server-side time per step phase (seconds).")
                  .Register(*registry_)),
        probes_(prometheus::BuildCounter()
                    .Name("taxel_probe_evaluations_total")
                    .Help("Active probes evaluated, by sensor kind.")
                    .Register(*registry_)),
        scenes_(prometheus::BuildGauge().Name("taxel_scenes").Help("Live scenes.").Register(*registry_).Add({})),
        memory_(prometheus::BuildGauge()
                    .Name("taxel_memory_bytes")
                    .Help("Bytes held by scenes and meshes.")
                    .Register(*registry_)
                    .Add({})),
        queue_(prometheus::BuildGauge()
                   .Name("taxel_executor_queue_depth")
                   .Help("Requests waiting for an executor thread.")
                   .Register(*registry_)
                   .Add({})) {
    prometheus::BuildGauge()
        .Name("taxel_build_info")
        .Help("Taxel build information (always 1).")
        .Register(*registry_)
        .Add({{"version", kTaxelVersion}})
        .Set(1);
    exposer_->RegisterCollectable(registry_);
  }

  void RpcStarted(absl::string_view method, absl::string_view type) override {
    started_.Add(Labels(method, type)).Increment();
  }
  void RpcHandled(absl::string_view method, absl::string_view type, grpc::StatusCode code, double seconds) override {
    auto labels = Labels(method, type);
    std::lock_guard<std::mutex> lock(mu_);
    handling_.Add(labels, LatencyBuckets()).Observe(seconds);
    labels["grpc_code"] = CodeName(code);
    handled_.Add(labels).Increment();
  }
  void StepPhaseSeconds(StepPhase phase, double seconds) override {
    std::lock_guard<std::mutex> lock(mu_);
    step_.Add({{"phase", PhaseName(phase)}}, LatencyBuckets()).Observe(seconds);
  }
  void ProbeEvaluations(absl::string_view kind, int64_t count) override {
    probes_.Add({{"sensor_kind", std::string(kind)}}).Increment(static_cast<double>(count));
  }
  void SetScenes(int64_t n) override { scenes_.Set(static_cast<double>(n)); }
  void SetMemoryBytes(int64_t bytes) override { memory_.Set(static_cast<double>(bytes)); }
  void SetExecutorQueueDepth(int64_t depth) override { queue_.Set(static_cast<double>(depth)); }

 private:
  static std::map<std::string, std::string> Labels(absl::string_view method, absl::string_view type) {
    return {{"grpc_service", "taxel.v1.Taxel"}, {"grpc_method", std::string(method)}, {"grpc_type", std::string(type)}};
  }

  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& started_;
  prometheus::Family<prometheus::Counter>& handled_;
  prometheus::Family<prometheus::Histogram>& handling_;
  prometheus::Family<prometheus::Histogram>& step_;
  prometheus::Family<prometheus::Counter>& probes_;
  prometheus::Gauge& scenes_;
  prometheus::Gauge& memory_;
  prometheus::Gauge& queue_;
  std::mutex mu_;  // Family::Add with a bucket vector is not cheap; serialise histogram adds
};

}  // namespace

const std::vector<double>& LatencyBuckets() {
  // 10 µs … 10 s, three per decade.
  static const std::vector<double> kBuckets = {1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2,
                                               2e-2, 5e-2, 1e-1, 2e-1, 5e-1, 1.0,  2.0,  5.0,  10.0};
  return kBuckets;
}

absl::StatusOr<std::unique_ptr<Metrics>> MakePrometheusMetrics(const std::string& address, int* port) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {  // prometheus-cpp reports bind failures by throwing; keep that at this edge
    exposer = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("metrics: cannot listen on ", address, ": ", e.what()));
  }
  const auto ports = exposer->GetListeningPorts();
  if (port != nullptr) *port = ports.empty() ? 0 : ports.front();
  return std::unique_ptr<Metrics>(new PrometheusMetrics(std::move(exposer)));
}

}  // namespace taxel::server
