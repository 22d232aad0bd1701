// The live viewer (server/viewer.h, server/http_server.h) against a real in-process server with
// --ui_address=127.0.0.1:0: frames checked against forces and depths worked out by hand, tokens
// and tenants, parameter errors, malformed and oversized requests (the gRPC side keeps serving).
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "server/http_server.h"
#include "tests/server/service_fixture.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace taxel::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Reply {
  int status = 0;
  std::string head, body;
};

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

// Everything the server sends on `fd` until it closes.
std::string ReadAll(int fd) {
  std::string all;
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, 5000) > 0) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  return all;
}

// Sends `bytes` to 127.0.0.1:port and reads until the server closes (5 s at most).
Reply RawHttp(int port, const std::string& bytes) {
  Reply r;
  const int fd = Connect(port);
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  const std::string all = ReadAll(fd);
  close(fd);
  const size_t end = all.find("\r\n\r\n");
  r.head = all.substr(0, end);
  r.body = end == std::string::npos ? "" : all.substr(end + 4);
  if (all.size() > 12) r.status = std::atoi(all.substr(9, 3).c_str());
  return r;
}

Reply Get(int port, const std::string& target, const std::string& token = "") {
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
  return RawHttp(port, req + "\r\n");
}

google::protobuf::Struct ParseJson(const std::string& body) {
  google::protobuf::Struct s;
  const auto status = google::protobuf::util::JsonStringToMessage(body, &s);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << body;
  return s;
}

// An error reply: its status and the parameter it names.
void ExpectError(const Reply& r, int status, const std::string& parameter, const std::string& message_part = "") {
  EXPECT_EQ(r.status, status) << r.head << "\n" << r.body;
  const google::protobuf::Struct json = ParseJson(r.body);
  EXPECT_EQ(json.fields().at("parameter").string_value(), parameter) << r.body;
  EXPECT_THAT(json.fields().at("error").string_value(), HasSubstr(message_part));
}

// Ball poses (xyzw; pad at the origin), one env each:
//   env 0: ball centre (0, 0, 0.054)        — 1 mm into the probe plane under it
//   env 1: ball centre (0, 0, 1)            — out of reach
//   env 2: ball centre (0.01, −0.01, 0.054) — the same, one pitch along +x and one along −y
std::vector<double> ViewerPoses() {
  std::vector<double> p;
  for (const Eigen::Vector3d& c :
       {Eigen::Vector3d(0, 0, 0.054), Eigen::Vector3d(0, 0, 1), Eigen::Vector3d(0.01, -0.01, 0.054)}) {
    const auto env = PosesXyzw({Eigen::Vector3d::Zero(), c});
    p.insert(p.end(), env.begin(), env.end());
  }
  return p;
}

// |F| of a KinematicTaxel probe at p (pad frame = world here) with the ball at c, by hand: the
// spring law F = k_n·depth·n with k_n = 1000 N/m (the default, exponent 1; no velocity on a
// first step), depth = R − (|p − c| − r_ball), 0 when negative; |n| = 1.
double HandForce(const Eigen::Vector3d& p, const Eigen::Vector3d& c) {
  const double depth = kProbeR - ((p - c).norm() - kBallR);
  return depth > 0 ? 1000.0 * depth : 0.0;
}

class ViewerTest : public ServerTest {
 protected:
  void SetUp() override {
    server::ServerOptions o = TestServerOptions();
    o.ui_address = "127.0.0.1:0";
    StartServer(o, Tokens());
    ASSERT_GT(server_->ui_port(), 0);
  }
  virtual std::map<std::string, std::string> Tokens() { return {}; }
  int ui() const { return server_->ui_port(); }
  void CreateAndStep(Client& client, const std::string& name) {
    auto info = client.CreateScene(ToWire(GraspSpec(name, 3, SphereShape(kBallR))));
    ASSERT_TRUE(info.ok()) << info.status();
    auto step = client.Step(MakeStep(name, 3, ViewerPoses()));
    ASSERT_TRUE(step.ok()) << step.status();
  }
};

