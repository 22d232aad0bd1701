#include "taxel/client.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/nonzero_mask.h"
#include "taxel/split.h"

namespace taxel {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  std::string message = status.error_message();
  // The transport's refusal of a message over a size limit names no flag: say which ones set it.
  if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED &&
      message.find("message larger than max") != std::string::npos) {
    message +=
        "; the limits are the server's --max_message_bytes and Client::Options::max_message_bytes (steps "
        "and reads are split by envs on their own; a mesh must fit in one message)";
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(Options options) {
  if (options.target.empty()) return absl::InvalidArgumentError("target: expected host:port or unix:/path");
  std::unique_ptr<Client> client(new Client(std::move(options)));
  grpc::ChannelArguments args;
  const int max_bytes = static_cast<int>(std::min<int64_t>(client->options_.max_message_bytes, INT32_MAX));
  args.SetMaxReceiveMessageSize(max_bytes);
  args.SetMaxSendMessageSize(max_bytes);
  // Receive large responses without being paced by HTTP/2 window updates.
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, max_bytes);
  args.SetInt(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, 1 << 24);
  args.SetInt(GRPC_ARG_TCP_READ_CHUNK_SIZE, 1 << 20);
  args.SetInt(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, 16 << 20);
  auto creds = client->options_.credentials ? client->options_.credentials : grpc::InsecureChannelCredentials();
  client->channel_ = grpc::CreateCustomChannel(client->options_.target, creds, args);
  client->stub_ = v1::Taxel::NewStub(client->channel_);
  return client;
}

void Client::Prepare(grpc::ClientContext* ctx, bool deadline) const {
  if (deadline) {
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::microseconds(static_cast<int64_t>(options_.timeout_seconds * 1e6)));
  }
  if (!options_.bearer_token.empty()) ctx->AddMetadata("authorization", "Bearer " + options_.bearer_token);
}

#define TAXEL_CLIENT_UNARY(Method, request, Response)             \
  grpc::ClientContext ctx;                                        \
  Prepare(&ctx);                                                  \
  Response response;                                              \
  const grpc::Status s = stub_->Method(&ctx, request, &response); \
  if (!s.ok()) return FromGrpc(s);                                \
  return response

absl::StatusOr<v1::ServerInfo> Client::GetServerInfo() {
  TAXEL_CLIENT_UNARY(GetServerInfo, v1::GetServerInfoRequest(), v1::ServerInfo);
}

absl::StatusOr<v1::UploadMeshResponse> Client::UploadMesh(absl::Span<const double> vertices,
                                                          absl::Span<const int32_t> triangles,
                                                          const std::optional<v1::MeshGridOptions>& grid) {
  v1::UploadMeshRequest req;
  if (grid.has_value()) *req.mutable_grid() = *grid;
  *req.mutable_vertices() = DoubleTensor({static_cast<int64_t>(vertices.size() / 3), 3}, vertices);
  *req.mutable_triangles() = Int32Tensor({static_cast<int64_t>(triangles.size() / 3), 3}, triangles);
  TAXEL_CLIENT_UNARY(UploadMesh, req, v1::UploadMeshResponse);
}

absl::Status Client::DeleteMesh(const std::string& mesh_id) {
  v1::DeleteMeshRequest req;
  req.set_mesh_id(mesh_id);
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::DeleteMeshResponse resp;
  return FromGrpc(stub_->DeleteMesh(&ctx, req, &resp));
}

absl::StatusOr<v1::SceneInfo> Client::CreateScene(const v1::SceneSpec& spec) {
  v1::CreateSceneRequest req;
  *req.mutable_spec() = spec;
  TAXEL_CLIENT_UNARY(CreateScene, req, v1::SceneInfo);
}

absl::StatusOr<v1::SceneInfo> Client::GetScene(const std::string& scene) {
  v1::GetSceneRequest req;
  req.set_scene(scene);
  TAXEL_CLIENT_UNARY(GetScene, req, v1::SceneInfo);
}

absl::StatusOr<v1::ListScenesResponse> Client::ListScenes() {
  TAXEL_CLIENT_UNARY(ListScenes, v1::ListScenesRequest(), v1::ListScenesResponse);
}

absl::Status Client::DeleteScene(const std::string& scene) {
  v1::DeleteSceneRequest req;
  req.set_scene(scene);
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::DeleteSceneResponse resp;
  return FromGrpc(stub_->DeleteScene(&ctx, req, &resp));
}

