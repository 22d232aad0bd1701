#include "taxel/client.h"

#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace taxel {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
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

#define TAXEL_CLIENT_UNARY(Method, request, Response)   \
  grpc::ClientContext ctx;                              \
  Prepare(&ctx);                                        \
  Response response;                                    \
  const grpc::Status s = stub_->Method(&ctx, request, &response); \
  if (!s.ok()) return FromGrpc(s);                      \
  return response

absl::StatusOr<v1::ServerInfo> Client::GetServerInfo() {
  TAXEL_CLIENT_UNARY(GetServerInfo, v1::GetServerInfoRequest(), v1::ServerInfo);
}

absl::StatusOr<v1::UploadMeshResponse> Client::UploadMesh(absl::Span<const double> vertices,
                                                          absl::Span<const int32_t> triangles) {
  v1::UploadMeshRequest req;
  *req.mutable_vertices() = DoubleTensor({static_cast<int64_t>(vertices.size() / 3), 3}, vertices);
  *req.mutable_triangles() = Int32Tensor({static_cast<int64_t>(triangles.size() / 3), 3}, triangles);
  TAXEL_CLIENT_UNARY(UploadMesh, req, v1::UploadMeshResponse);
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

absl::StatusOr<v1::StepResponse> Client::Step(const v1::StepRequest& request) {
  TAXEL_CLIENT_UNARY(Step, request, v1::StepResponse);
}

absl::StatusOr<v1::ReadSensorsResponse> Client::ReadSensors(const v1::ReadSensorsRequest& request) {
  TAXEL_CLIENT_UNARY(ReadSensors, request, v1::ReadSensorsResponse);
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
  s->context_ = std::make_unique<grpc::ClientContext>();
  Prepare(s->context_.get(), /*deadline=*/false);
  s->stream_ = stub_->StepStream(s->context_.get());
  return s;
}

StepStream::~StepStream() {
  if (!closed_) {
    context_->TryCancel();
    stream_->Finish().ok();
  }
}

absl::StatusOr<v1::StepResponse> StepStream::Step(v1::StepRequest request) {
  if (closed_) return absl::FailedPreconditionError("stream: already closed");
  request.set_sequence(next_sequence_++);
  v1::StepResponse response;
  if (!stream_->Write(request) || !stream_->Read(&response)) {
    closed_ = true;
    const absl::Status s = FromGrpc(stream_->Finish());
    return s.ok() ? absl::UnavailableError("stream: ended by the server") : s;
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
