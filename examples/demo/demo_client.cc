// taxel-demo: presses a ball into a 16×16 taxel pad over a few hundred steps, slides it, lifts it,
// and prints what the sensors see. Talks to a running taxel-server (see `make demo`).
//
//      ball (mesh, r = 2 cm)          step   0..99   descend until 1.5 mm into the pad
//          .--.                       step 100..199  slide 8 mm along +x
//   ______/____\______  pad (16×16, pitch 2 mm, R 1 mm)   step 200..299  lift off
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "taxel/client.h"

namespace {

namespace v1 = taxel::v1;

constexpr int kGrid = 16;
constexpr double kPitch = 0.002, kProbeRadius = 0.001, kBallRadius = 0.02;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "taxel-demo: %s\n", s.ToString().c_str());
  return 1;
}

// Geodesic-like UV sphere, enough for a demo (the server validates and indexes it).
void UvSphere(double r, int stacks, int slices, std::vector<double>* v, std::vector<int32_t>* t) {
  v->insert(v->end(), {0, 0, r});
  for (int i = 1; i < stacks; ++i) {
    const double th = M_PI * i / stacks;
    for (int j = 0; j < slices; ++j) {
      const double ph = 2 * M_PI * j / slices;
      v->insert(v->end(), {r * std::sin(th) * std::cos(ph), r * std::sin(th) * std::sin(ph), r * std::cos(th)});
    }
  }
  v->insert(v->end(), {0, 0, -r});
  const int south = 1 + (stacks - 1) * slices;
  auto ring = [&](int i, int j) { return 1 + (i - 1) * slices + (j % slices); };
  for (int j = 0; j < slices; ++j) t->insert(t->end(), {0, ring(1, j), ring(1, j + 1)});
  for (int i = 1; i + 1 < stacks; ++i) {
    for (int j = 0; j < slices; ++j) {
      t->insert(t->end(), {ring(i, j), ring(i + 1, j), ring(i + 1, j + 1)});
      t->insert(t->end(), {ring(i, j), ring(i + 1, j + 1), ring(i, j + 1)});
    }
  }
  for (int j = 0; j < slices; ++j) t->insert(t->end(), {south, ring(stacks - 1, j + 1), ring(stacks - 1, j)});
}

v1::SceneSpec MakeSpec(const std::string& mesh_id) {
  v1::SceneSpec spec;
  spec.set_name("taxel-demo");
  spec.set_num_envs(1);
  auto* hand = spec.add_entities();
  hand->set_name("hand");
  hand->set_kind(v1::ROBOT);
  auto* pad = hand->add_links();
  pad->set_name("pad");
  auto* box = pad->add_shapes();
  for (double h : {0.017, 0.017, 0.002}) box->mutable_box()->add_half_extents(h);
  box->mutable_pose()->add_position(0), box->mutable_pose()->add_position(0), box->mutable_pose()->add_position(-0.002);
  auto* ball = spec.add_entities();
  ball->set_name("ball");
  ball->set_kind(v1::OBJECT);
  auto* body = ball->add_links();
  body->set_name("body");
  body->add_shapes()->mutable_mesh()->set_mesh_id(mesh_id);
  std::vector<double> grid;
  for (int i = 0; i < kGrid; ++i) {
    for (int j = 0; j < kGrid; ++j) grid.insert(grid.end(), {(j - 7.5) * kPitch, (i - 7.5) * kPitch, 0.0});
  }
  for (auto kind : {v1::KINEMATIC_TAXEL, v1::CONTACT_DEPTH_PROBE}) {
    auto* s = spec.add_sensors();
    s->set_name(kind == v1::KINEMATIC_TAXEL ? "skin" : "depth");
    s->set_kind(kind);
    s->set_link("pad");
    *s->mutable_probe_local_pos() = taxel::DoubleTensor({kGrid, kGrid, 3}, grid);
    *s->mutable_probe_radius() = taxel::DoubleTensor({}, std::vector<double>{kProbeRadius});
    s->mutable_kinematic_taxel()->set_normal_stiffness(2000);
  }
  return spec;
}