absl::StatusOr<v1::SensorInfo> Client::AddSensor(const std::string& scene, const v1::SensorSpec& sensor) {
  v1::AddSensorRequest req;
  req.set_scene(scene);
  *req.mutable_sensor() = sensor;
  TAXEL_CLIENT_UNARY(AddSensor, req, v1::SensorInfo);
}

absl::Status Client::RemoveSensor(const std::string& scene, const std::string& sensor_name) {
  v1::RemoveSensorRequest req;
  req.set_scene(scene);
  req.set_name(sensor_name);
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::RemoveSensorResponse resp;
  return FromGrpc(stub_->RemoveSensor(&ctx, req, &resp));
}

namespace {

// With `sparse` (Options::sparse_readings): the request asking for the sparse form, a copy of
// `request` when it does not already (a read of none stays as it is).
template <typename Request>
const Request& AskSparse(const Request& request, bool sparse, Request* copy) {
  if (!sparse || request.read().sparse() || request.read().none()) return request;
  *copy = request;
  copy->mutable_read()->set_sparse(true);
  return *copy;
}

}  // namespace

// A unary call whose response carries readings: asks for the sparse form and expands it (with
// Options::sparse_readings).
template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> Client::ReadingsCall(const Request& request, Method method) {
  Request copy;
  grpc::ClientContext ctx;
  Prepare(&ctx);
  Response response;
  const grpc::Status s = (stub_.get()->*method)(&ctx, AskSparse(request, options_.sparse_readings, &copy), &response);
  if (!s.ok()) return FromGrpc(s);
  if (options_.sparse_readings) {
    if (absl::Status e = ExpandReadings(response.mutable_readings()); !e.ok()) return e;
  }
  return response;
}

int Client::KnownPartSize(const std::string& scene) {
  std::lock_guard<std::mutex> lock(split_mu_);
  auto it = part_sizes_.find(scene);
  return it == part_sizes_.end() ? 0 : it->second;
}

int64_t Client::MessageLimit() {
  {
    std::lock_guard<std::mutex> lock(split_mu_);
    if (server_limit_ > 0) return std::min(server_limit_, options_.max_message_bytes);
  }
  auto info = GetServerInfo();
  const int64_t server = info.ok() && info->limits().max_message_bytes() > 0 ? info->limits().max_message_bytes()
                                                                             : options_.max_message_bytes;
  std::lock_guard<std::mutex> lock(split_mu_);
  server_limit_ = server;
  return std::min(server_limit_, options_.max_message_bytes);
}

template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> Client::SplitCall(const Request& request, Method method) {
  int size = KnownPartSize(request.scene());
  absl::Status refusal;
  if (size == 0) {
    absl::StatusOr<Response> whole = ReadingsCall<Request, Response>(request, method);
    if (whole.ok() || !internal::TooLarge(whole.status())) return whole;
    refusal = whole.status();
  }
  absl::StatusOr<v1::SceneInfo> info = GetScene(request.scene());
  if (!info.ok()) return info.status();
  const std::vector<int32_t> envs = internal::CallEnvs(request.env_ids(), info->num_envs());
  const int n = static_cast<int>(envs.size());
  if (n <= 1 && !refusal.ok()) return refusal;
  if (size == 0) {
    v1::ReadSpec read = request.read();
    if (options_.sparse_readings && !read.none()) read.set_sparse(true);
    int64_t per_env = 0, fixed = 0;
    internal::ReadingBytes(*info, read, internal::HistoryOf(request), &per_env, &fixed);
    per_env = std::max(per_env, internal::RequestBytes(request) / std::max(1, n) + 5);
    size = std::min(internal::EnvsPerPart(MessageLimit(), per_env, fixed, n), std::max(1, n / 2));
  }
  absl::StatusOr<Response> joined = internal::InParts<Response>(n, &size, [&](int start, int count) {
    absl::StatusOr<Request> part = internal::Part(request, envs, start, count);
    if (!part.ok()) return absl::StatusOr<Response>(part.status());
    absl::StatusOr<Response> r = ReadingsCall<Request, Response>(*part, method);
    if (r.ok()) {
      if (absl::Status e = ExpandReadings(r->mutable_readings()); !e.ok()) return absl::StatusOr<Response>(e);
    }
    return r;
  });
  if (joined.ok()) {
    std::lock_guard<std::mutex> lock(split_mu_);
    part_sizes_[request.scene()] = size;
  }
  return joined;
}