TEST_F(ViewerTest, FrameOfAGridSensorIsTheForceMagnitudeWorkedOutByHand) {
  CreateAndStep(*client_, "grasp");
  // kin: 5 × 5 grid, pitch 1 cm, probe (row i, col j) at ((j − 2)·0.01, (i − 2)·0.01, 0.005).
  for (int env : {0, 1, 2}) {
    const Reply r = Get(ui(), "/api/frame?scene=grasp&sensor=kin&env=" + std::to_string(env) + "&channel=force");
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_THAT(r.head, HasSubstr("Content-Type: application/json"));
    const auto json = ParseJson(r.body).fields();
    EXPECT_EQ(json.at("rows").number_value(), 5);
    EXPECT_EQ(json.at("cols").number_value(), 5);
    EXPECT_EQ(json.at("step").number_value(), 1);
    EXPECT_EQ(json.at("unit").string_value(), "N");
    EXPECT_EQ(json.at("quantity").string_value(), "|force|");
    EXPECT_EQ(json.at("branch").string_value(), "measured");
    const Eigen::Vector3d c = env == 0   ? Eigen::Vector3d(0, 0, 0.054)
                              : env == 1 ? Eigen::Vector3d(0, 0, 1)
                                         : Eigen::Vector3d(0.01, -0.01, 0.054);
    const auto& values = json.at("values").list_value().values();
    ASSERT_EQ(values.size(), 25);
    double max = 0;
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 5; ++j) {
        const double expected = HandForce(Eigen::Vector3d((j - 2) * 0.01, (i - 2) * 0.01, kPadHalfZ), c);
        max = std::max(max, expected);
        EXPECT_NEAR(values[i * 5 + j].number_value(), expected, 1e-5) << "env " << env << " row " << i << " col " << j;
      }
    }
    EXPECT_NEAR(json.at("max").number_value(), max, 1e-5);
    EXPECT_EQ(json.at("min").number_value(), 0);
  }
  // Spot values of the hand calculation: env 0 centre 1000·0.003 = 3 N; a side neighbour
  // 1000·(0.002 − (√(0.01² + 0.049²) − 0.05)) = 1.990001 N; a diagonal one |p − c| = √0.002601 =
  // 0.051 exactly: 1 N. Env 2's peak is at row 1 (y = −1 cm), col 3 (x = +1 cm).
  const auto env0 = ParseJson(Get(ui(), "/api/frame?scene=grasp&sensor=kin&env=0").body).fields();
  EXPECT_EQ(env0.at("channel").string_value(), "force");  // the first viewable channel by default
  EXPECT_NEAR(env0.at("values").list_value().values(12).number_value(), 3.0, 1e-5);
  EXPECT_NEAR(env0.at("values").list_value().values(13).number_value(), 1.990001, 1e-5);
  EXPECT_NEAR(env0.at("values").list_value().values(18).number_value(), 1.0, 1e-5);
  const auto env2 = ParseJson(Get(ui(), "/api/frame?scene=grasp&sensor=kin&env=2").body).fields();
  EXPECT_NEAR(env2.at("values").list_value().values(1 * 5 + 3).number_value(), 3.0, 1e-5);
}

TEST_F(ViewerTest, FlatSensorsDepthAndContact) {
  CreateAndStep(*client_, "grasp");
  // depth: probes (0, 0), (1 cm, 0), (2 cm, 0) as one row; env 0: 3 mm, 1.990001 mm, 0.
  const auto depth = ParseJson(Get(ui(), "/api/frame?scene=grasp&sensor=depth&channel=depth&env=0").body).fields();
  EXPECT_EQ(depth.at("rows").number_value(), 1);
  EXPECT_EQ(depth.at("cols").number_value(), 3);
  EXPECT_EQ(depth.at("unit").string_value(), "m");
  const double side = kProbeR - (std::sqrt(0.01 * 0.01 + 0.049 * 0.049) - kBallR);
  const std::vector<double> expected = {0.003, side, 0};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(depth.at("values").list_value().values(k).number_value(), expected[k], 1e-8);
  // touch: (0, 0) is 3 mm deep (≥ the 0.1 mm threshold: 1); (2.5 cm, 2.5 cm) is 1 cm clear: 0.
  const auto touch = ParseJson(Get(ui(), "/api/frame?scene=grasp&sensor=touch&channel=contact").body).fields();
  EXPECT_EQ(touch.at("unit").string_value(), "");
  EXPECT_EQ(touch.at("values").list_value().values(0).number_value(), 1);
  EXPECT_EQ(touch.at("values").list_value().values(1).number_value(), 0);
  // Without imperfections the ground truth is the measured branch.
  const Reply truth = Get(ui(), "/api/frame?scene=grasp&sensor=depth&channel=depth&branch=ground_truth");
  EXPECT_EQ(ParseJson(truth.body).fields().at("values").list_value().values(0).number_value(),
            depth.at("values").list_value().values(0).number_value());
}

