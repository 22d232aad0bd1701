// taxel::ReplicaSetClient — scenes spread over several taxel-server replicas by rendezvous
// placement (taxel/placement.h), each replica reached through an ordinary taxel::Client.
//
//   taxel::ReplicaSetClient::Options o;
//   o.targets = {"dns:///taxel-headless.sim.svc:50051"};   // or {"10.0.0.5:50051", "10.0.0.6:50051"}
//   o.auto_recreate = true;
//   auto rs = taxel::ReplicaSetClient::Connect(o);
//   (*rs)->CreateScene(spec);                              // on the replica placement picks
//   (*rs)->Step(request);                                  // routed by request.scene()
//
// Every scene call is routed by its scene name to the replica the scene lives on. With
// auto_recreate, a scene whose replica is unreachable (UNAVAILABLE) is re-created on the next live
// replica by score from the spec this client kept (with its meshes), and the call retried once;
// a scene gone from a restarted replica (NOT_FOUND "scene: ...") is re-created in place.
#ifndef TAXEL_CLIENT_CPP_TAXEL_REPLICA_SET_H_
#define TAXEL_CLIENT_CPP_TAXEL_REPLICA_SET_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taxel/client.h"

namespace taxel {

/// The replica targets: "host:port" entries as they are; a "dns:///host:port" (or
/// "dns://authority/host:port") entry becomes one "address:port" for every address the name
/// resolves to (getaddrinfo), sorted. Duplicates dropped. INVALID_ARGUMENT naming `targets[i]`.
absl::StatusOr<std::vector<std::string>> ResolveTargets(const std::vector<std::string>& targets);

class ReplicaSetClient {
 public:
  struct Options {
    std::vector<std::string> targets;  ///< see ResolveTargets
    std::string tenant;                ///< the tenant the bearer token maps to ("" without auth)
    bool auto_recreate = false;        ///< keep specs and move scenes off lost replicas
    Client::Options client;            ///< for every replica (its target is replaced)
    /// How long Refresh (and Connect) wait for each replica to connect and answer, seconds.
    double probe_timeout_seconds = 2;
  };

  /// Connects to every target and asks its replica_id (GetServerInfo). Replicas that do not
  /// answer are left out until Refresh(); UNAVAILABLE when none answers, INVALID_ARGUMENT when two
  /// targets report the same replica_id or one reports none.
  static absl::StatusOr<std::unique_ptr<ReplicaSetClient>> Connect(Options options);

  /// Asks every target its replica_id again (waiting up to probe_timeout_seconds for each to
  /// connect); those that answer are live (again).
  absl::Status Refresh();
  /// The live replicas' ids, sorted.
  std::vector<std::string> replica_ids() const;
  /// The live replicas by decreasing score for `scene` (of this tenant).
  std::vector<std::string> Ranking(const std::string& scene) const;
  /// The replica `scene` lives on: where this client put it, else the highest-scoring live one.
  absl::StatusOr<std::string> ReplicaOf(const std::string& scene) const;
  /// The Client of a replica (nullptr for an unknown id).
  Client* client(const std::string& replica_id) const;
  /// How often `scene` was re-created (failover or restart) by this client.
  int recreations(const std::string& scene) const;

  /// Kept here and uploaded to a replica when a scene placed there needs it.
  /// (`grid` as Client::UploadMesh; kept with the mesh and sent with every later upload.)
  absl::StatusOr<v1::UploadMeshResponse> UploadMesh(absl::Span<const double> vertices,
                                                    absl::Span<const int32_t> triangles,
                                                    const std::optional<v1::MeshGridOptions>& grid = std::nullopt);
  absl::StatusOr<v1::SceneInfo> CreateScene(const v1::SceneSpec& spec);
  /// Looked up on the live replicas in ranking order for a scene this client did not create.
  absl::StatusOr<v1::SceneInfo> GetScene(const std::string& scene);
  absl::Status DeleteScene(const std::string& scene);
  absl::StatusOr<v1::SensorInfo> AddSensor(const std::string& scene, const v1::SensorSpec& sensor);
  absl::Status RemoveSensor(const std::string& scene, const std::string& sensor_name);
  absl::StatusOr<v1::StepResponse> Step(const v1::StepRequest& request);
  absl::StatusOr<v1::ReadSensorsResponse> ReadSensors(const v1::ReadSensorsRequest& request);
  absl::Status ResetEnvs(const std::string& scene, absl::Span<const int32_t> env_ids = {});
  absl::StatusOr<v1::GetContactMatrixResponse> GetContactMatrix(const v1::GetContactMatrixRequest& request);
  /// A StepStream to the replica `scene` lives on (a stream does not fail over by itself: on an
  /// error, call Step once — which moves the scene — and open a new stream).
  absl::StatusOr<std::unique_ptr<StepStream>> OpenStepStream(const std::string& scene);

 private:
  struct Mesh {
    std::vector<double> vertices;
    std::vector<int32_t> triangles;
    std::optional<v1::MeshGridOptions> grid;
  };
  explicit ReplicaSetClient(Options options) : options_(std::move(options)) {}
  template <typename Fn>
  auto Routed(const std::string& scene, Fn fn) -> decltype(fn(std::declval<Client&>()));
  absl::StatusOr<v1::SceneInfo> CreateOn(const std::string& replica_id, const v1::SceneSpec& spec);
  /// After `error` on `scene`: re-creates it (moved, for UNAVAILABLE) and returns true when the
  /// call should be retried.
  bool Recover(const std::string& scene, const absl::Status& error);
  void MarkDown(const std::string& replica_id);

  Options options_;
  std::vector<std::string> targets_;
  std::map<std::string, std::unique_ptr<Client>> by_target_;
  mutable std::mutex mu_;                   ///< guards the maps below
  std::map<std::string, Client*> clients_;  ///< replica_id → client
  std::map<std::string, bool> live_;
  std::map<std::string, std::string> home_;  ///< scene → replica_id
  std::map<std::string, v1::SceneSpec> specs_;
  std::map<std::string, Mesh> meshes_;
  std::map<std::string, int> recreations_;
};

}  // namespace taxel

#endif  // TAXEL_CLIENT_CPP_TAXEL_REPLICA_SET_H_