absl::StatusOr<v1::StepResponse> Client::Step(const v1::StepRequest& request) {
  return SplitCall<v1::StepRequest, v1::StepResponse>(request, &v1::Taxel::Stub::Step);
}

absl::StatusOr<v1::ReadSensorsResponse> Client::ReadSensors(const v1::ReadSensorsRequest& request) {
  return SplitCall<v1::ReadSensorsRequest, v1::ReadSensorsResponse>(request, &v1::Taxel::Stub::ReadSensors);
}

absl::Status Client::ResetEnvs(const std::string& scene, absl::Span<const int32_t> env_ids) {
  v1::ResetEnvsRequest req;
  req.set_scene(scene);
  req.mutable_env_ids()->Assign(env_ids.begin(), env_ids.end());
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::ResetEnvsResponse resp;
  return FromGrpc(stub_->ResetEnvs(&ctx, req, &resp));
}

absl::StatusOr<v1::GetContactMatrixResponse> Client::GetContactMatrix(const v1::GetContactMatrixRequest& request) {
  TAXEL_CLIENT_UNARY(GetContactMatrix, request, v1::GetContactMatrixResponse);
}

#undef TAXEL_CLIENT_UNARY

std::unique_ptr<StepStream> Client::OpenStepStream() {
  std::unique_ptr<StepStream> s(new StepStream());
  s->client_ = this;
  s->sparse_readings_ = options_.sparse_readings;
  s->Open();
  return s;
}

void StepStream::Open() {
  context_ = std::make_unique<grpc::ClientContext>();
  client_->Prepare(context_.get(), /*deadline=*/false);
  stream_ = client_->stub_->StepStream(context_.get());
  closed_ = false;
}

StepStream::~StepStream() {
  if (!closed_) {
    context_->TryCancel();
    stream_->Finish().ok();
  }
}

// A step over the message limit (refused as too large, or of a scene known to need parts) goes as
// unary parts through the client (taxel/split.h); the stream, which the server ended on the
// refusal, is reopened for the next steps.
absl::StatusOr<v1::StepResponse> StepStream::Step(v1::StepRequest request) {
  if (closed_) return absl::FailedPreconditionError("stream: already closed");
  if (client_->KnownPartSize(request.scene()) == 0) {
    absl::StatusOr<v1::StepResponse> r = StepOnce(request);
    if (r.ok() || !internal::TooLarge(r.status())) return r;
    Open();
  }
  request.set_sequence(next_sequence_++);
  absl::StatusOr<v1::StepResponse> r = client_->Step(request);
  if (r.ok()) r->set_sequence(request.sequence());
  return r;
}

absl::StatusOr<v1::StepResponse> StepStream::StepOnce(v1::StepRequest request) {
  request.set_sequence(next_sequence_++);
  if (sparse_readings_ && !request.read().none()) request.mutable_read()->set_sparse(true);
  v1::StepResponse response;
  if (!stream_->Write(request) || !stream_->Read(&response)) {
    closed_ = true;
    const absl::Status s = FromGrpc(stream_->Finish());
    return s.ok() ? absl::UnavailableError("stream: ended by the server") : s;
  }
  if (sparse_readings_) {
    if (absl::Status e = ExpandReadings(response.mutable_readings()); !e.ok()) return e;
  }
  return response;
}

absl::Status StepStream::Close() {
  if (closed_) return absl::OkStatus();
  closed_ = true;
  stream_->WritesDone();
  return FromGrpc(stream_->Finish());
}

v1::Tensor DoubleTensor(absl::Span<const int64_t> shape, absl::Span<const double> values) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT64);
  t.mutable_shape()->Assign(shape.begin(), shape.end());
  t.set_data(values.data(), values.size() * sizeof(double));
  return t;
}

v1::Tensor FloatTensor(absl::Span<const int64_t> shape, absl::Span<const float> values) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  t.mutable_shape()->Assign(shape.begin(), shape.end());
  t.set_data(values.data(), values.size() * sizeof(float));
  return t;
}

