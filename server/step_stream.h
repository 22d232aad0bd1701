// StepStream: one bidirectional stream of Step requests, one in flight at a time, each run on the
// request executor through the same handler as the unary Step.
#ifndef TAXEL_SERVER_STEP_STREAM_H_
#define TAXEL_SERVER_STEP_STREAM_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "grpcpp/grpcpp.h"
#include "server/handlers.h"
#include "server/metrics.h"
#include "server/request_executor.h"
#include "taxel/v1/service.pb.h"

namespace taxel::server {

class StepStreamReactor final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  struct Deps {
    TaxelHandlers* handlers;
    RequestExecutor* executor;
    Metrics* metrics;
    const std::atomic<bool>* draining;
    /// Called once, when gRPC is done with the stream, just before the reactor deletes itself.
    std::function<void(StepStreamReactor*)> on_done;
  };
  StepStreamReactor(Deps deps, std::string tenant);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone() override;

  /// Ends the stream with `status` (scene deleted, server draining): at once when waiting for the
  /// client, else when the step in progress completes.
  void Abort(const grpc::Status& status);
  /// Whether this is a stream of `tenant` whose last step was on `scene`.
  bool Matches(const std::string& tenant, const std::string& scene);

 private:
  // States: reading (a read is outstanding) → processing (on the executor) → writing → reading.
  // Finish is only ever called while reading or writing, never while processing, so OnDone (and
  // the deletion of this object) cannot happen under a running Process(). gRPC operations are
  // started outside mu_, so inline reactions cannot deadlock. Exactly one thread wins the right
  // to call Finish (TakeFinish under mu_).
  enum class Phase { kReading, kProcessing, kWriting };
  using Clock = std::chrono::steady_clock;

  void Refuse(const grpc::Status& status);
  void Process(Clock::time_point queued);
  absl::Status Step(Clock::time_point queued);
  grpc::Status TakeFinish(const grpc::Status& status);  // mu_ held, finished_ false
  void DoFinish(const grpc::Status& status);

  Deps deps_;
  const std::string tenant_;
  const Clock::time_point start_ = Clock::now();
  grpc::ByteBuffer request_;
  v1::StepRequest parsed_;  // reused from step to step
  grpc::ByteBuffer response_;
  std::mutex mu_;
  std::string scene_;
  Phase phase_ = Phase::kReading;
  bool finished_ = false;
  std::optional<grpc::Status> abort_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_STEP_STREAM_H_
