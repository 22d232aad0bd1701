#include "server/step_stream.h"

#include <utility>
#include <vector>

#include "server/call_support.h"
#include "server/grpc_status.h"
#include "server/tsan_handoff.h"

namespace taxel::server {

StepStreamReactor::StepStreamReactor(Deps deps, std::string tenant)
    : deps_(std::move(deps)), tenant_(std::move(tenant)) {
  deps_.metrics->RpcStarted("StepStream", "bidi_stream");
  // gRPC runs the callbacks on its own threads, after a hand-off inside libgrpc (tsan_handoff.h).
  // Not under mu_: StartRead may react inline.
  PublishToGrpc(this);
  StartRead(&request_);
}

void StepStreamReactor::OnReadDone(bool ok) {
  ReceiveFromGrpc(this);
  std::optional<grpc::Status> finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    if (!ok) {  // the client closed its side
      finish = TakeFinish(grpc::Status::OK);
    } else if (abort_) {
      finish = TakeFinish(*abort_);
    } else {
      phase_ = Phase::kProcessing;
    }
  }
  if (finish) return DoFinish(*finish);
  const auto queued = Clock::now();
  if (!deps_.executor->TrySubmit([this, queued] { Process(queued); }, [this] { Refuse(ShuttingDown()); })) {
    Refuse(deps_.draining->load() ? ShuttingDown() : Busy());
  }
}

void StepStreamReactor::OnWriteDone(bool ok) {
  ReceiveFromGrpc(this);
  std::optional<grpc::Status> finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = Phase::kReading;
    if (finished_) return;
    if (!ok) {
      finish = TakeFinish(grpc::Status(grpc::StatusCode::CANCELLED, "stream: write failed (client gone)"));
    } else if (abort_) {
      finish = TakeFinish(*abort_);
    }
  }
  if (finish) return DoFinish(*finish);
  response_.Clear();
  StartRead(&request_);
}

void StepStreamReactor::OnDone() {
  ReceiveFromGrpc(this);
  deps_.on_done(this);
  delete this;
}

void StepStreamReactor::Abort(const grpc::Status& status) {
  std::optional<grpc::Status> finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    if (phase_ != Phase::kReading) {
      abort_ = status;
      return;
    }
    finish = TakeFinish(status);
  }
  DoFinish(*finish);
}

bool StepStreamReactor::Matches(const std::string& tenant, const std::string& scene) {
  std::lock_guard<std::mutex> lock(mu_);
  return tenant == tenant_ && scene == scene_;
}

// The step read last is not run (queue full, or refused at shutdown): end the stream.
void StepStreamReactor::Refuse(const grpc::Status& status) {
  std::optional<grpc::Status> finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = Phase::kReading;  // nothing outstanding: Finish is allowed
    if (!finished_) finish = TakeFinish(status);
  }
  if (finish) DoFinish(*finish);
}

void StepStreamReactor::Process(Clock::time_point queued) {
  const grpc::Status status = ToGrpcStatus(GuardAllocation([&] { return Step(queued); }));
  std::optional<grpc::Status> finish;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status.ok() || abort_) {
      phase_ = Phase::kReading;  // the read completed; nothing outstanding
      finish = TakeFinish(!status.ok() ? status : *abort_);
    } else {
      phase_ = Phase::kWriting;
    }
  }
  if (finish) return DoFinish(*finish);
  StartWrite(&response_);
}

absl::Status StepStreamReactor::Step(Clock::time_point queued) {
  Call call{tenant_, queued, 0.0};
  if (absl::Status s = ParseRequestTimed(request_, &parsed_, &call.parse_seconds); !s.ok()) return s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    scene_ = parsed_.scene();
  }
  std::vector<grpc::Slice> slices;
  if (absl::Status s = deps_.handlers->Step(call, parsed_, &slices); !s.ok()) return s;
  grpc::ByteBuffer bytes(slices.data(), slices.size());
  response_.Swap(&bytes);
  return absl::OkStatus();
}

grpc::Status StepStreamReactor::TakeFinish(const grpc::Status& status) {
  finished_ = true;
  return status;
}

void StepStreamReactor::DoFinish(const grpc::Status& status) {
  deps_.metrics->RpcHandled("StepStream", "bidi_stream", status.error_code(), Seconds(start_, Clock::now()));
  Finish(BoundedStatus(status));
}

}  // namespace taxel::server