v1::Tensor Int32Tensor(absl::Span<const int64_t> shape, absl::Span<const int32_t> values) {
  v1::Tensor t;
  t.set_dtype(v1::INT32);
  t.mutable_shape()->Assign(shape.begin(), shape.end());
  t.set_data(values.data(), values.size() * sizeof(int32_t));
  return t;
}

absl::Status ExpandTensor(v1::Tensor* tensor) {
  if (tensor->nonzero_mask().empty()) return absl::OkStatus();
  const v1::DType dtype = tensor->dtype();
  const size_t item = dtype == v1::FLOAT64 ? 8 : dtype == v1::BOOL ? 1 : dtype == v1::DTYPE_UNSPECIFIED ? 0 : 4;
  if (item == 0) return absl::DataLossError("tensor: sparse form without a dtype");
  int64_t n = 1;
  for (int64_t d : tensor->shape()) {
    if (d < 0 || (d != 0 && n > (INT64_MAX / 8) / d)) return absl::DataLossError("tensor: invalid shape");
    n *= d;
  }
  const std::string& mask = tensor->nonzero_mask();
  const auto* bits = reinterpret_cast<const uint8_t*>(mask.data());
  const int64_t count =
      mask.size() == NonzeroMaskBytes(static_cast<size_t>(n)) ? CountNonzeroMask(bits, static_cast<size_t>(n)) : -1;
  if (count < 0 || tensor->data().size() != static_cast<size_t>(count) * item) {
    return absl::DataLossError(absl::StrCat("tensor: sparse form of ", n, " elements with a ", mask.size(),
                                            "-byte mask and ", tensor->data().size(), " bytes of data"));
  }
  std::string dense(static_cast<size_t>(n) * item, '\0');
  UnpackNonzero(tensor->data().data(), static_cast<size_t>(n), item, bits, dense.data(), /*dst_is_zero=*/true);
  tensor->set_data(std::move(dense));
  tensor->clear_nonzero_mask();
  return absl::OkStatus();
}

// Writing out a large response (12.6 MB for a 1024-env grasp batch) is memory-bound: beyond
// kParallelExpandBytes of dense data, a second thread takes every other tensor.
constexpr size_t kParallelExpandBytes = size_t{4} << 20;

absl::Status ExpandReadings(google::protobuf::RepeatedPtrField<v1::SensorReading>* readings) {
  struct Item {
    const std::string* sensor;
    const std::string* channel;
    v1::Tensor* tensor;
  };
  std::vector<Item> items;
  size_t dense_bytes = 0;
  for (v1::SensorReading& r : *readings) {
    for (auto& [name, tensor] : *r.mutable_channels()) {
      if (tensor.nonzero_mask().empty()) continue;
      items.push_back({&r.sensor(), &name, &tensor});
      dense_bytes += 8 * tensor.nonzero_mask().size() * (tensor.dtype() == v1::BOOL ? 1 : 4);
    }
  }
  std::vector<absl::Status> status(items.size());
  auto expand = [&](size_t first, size_t stride) {
    for (size_t i = first; i < items.size(); i += stride) status[i] = ExpandTensor(items[i].tensor);
  };
  if (dense_bytes >= kParallelExpandBytes && items.size() > 1) {
    std::thread helper(expand, 1, 2);
    expand(0, 2);
    helper.join();
  } else {
    expand(0, 1);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (!status[i].ok()) {
      return absl::DataLossError(
          absl::StrCat("readings '", *items[i].sensor, "' channel '", *items[i].channel, "': ", status[i].message()));
    }
  }
  return absl::OkStatus();
}

int64_t NumElements(const v1::Tensor& tensor) {
  int64_t n = 1;
  for (int64_t d : tensor.shape()) n *= d;
  return n;
}

absl::StatusOr<std::vector<float>> FloatValues(const v1::Tensor& tensor) {
  if (tensor.dtype() != v1::FLOAT32) {
    return absl::InvalidArgumentError(absl::StrCat("tensor: expected FLOAT32, got ", v1::DType_Name(tensor.dtype())));
  }
  const int64_t n = NumElements(tensor);
  if (static_cast<int64_t>(tensor.data().size()) != n * 4) {
    return absl::InvalidArgumentError("tensor: data length does not match its shape");
  }
  std::vector<float> out(n);
  std::memcpy(out.data(), tensor.data().data(), tensor.data().size());
  return out;
}

}  // namespace taxel