TEST_F(ViewerTest, ScenesListsSensorsLayoutsAndChannels) {
  CreateAndStep(*client_, "grasp");
  const Reply r = Get(ui(), "/api/scenes");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto scenes = ParseJson(r.body).fields().at("scenes").list_value().values();
  ASSERT_EQ(scenes.size(), 1);
  const auto& scene = scenes[0].struct_value().fields();
  EXPECT_EQ(scene.at("name").string_value(), "grasp");
  EXPECT_EQ(scene.at("num_envs").number_value(), 3);
  EXPECT_EQ(scene.at("step").number_value(), 1);
  const auto& sensors = scene.at("sensors").list_value().values();
  ASSERT_EQ(sensors.size(), 3);
  const auto& kin = sensors[0].struct_value().fields();
  EXPECT_EQ(kin.at("name").string_value(), "kin");
  EXPECT_EQ(kin.at("kind").string_value(), "kinematic_taxel");
  EXPECT_EQ(kin.at("link").string_value(), "hand/pad");
  EXPECT_EQ(kin.at("rows").number_value(), 5);
  EXPECT_EQ(kin.at("cols").number_value(), 5);
  EXPECT_TRUE(kin.at("grid").bool_value());
  const auto& channels = kin.at("channels").list_value().values();
  ASSERT_EQ(channels.size(), 2);
  EXPECT_EQ(channels[0].struct_value().fields().at("name").string_value(), "force");
  EXPECT_EQ(channels[1].struct_value().fields().at("unit").string_value(), "N·m");
  const auto& depth = sensors[1].struct_value().fields();
  EXPECT_FALSE(depth.at("grid").bool_value());
  EXPECT_EQ(depth.at("cols").number_value(), 3);
  // ContactDepthProbe: depth and area; normal and partner are not viewable.
  EXPECT_EQ(depth.at("channels").list_value().values_size(), 2);
}

TEST_F(ViewerTest, ParameterErrorsNameTheParameter) {
  CreateAndStep(*client_, "grasp");
  ExpectError(Get(ui(), "/api/frame?sensor=kin"), 400, "scene", "required");
  ExpectError(Get(ui(), "/api/frame?scene=grasp"), 400, "sensor", "required");
  ExpectError(Get(ui(), "/api/frame?scene=nope&sensor=kin"), 404, "scene", "no scene named 'nope'");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&sensor=nope"), 404, "sensor", "no sensor named 'nope'");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&sensor=kin&env=3"), 400, "env", "3 is out of range [0, 3)");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&sensor=kin&env=-1"), 400, "env", "out of range");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&sensor=kin&env=x1"), 400, "env", "not an integer");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&sensor=kin&channel=normal"), 400, "channel", "force, torque");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&sensor=kin&branch=clean"), 400, "branch");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&sensor=kin&colour=red"), 400, "colour", "unknown query parameter");
  ExpectError(Get(ui(), "/api/frame?scene=grasp&scene=grasp&sensor=kin"), 400, "scene", "more than once");
  ExpectError(Get(ui(), "/api/scenes?scene=grasp"), 400, "scene", "unknown query parameter");
  ExpectError(Get(ui(), "/api/nothing"), 404, "path");
  // Percent-decoding: "gr%61sp" is "grasp".
  EXPECT_EQ(Get(ui(), "/api/frame?scene=gr%61sp&sensor=kin").status, 200);
}

