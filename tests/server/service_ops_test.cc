// Operations: grpc.health.v1 (liveness, readiness) and draining, the Prometheus /metrics endpoint,
// and bearer-token tenants.
#include <unistd.h>

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/server/service_fixture.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>

namespace taxel::testing {
namespace {

using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using ::testing::HasSubstr;

std::vector<double> TouchingPoses(int num_envs) {
  std::vector<double> p;
  for (int e = 0; e < num_envs; ++e) {
    auto env = PosesXyzw({Eigen::Vector3d::Zero(), Eigen::Vector3d(0, 0, 0.054)});
    p.insert(p.end(), env.begin(), env.end());
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Health and drain

class HealthTest : public ServerTest {
 protected:
  // The serving status of `service` ("" = the whole server).
  HealthCheckResponse::ServingStatus Check(const std::string& service) {
    if (health_ == nullptr) {
      health_ =
          grpc::health::v1::Health::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
    }
    HealthCheckRequest req;
    req.set_service(service);
    HealthCheckResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    const grpc::Status s = health_->Check(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << service << ": " << s.error_message();
    return resp.status();
  }
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

TEST_F(HealthTest, ServingUntilDrainThenNotReadyAndRefusingNewWork) {
  EXPECT_EQ(Check(""), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check("liveness"), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check("readiness"), HealthCheckResponse::SERVING);

  ASSERT_TRUE(client_->CreateScene(ToWire(GraspSpec("grasp", 1, SphereShape(kBallR)))).ok());
  // A stream that stepped once and now waits for the client.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));  // a hang fails, not blocks
  auto stream = client_->stub().StepStream(&ctx);
  ASSERT_TRUE(stream->Write(MakeStep("grasp", 1, TouchingPoses(1))));
  v1::StepResponse response;
  ASSERT_TRUE(stream->Read(&response));
  EXPECT_EQ(response.step(), 1);

  server_->Drain();

  EXPECT_EQ(Check("readiness"), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(Check("liveness"), HealthCheckResponse::SERVING);
  EXPECT_EQ(Check(""), HealthCheckResponse::SERVING);
  // The open stream is ended by the server.
  EXPECT_FALSE(stream->Read(&response));
  const grpc::Status ended = stream->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(ended.error_message(), HasSubstr("shutting down"));
  // New scenes and streams are refused.
  auto created = client_->CreateScene(ToWire(GraspSpec("late", 1, SphereShape(kBallR))));
  EXPECT_EQ(created.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(created.status().message(), HasSubstr("shutting down"));
  auto late_stream = client_->OpenStepStream();
  EXPECT_EQ(late_stream->Step(MakeStep("grasp", 1, TouchingPoses(1))).status().code(), absl::StatusCode::kUnavailable);
  // Unary calls on existing scenes are still served while the server drains.
  auto step = client_->Step(MakeStep("grasp", 1, TouchingPoses(1)));
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step(), 2);
}

TEST_F(HealthTest, UnknownServiceIsNotFound) {
  auto stub =
      grpc::health::v1::Health::NewStub(grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  HealthCheckRequest req;
  req.set_service("no.such.Service");
  HealthCheckResponse resp;
  grpc::ClientContext ctx;
  EXPECT_EQ(stub->Check(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

// ---------------------------------------------------------------------------------------------
// Metrics

// GET http://127.0.0.1:<port><path> over a plain socket; the body ("" on failure). HTTP/1.0, so the
// server closes the connection after the response. Socket timeouts bound every wait.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::string response;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) response.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  EXPECT_NE(body, std::string::npos) << "no HTTP response from the metrics port";
  EXPECT_THAT(response, ::testing::StartsWith("HTTP/1.")) << response.substr(0, 200);
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// Lines of the Prometheus text format that start with `name` and contain every label in `labels`.
std::vector<std::string> Samples(const std::string& body, const std::string& name,
                                 const std::vector<std::string>& labels = {}) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    if (!absl::StartsWith(line, name + "{") && !absl::StartsWith(line, name + " ")) continue;
    bool all = true;
    for (const auto& l : labels) all &= absl::StrContains(line, l);
    if (all) out.emplace_back(line);
  }
  return out;
}

TEST(MetricsTest, ExposesRpcStepAndSceneMetrics) {
  server::ServerOptions options = TestServerOptions();
  options.metrics_address = "127.0.0.1:0";
  auto server = server::TaxelServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_GT((*server)->metrics_port(), 0);
  auto client = Client::Connect((*server)->target());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->CreateScene(ToWire(GraspSpec("grasp", 3, SphereShape(kBallR)))).ok());
  ASSERT_TRUE((*client)->Step(MakeStep("grasp", 3, TouchingPoses(3))).ok());
  EXPECT_FALSE((*client)->GetScene("nope").ok());  // one NOT_FOUND

  const std::string body = HttpGet((*server)->metrics_port(), "/metrics");
  // One Step, answered OK; one GetScene, answered NOT_FOUND.
  EXPECT_THAT(Samples(body, "grpc_server_handled_total", {"grpc_method=\"Step\"", "grpc_code=\"OK\""}),
              ::testing::ElementsAre(::testing::EndsWith("} 1")))
      << body;
  EXPECT_THAT(Samples(body, "grpc_server_handled_total", {"grpc_method=\"GetScene\"", "grpc_code=\"NOT_FOUND\""}),
              ::testing::ElementsAre(::testing::EndsWith("} 1")));
  EXPECT_THAT(Samples(body, "grpc_server_started_total", {"grpc_method=\"Step\"", "grpc_type=\"unary\""}),
              ::testing::ElementsAre(::testing::EndsWith("} 1")));
  EXPECT_FALSE(Samples(body, "grpc_server_handling_seconds_bucket", {"grpc_method=\"Step\""}).empty());
  // Step phases: histogram buckets per phase, one evaluate observation so far.
  EXPECT_FALSE(Samples(body, "taxel_step_duration_seconds_bucket", {"phase=\"evaluate\"", "le=\"1e-05\""}).empty())
      << body;
  EXPECT_THAT(Samples(body, "taxel_step_duration_seconds_count", {"phase=\"evaluate\""}),
              ::testing::ElementsAre(::testing::EndsWith("} 1")));
  // 3 envs × 25 active kin probes; 3 × 3 depth probes.
  EXPECT_THAT(Samples(body, "taxel_probe_evaluations_total", {"sensor_kind=\"kinematic_taxel\""}),
              ::testing::ElementsAre(::testing::EndsWith("} 75")));
  EXPECT_THAT(Samples(body, "taxel_probe_evaluations_total", {"sensor_kind=\"contact_depth_probe\""}),
              ::testing::ElementsAre(::testing::EndsWith("} 9")));
  EXPECT_THAT(Samples(body, "taxel_scenes"), ::testing::ElementsAre("taxel_scenes 1"));
  EXPECT_THAT(Samples(body, "taxel_build_info", {"version=\""}), ::testing::ElementsAre(::testing::EndsWith("} 1")));
  EXPECT_EQ(Samples(body, "taxel_memory_bytes").size(), 1u);
  // Every call has been answered, so nothing waits: 0 (it used to stay at the depth seen right
  // after the last submission, 1).
  EXPECT_THAT(Samples(body, "taxel_executor_queue_depth"), ::testing::ElementsAre("taxel_executor_queue_depth 0"));
  // No label per scene.
  EXPECT_THAT(body, ::testing::Not(HasSubstr("grasp")));

  // The gauges drop when the scene and a mesh go: nothing is held any more.
  const geometry::MeshData mesh = BallMesh();
  auto up = (*client)->UploadMesh(FlatVertices(mesh), FlatTriangles(mesh));
  ASSERT_TRUE(up.ok());
  ASSERT_TRUE((*client)->DeleteScene("grasp").ok());
  ASSERT_TRUE((*client)->DeleteMesh(up->mesh_id()).ok());
  const std::string after = HttpGet((*server)->metrics_port(), "/metrics");
  EXPECT_THAT(Samples(after, "taxel_scenes"), ::testing::ElementsAre("taxel_scenes 0"));
  EXPECT_THAT(Samples(after, "taxel_memory_bytes"), ::testing::ElementsAre("taxel_memory_bytes 0"));
}

// ---------------------------------------------------------------------------------------------
// Bearer tokens

class TokenTest : public ServerTest {
 protected:
  void SetUp() override { StartServer(TestServerOptions(), {{"t1", "alice"}, {"t2", "bob"}}); }
};

TEST_F(TokenTest, CallsNeedAKnownToken) {
  auto info = client_->GetServerInfo();  // client_ sends no token
  EXPECT_EQ(info.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(info.status().message(), HasSubstr("authorization"));
  auto stream = client_->OpenStepStream();
  EXPECT_EQ(stream->Step(MakeStep("x", 1, TouchingPoses(1))).status().code(), absl::StatusCode::kUnauthenticated);
  auto mallory = NewClient("t3");
  ASSERT_NE(mallory, nullptr);
  auto created = mallory->CreateScene(ToWire(GraspSpec("grasp", 1, SphereShape(kBallR))));
  EXPECT_EQ(created.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(created.status().message(), HasSubstr("unknown token"));
  auto alice = NewClient("t1");
  ASSERT_NE(alice, nullptr);
  EXPECT_TRUE(alice->GetServerInfo().ok());
  EXPECT_EQ(alice->GetServerInfo()->num_scenes(), 0) << "the refused CreateScene registered nothing";
}

TEST_F(TokenTest, TenantsSeeOnlyTheirOwnScenes) {
  auto alice = NewClient("t1");
  auto bob = NewClient("t2");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  ASSERT_TRUE(alice->CreateScene(ToWire(GraspSpec("private", 1, SphereShape(kBallR)))).ok());
  ASSERT_TRUE(alice->Step(MakeStep("private", 1, TouchingPoses(1))).ok());

  auto seen = bob->GetScene("private");
  EXPECT_EQ(seen.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(seen.status().message(), HasSubstr("scene: no scene named 'private'"));
  EXPECT_EQ(bob->ListScenes()->scenes_size(), 0);
  EXPECT_EQ(bob->Step(MakeStep("private", 1, TouchingPoses(1))).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(bob->DeleteScene("private").code(), absl::StatusCode::kNotFound);
  auto bob_stream = bob->OpenStepStream();
  EXPECT_EQ(bob_stream->Step(MakeStep("private", 1, TouchingPoses(1))).status().code(), absl::StatusCode::kNotFound);
  // Names are per tenant: bob may have his own "private".
  auto own = bob->CreateScene(ToWire(GraspSpec("private", 2, SphereShape(kBallR))));
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(own->num_envs(), 2);

  auto list = alice->ListScenes();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->scenes_size(), 1);
  EXPECT_EQ(list->scenes(0).name(), "private");
  EXPECT_EQ(list->scenes(0).num_envs(), 1);
  EXPECT_EQ(list->scenes(0).step(), 1) << "bob's calls did not touch alice's scene";
}

// ---------------------------------------------------------------------------------------------
// Start failures are reported, not crashed on

// A TCP socket listening on 127.0.0.1:<free port> without SO_REUSEPORT, so nobody else can bind it.
class PortBlocker {
 public:
  PortBlocker() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<const sockaddr*>(&addr), len) != 0 || listen(fd_, 1) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot block a port";
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  ~PortBlocker() {
    if (fd_ >= 0) close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(ServerStartTest, AddressInUseIsUnavailable) {
  PortBlocker blocker;
  server::ServerOptions options = TestServerOptions();
  options.address = blocker.address();
  auto server = server::TaxelServer::Start(options);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(server.status().message(), HasSubstr("address: cannot listen on '" + blocker.address() + "'"));
}

TEST(ServerStartTest, MetricsAddressInUseIsUnavailable) {
  PortBlocker blocker;
  server::ServerOptions options = TestServerOptions();
  options.metrics_address = blocker.address();
  auto server = server::TaxelServer::Start(options);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(server.status().message(), HasSubstr("metrics: cannot listen on " + blocker.address()));
}

TEST(ServerStartTest, UnreadableTlsFilesAreInvalidArgument) {
  server::TlsOptions tls;
  tls.cert_file = "/nonexistent/taxel-test/cert.pem";
  tls.key_file = "/nonexistent/taxel-test/key.pem";
  auto server = server::TaxelServer::Start(TestServerOptions(), tls);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("tls_cert: cannot read '/nonexistent/taxel-test/cert.pem'"));
}

TEST(ReplicaIdTest, GetServerInfoReturnsTheConfiguredId) {
  server::ServerOptions options = TestServerOptions();
  options.replica_id = "taxel-2";
  auto server = server::TaxelServer::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = Client::Connect((*server)->target());
  ASSERT_TRUE(client.ok());
  auto info = (*client)->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->replica_id(), "taxel-2");
}

TEST(ReplicaIdTest, DefaultsToTheHostName) {
  struct utsname uts;  // the kernel's node name: what gethostname reads, asked another way
  ASSERT_EQ(uname(&uts), 0);
  auto server = server::TaxelServer::Start(TestServerOptions());  // replica_id left empty
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = Client::Connect((*server)->target());
  ASSERT_TRUE(client.ok());
  auto info = (*client)->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->replica_id(), std::string(uts.nodename));
  EXPECT_FALSE(info->replica_id().empty());
}

TEST(ReplicaIdTest, InvalidIdsAreRefusedAtStart) {
  struct Case {
    std::string id, message;
  };
  const std::vector<Case> cases = {
      {std::string(129, 'r'), "replica_id: 129 characters, at most 128 allowed"},
      {"taxel 0", "replica_id: character 5 (byte 0x20) is not printable ASCII"},
      {std::string("taxel\n", 6), "replica_id: character 5 (byte 0x0a) is not printable ASCII"},
      {"r\xc3\xa9", "replica_id: character 1 (byte 0xc3) is not printable ASCII"},
  };
  for (const Case& c : cases) {
    server::ServerOptions options = TestServerOptions();
    options.replica_id = c.id;
    auto server = server::TaxelServer::Start(options);
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(server.status().message(), HasSubstr(c.message));
  }
  EXPECT_THAT(server::ValidateReplicaId("").message(), HasSubstr("replica_id: must not be empty"));
  EXPECT_TRUE(server::ValidateReplicaId(std::string(128, '~')).ok()) << "128 characters is the bound, inclusive";
  EXPECT_TRUE(server::ValidateReplicaId("!").ok());
}

}  // namespace
}  // namespace taxel::testing