void PrintPad(const std::vector<float>& force) {
  static const char* kShades = " .:-=+*#%@";
  double fmax = 1e-12;
  for (size_t k = 2; k < force.size(); k += 3) fmax = std::max<double>(fmax, std::abs(force[k]));
  std::printf("    |Fz| per taxel, seen from above (+y up): ' ' 0  . : - = + * # %% @  %.3f N (the largest)\n", fmax);
  for (int i = kGrid - 1; i >= 0; --i) {
    std::string row = "    |";
    for (int j = 0; j < kGrid; ++j) {
      const double f = std::abs(force[3 * (i * kGrid + j) + 2]) / fmax;
      row += kShades[std::min(9, static_cast<int>(f * 9.999))];
      row += ' ';
    }
    std::printf("%s|\n", row.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string target = argc > 1 ? argv[1] : "127.0.0.1:50051";
  auto client_or = taxel::Client::Connect(target);
  if (!client_or.ok()) return Fail(client_or.status());
  taxel::Client& client = **client_or;
  auto info = client.GetServerInfo();
  if (!info.ok()) return Fail(info.status());
  std::printf("Connected to taxel-server %s at %s (%d evaluation threads)\n", info->version().c_str(), target.c_str(),
              info->threads());

  std::vector<double> v;
  std::vector<int32_t> t;
  UvSphere(kBallRadius, 24, 48, &v, &t);
  auto mesh = client.UploadMesh(v, t);
  if (!mesh.ok()) return Fail(mesh.status());
  std::printf("Uploaded a %d-triangle ball mesh (watertight: %s)\n", mesh->num_triangles(),
              mesh->watertight() ? "yes" : "no");
  client.DeleteScene("taxel-demo").IgnoreError();  // leftovers of an earlier run
  auto scene = client.CreateScene(MakeSpec(mesh->mesh_id()));
  if (!scene.ok()) return Fail(scene.status());
  std::printf(
      "Scene '%s': moving links [%s, %s], sensors 'skin' (KinematicTaxel) and 'depth' (ContactDepthProbe), "
      "16x16 probes each\n",
      scene->name().c_str(), scene->moving_links(0).c_str(), scene->moving_links(1).c_str());
  std::printf(
      "Each probe is a sphere of radius %.0f mm centred on the pad's surface: it reads a depth of R + p when the\n"
      "ball is p into the pad, so taxels start touching while the ball is still up to 1 mm above it.\n"
      "Forces are in the pad's frame (+z out of the pad): a negative Fz is the ball pressing the pad down.\n\n",
      1e3 * kProbeRadius);

  auto stream = client.OpenStepStream();
  const double dt = 0.01;
  double peak_force = 0;
  for (int step = 0; step < 300; ++step) {
    // Ball centre above the pad origin: descend, slide, lift.
    double press, x = 0;
    if (step < 100) {
      press = -0.002 + 0.0035 * step / 99.0;  // from 2 mm above to 1.5 mm into the pad
    } else if (step < 200) {
      press = 0.0015;
      x = 0.008 * (step - 100) / 99.0;
    } else {
      press = 0.0015 - 0.0035 * (step - 200) / 99.0;
      x = 0.008;
    }
    const std::vector<double> poses = {0, 0, 0, 0, 0, 0, 1, x, 0, kBallRadius - press, 0, 0, 0, 1};
    v1::StepRequest req;
    req.set_scene("taxel-demo");
    *req.mutable_poses() = taxel::DoubleTensor({1, 2, 7}, poses);
    req.set_quat_order(v1::XYZW);
    req.set_dt(dt);
    auto r = stream->Step(req);
    if (!r.ok()) return Fail(r.status());
    std::vector<float> force, depth;
    for (const auto& reading : r->readings()) {
      if (reading.sensor() == "skin") force = *taxel::FloatValues(reading.channels().at("force"));
      if (reading.sensor() == "depth") depth = *taxel::FloatValues(reading.channels().at("depth"));
    }
    double fz = 0, fx = 0, dmax = 0;
    int touching = 0;
    for (int k = 0; k < kGrid * kGrid; ++k) {
      fx += force[3 * k];
      fz += force[3 * k + 2];
      dmax = std::max<double>(dmax, depth[k]);
      touching += depth[k] > 0;
    }
    peak_force = std::max(peak_force, std::abs(fz));
    if (step % 50 == 0 || step == 99 || step == 150 || step == 299) {
      const std::string where = press < 0 ? absl::StrFormat("%.2f mm above the pad", -1e3 * press)
                                          : absl::StrFormat("%.2f mm into the pad ", 1e3 * press);
      std::printf(
          "step %3d  ball at x=%+.1f mm, %s | %3d taxels touching, max depth %.2f mm, "
          "sum Fz %+.3f N, sum Fx %+.4f N  (server: evaluate %.0f us)\n",
          step, 1e3 * x, where.c_str(), touching, 1e3 * dmax, fz, fx, r->timing().evaluate_us());
      if (touching > 0 && (step == 99 || step == 150)) PrintPad(force);
    }
  }
  if (auto s = stream->Close(); !s.ok()) return Fail(s);
  client.DeleteScene("taxel-demo").IgnoreError();
  std::printf("\nDone: 300 steps streamed; peak total normal force %.3f N.\n", peak_force);
  return 0;
}