TEST_F(ViewerTest, PageIsServedFromTheBinary) {
  const Reply page = Get(ui(), "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_THAT(page.head, HasSubstr("Content-Type: text/html"));
  EXPECT_THAT(page.head, HasSubstr("Content-Security-Policy: default-src 'none'"));
  EXPECT_THAT(page.body, HasSubstr("<canvas id=\"heat\""));
  EXPECT_THAT(page.body, HasSubstr("/api/frame?"));
  EXPECT_EQ(page.body.find("http://"), std::string::npos) << "the page loads nothing from elsewhere";
  EXPECT_EQ(page.body.find("https://"), std::string::npos);
  const Reply head = RawHttp(ui(), "HEAD / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.status, 200);
  EXPECT_THAT(head.head, HasSubstr("Content-Length: " + std::to_string(page.body.size())));
  EXPECT_EQ(head.body, "");
}

TEST_F(ViewerTest, MalformedAndOversizedRequestsAre400AndGrpcKeepsServing) {
  CreateAndStep(*client_, "grasp");
  EXPECT_EQ(RawHttp(ui(), "GARBAGE\r\n\r\n").status, 400);
  EXPECT_EQ(RawHttp(ui(), "GET /api/scenes HTTP/2.0\r\n\r\n").status, 400);
  EXPECT_EQ(RawHttp(ui(), "GET api/scenes HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(RawHttp(ui(), "GET /api/frame?scene=%zz HTTP/1.1\r\n\r\n").status, 400);
  EXPECT_EQ(RawHttp(ui(), "GET / HTTP/1.1\r\nno colon here\r\n\r\n").status, 400);
  EXPECT_EQ(RawHttp(ui(), "GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello").status, 400);
  const Reply post = RawHttp(ui(), "POST /api/scenes HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(post.status, 405);
  EXPECT_THAT(post.head, HasSubstr("Allow: GET, HEAD"));
  // 20 kB of headers (the limit is 8 KiB), with and without an end.
  const std::string big = "GET / HTTP/1.1\r\nX-Filler: " + std::string(20000, 'a');
  const Reply oversized = RawHttp(ui(), big + "\r\n\r\n");
  EXPECT_EQ(oversized.status, 400);
  EXPECT_THAT(oversized.body, HasSubstr("larger than 8192 bytes"));
  EXPECT_EQ(RawHttp(ui(), big).status, 400);
  // 24 connections that send nothing hold every viewer thread and queue slot: gRPC is untouched.
  std::vector<int> idle;
  for (int i = 0; i < 24; ++i) idle.push_back(Connect(ui()));
  auto step = client_->Step(MakeStep("grasp", 3, ViewerPoses()));
  EXPECT_TRUE(step.ok()) << step.status();
  EXPECT_EQ(step->step(), 2);
  auto info = client_->GetServerInfo();
  EXPECT_TRUE(info.ok()) << info.status();
  for (int fd : idle) close(fd);
  // The idle connections closed, the viewer serves again and sees step 2. Its threads notice the
  // closed connections one by one: until the queue has room, a new connection may still get the
  // documented "503 ... retry" (seen under ASan), so the client retries for up to 10 s.
  Reply after = Get(ui(), "/api/frame?scene=grasp&sensor=kin");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (after.status == 503 && std::chrono::steady_clock::now() < deadline) {
    EXPECT_THAT(after.body, HasSubstr("retry"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    after = Get(ui(), "/api/frame?scene=grasp&sensor=kin");
  }
  ASSERT_EQ(after.status, 200) << after.body;
  EXPECT_EQ(ParseJson(after.body).fields().at("step").number_value(), 2);
}

class ViewerTokensTest : public ViewerTest {
 protected:
  std::map<std::string, std::string> Tokens() override { return {{"token-a", "alice"}, {"token-b", "bob"}}; }
};

TEST_F(ViewerTokensTest, EveryRequestNeedsATokenAndSeesOnlyItsTenant) {
  auto alice = NewClient("token-a");
  auto bob = NewClient("token-b");
  ASSERT_NE(alice, nullptr);
  ASSERT_NE(bob, nullptr);
  CreateAndStep(*alice, "a-scene");
  CreateAndStep(*bob, "b-scene");
  for (const std::string path : {"/", "/api/scenes", "/api/frame?scene=a-scene&sensor=kin", "/api/nothing"}) {
    const Reply none = Get(ui(), path);
    EXPECT_EQ(none.status, 401) << path;
    EXPECT_THAT(none.head, HasSubstr("WWW-Authenticate: Bearer"));
    EXPECT_EQ(none.body.find("a-scene\""), std::string::npos) << "a 401 reveals nothing";
    EXPECT_EQ(Get(ui(), path, "token-wrong").status, 401) << path;
    EXPECT_EQ(Get(ui(), path + std::string(path.find('?') == std::string::npos ? "?" : "&") + "token=nope").status, 401)
        << path;
  }
  ExpectError(RawHttp(ui(), "GET /api/scenes HTTP/1.1\r\nAuthorization: Basic dG9rZW4tYQ==\r\n\r\n"), 401,
              "authorization", "Bearer");

  // Each tenant lists only its own scene; the other's is the same 404 as a scene nobody made.
  const auto a_scenes = ParseJson(Get(ui(), "/api/scenes", "token-a").body).fields().at("scenes").list_value();
  ASSERT_EQ(a_scenes.values_size(), 1);
  EXPECT_EQ(a_scenes.values(0).struct_value().fields().at("name").string_value(), "a-scene");
  const auto b_scenes = ParseJson(Get(ui(), "/api/scenes?token=token-b").body).fields().at("scenes").list_value();
  ASSERT_EQ(b_scenes.values_size(), 1);
  EXPECT_EQ(b_scenes.values(0).struct_value().fields().at("name").string_value(), "b-scene");
  ExpectError(Get(ui(), "/api/frame?scene=b-scene&sensor=kin", "token-a"), 404, "scene", "no scene named 'b-scene'");
  const Reply own = Get(ui(), "/api/frame?scene=a-scene&sensor=kin", "token-a");
  ASSERT_EQ(own.status, 200) << own.body;
  EXPECT_NEAR(ParseJson(own.body).fields().at("max").number_value(), 3.0, 1e-5);
  // The page with ?token= (it then sends the token as a header).
  EXPECT_EQ(Get(ui(), "/?token=token-b&scene=b-scene").status, 200);
}

TEST(HttpRequestParse, DecodesPathQueryAndHeaders) {
  auto req = server::ParseHttpRequest(
      "GET /a%20b?x=1+2&y=%2F&flag&x=3 HTTP/1.1\r\nHost: h\r\nAUTHORIZATION:  Bearer t \r\n\r\n");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->method, "GET");
  EXPECT_EQ(req->path, "/a b");
  ASSERT_EQ(req->query.size(), 4u);
  EXPECT_EQ(req->query[0], std::make_pair(std::string("x"), std::string("1 2")));
  EXPECT_EQ(req->query[1], std::make_pair(std::string("y"), std::string("/")));
  EXPECT_EQ(req->query[2], std::make_pair(std::string("flag"), std::string("")));
  EXPECT_EQ(req->query[3].second, "3");
  EXPECT_EQ(req->headers.at("authorization"), "Bearer t");
  EXPECT_THAT(server::ParseHttpRequest("GET /%4 HTTP/1.1\r\n\r\n").status().ToString(), HasSubstr("two hex digits"));
  EXPECT_THAT(
      std::string(server::ParseHttpRequest("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").status().message()),
      StartsWith("transfer-encoding"));
}

TEST(HttpServerStart, RefusesBadAddresses) {
  auto handler = [](const server::HttpRequest&) { return server::HttpResponse(); };
  auto no_port = server::HttpServer::Start("127.0.0.1", handler);
  EXPECT_EQ(no_port.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_port.status().ToString(), HasSubstr("ui_address: '127.0.0.1' is not host:port"));
  auto host = server::HttpServer::Start("example.org:80", handler);
  EXPECT_THAT(host.status().ToString(), HasSubstr("not an IPv4 address"));
  auto first = server::HttpServer::Start("127.0.0.1:0", handler);
  ASSERT_TRUE(first.ok()) << first.status();
  auto taken = server::HttpServer::Start("127.0.0.1:" + std::to_string((*first)->port()), handler);
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kUnavailable);
}

// One thread, one waiting slot: while the thread is inside a handler and one connection waits, a
// third connection is answered 503 at once; Stop ends a connection that sends nothing at once
// (rather than after its read timeout of 60 s).
TEST(HttpServerLoad, BeyondThreadsAndQueueIs503AndStopEndsIdleConnections) {
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  auto handler = [&, released](const server::HttpRequest& r) {
    if (r.path == "/block") {
      entered.set_value();
      released.wait();
    }
    server::HttpResponse out;
    out.body = "done " + r.path;
    return out;
  };
  server::HttpServerOptions options;
  options.threads = 1;
  options.max_pending = 1;
  options.read_timeout_seconds = 60;
  auto http = server::HttpServer::Start("127.0.0.1:0", handler, options);
  ASSERT_TRUE(http.ok()) << http.status();
  const int port = (*http)->port();
  const int blocked = Connect(port);
  const std::string get_block = "GET /block HTTP/1.1\r\n\r\n";
  ASSERT_EQ(send(blocked, get_block.data(), get_block.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get_block.size()));
  entered.get_future().wait();            // the only thread is busy
  const int waiting = Connect(port);      // accepted first: takes the one waiting slot
  const Reply busy = Get(port, "/next");  // accepted after it: no room
  EXPECT_EQ(busy.status, 503);
  EXPECT_THAT(busy.body, HasSubstr("too many connections"));
  release.set_value();
  EXPECT_THAT(ReadAll(blocked), HasSubstr("done /block"));
  close(blocked);
  // The waiting connection is now being served, and sends nothing: Stop shuts it down.
  const auto t0 = std::chrono::steady_clock::now();
  (*http)->Stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30.0);
  EXPECT_EQ(ReadAll(waiting), "") << "closed without an answer";
  close(waiting);
}

}  // namespace
}  // namespace taxel::testing
