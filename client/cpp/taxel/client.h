// taxel::Client — the C++ client of the Taxel service.
//
//   auto client = taxel::Client::Connect("127.0.0.1:50051");
//   auto info = (*client)->GetServerInfo();
//
// Every unary call has a deadline (Options::timeout_seconds) and returns absl::StatusOr; the
// status keeps the server's code and message (which names the offending field).
#ifndef TAXEL_CLIENT_CPP_TAXEL_CLIENT_H_
#define TAXEL_CLIENT_CPP_TAXEL_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "grpcpp/grpcpp.h"
#include "taxel/v1/service.grpc.pb.h"

namespace taxel {

class StepStream;

class Client {
 public:
  struct Options {
    std::string target = "127.0.0.1:50051";                 ///< host:port or unix:/path
    double timeout_seconds = 60;                            ///< deadline of each unary call
    int64_t max_message_bytes = 64LL << 20;                 ///< match the server's limit
    std::string bearer_token;                               ///< sent as "authorization: Bearer <token>" if set
    std::shared_ptr<grpc::ChannelCredentials> credentials;  ///< default: insecure
    /// Step, StepStream and ReadSensors ask for the sparse form of the readings
    /// (ReadSpec.sparse: zeros left out, ~4× fewer bytes for typical tactile data) and expand it
    /// on receipt, so the tensors returned are dense either way. False: requests go as they are
    /// and responses come back as the server sent them.
    bool sparse_readings = true;
  };

  /// Creates the channel (connection is lazy; the first call connects).
  static absl::StatusOr<std::unique_ptr<Client>> Connect(Options options);
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const std::string& target) {
    Options options;
    options.target = target;
    return Connect(std::move(options));
  }

  absl::StatusOr<v1::ServerInfo> GetServerInfo();
  /// vertices: V·3 coordinates (m); triangles: T·3 indices. With `grid`, the server also builds
  /// the mesh's narrow-band signed-distance grid now (for sensors with sdf_backend GRID) and
  /// answers what it measured in UploadMeshResponse.grid (RESOURCE_EXHAUSTED naming
  /// grid.max_error when it does not fit the memory limit).
  absl::StatusOr<v1::UploadMeshResponse> UploadMesh(absl::Span<const double> vertices,
                                                    absl::Span<const int32_t> triangles,
                                                    const std::optional<v1::MeshGridOptions>& grid = std::nullopt);
  /// Forgets an uploaded mesh (FAILED_PRECONDITION while one of this tenant's scenes uses it).
  absl::Status DeleteMesh(const std::string& mesh_id);
  absl::StatusOr<v1::SceneInfo> CreateScene(const v1::SceneSpec& spec);
  absl::StatusOr<v1::SceneInfo> GetScene(const std::string& scene);
  absl::StatusOr<v1::ListScenesResponse> ListScenes();
  absl::Status DeleteScene(const std::string& scene);
  absl::StatusOr<v1::SensorInfo> AddSensor(const std::string& scene, const v1::SensorSpec& sensor);
  absl::Status RemoveSensor(const std::string& scene, const std::string& sensor_name);
  /// A step or read whose request or readings exceed the message limit is sent as parts over env
  /// ranges and the responses joined, transparently (taxel/split.h): one logical step.
  absl::StatusOr<v1::StepResponse> Step(const v1::StepRequest& request);
  absl::StatusOr<v1::ReadSensorsResponse> ReadSensors(const v1::ReadSensorsRequest& request);
  absl::Status ResetEnvs(const std::string& scene, absl::Span<const int32_t> env_ids = {});
  absl::StatusOr<v1::GetContactMatrixResponse> GetContactMatrix(const v1::GetContactMatrixRequest& request);

  /// Opens a StepStream (no deadline: a stream lives as long as the simulation). The client must
  /// outlive it.
  std::unique_ptr<StepStream> OpenStepStream();

  v1::Taxel::Stub& stub() { return *stub_; }
  const Options& options() const { return options_; }

 private:
  friend class StepStream;
  explicit Client(Options options) : options_(std::move(options)) {}
  void Prepare(grpc::ClientContext* ctx, bool deadline = true) const;
  template <typename Request, typename Response, typename Method>
  absl::StatusOr<Response> ReadingsCall(const Request& request, Method method);
  // Sends `request` whole, or in parts (taxel/split.h) when it is refused as too large or the
  // scene is known to need parts.
  template <typename Request, typename Response, typename Method>
  absl::StatusOr<Response> SplitCall(const Request& request, Method method);
  int KnownPartSize(const std::string& scene);  // 0: the scene's calls have fitted so far
  int64_t MessageLimit();                       // min(Options::max_message_bytes, the server's)
  Options options_;
  std::mutex split_mu_;
  std::map<std::string, int> part_sizes_;  // under split_mu_: envs per part of a scene's calls
  int64_t server_limit_ = 0;               // under split_mu_: 0 until asked
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Taxel::Stub> stub_;
};

/// A synchronous bidirectional step stream: Step() writes one request and reads its response.
class StepStream {
 public:
  ~StepStream();
  /// Sends `request` (its sequence number is filled in) and waits for the response.
  absl::StatusOr<v1::StepResponse> Step(v1::StepRequest request);
  /// Half-closes and returns the stream's final status.
  absl::Status Close();

 private:
  friend class Client;
  StepStream() = default;
  absl::StatusOr<v1::StepResponse> StepOnce(v1::StepRequest request);
  void Open();
  Client* client_ = nullptr;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepRequest, v1::StepResponse>> stream_;
  uint64_t next_sequence_ = 1;
  bool closed_ = false;
  bool sparse_readings_ = true;
};

/// grpc::Status → absl::Status (code and message kept).
absl::Status FromGrpc(const grpc::Status& status);

// ---- Tensor helpers ----

/// A FLOAT64 tensor of the given shape from values (copied).
v1::Tensor DoubleTensor(absl::Span<const int64_t> shape, absl::Span<const double> values);
v1::Tensor FloatTensor(absl::Span<const int64_t> shape, absl::Span<const float> values);
v1::Tensor Int32Tensor(absl::Span<const int64_t> shape, absl::Span<const int32_t> values);
/// Element values of a FLOAT32 output tensor (copied; INVALID_ARGUMENT for another dtype or a
/// byte length that does not match the shape).
absl::StatusOr<std::vector<float>> FloatValues(const v1::Tensor& tensor);
/// Number of elements of a tensor's shape.
int64_t NumElements(const v1::Tensor& tensor);
/// Turns a tensor in the sparse form (Tensor.nonzero_mask set) into the dense form; a dense
/// tensor is left as it is. DATA_LOSS when the mask or the data do not fit the shape.
absl::Status ExpandTensor(v1::Tensor* tensor);
/// ExpandTensor on every tensor of `readings` (a response fetched with sparse_readings = false,
/// or through the stub); DATA_LOSS naming the sensor and channel of a malformed one.
absl::Status ExpandReadings(google::protobuf::RepeatedPtrField<v1::SensorReading>* readings);

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_CLIENT_H_
