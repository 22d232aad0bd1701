// taxel-example-mujoco: MuJoCo simulates, Taxel senses. Every MuJoCo step streams the body poses
// (data->xpos, data->xquat: WXYZ) to Taxel over one StepStream, and Taxel's ContactDepthProbe
// readings are checked against MuJoCo's own contact distances. Exit status 1 when they disagree.
// The Taxel scene is imported from the compiled MuJoCo model (taxel/model_import.h).
//
//   side view (x right, z up; not to scale)
//
//            tip: sphere r 10 mm on slide joints x, z (position servos)
//             .-.   approach, press ~1 mm into the pad, slide 15 mm along +x, lift
//            ( + )                                           ball: sphere r 20 mm, free joint,
//   __________'*'__________  * = tip probe (R 1 mm)             .--.  dropped from z = 15 cm
//  | : : : : : : : : : : : | pad: box 60 x 60 x 10 mm,        ( +  )
//  |   15 x 15 probes (:)  |      top face z = 55 mm           '*'   * = ball probe (R 1 mm)
//  |_______________________|      pitch 4 mm, R 1.5 mm
//  ================================ floor: plane z = 0 ===================================
//
// What is compared (all depths in metres):
//  - tip probe vs the MuJoCo tip-pad contact, ball probe vs the ball-floor contact. Each probe
//    sits at the point of its sphere where MuJoCo measures the contact (the lowest point; the tip
//    cannot rotate, the ball falls straight and does not turn), so depth = R − dist whenever MuJoCo
//    reports a contact (dist < 0: penetration), and depth ≤ R when it reports none (dist ≥ 0).
//  - every pad probe vs MuJoCo's distance between the tip and a "ghost" sphere of radius R at that
//    probe: depth = max(0, −dist). The ghost geoms are in the model with margin 5 mm and gap 1 m,
//    so MuJoCo detects them (dist < margin) but excludes them from the physics
//    (dist ≥ margin − gap); a twin model without them is stepped alongside to show that.
// MuJoCo's sphere-box, sphere-plane and sphere-sphere distances are closed forms in double
// precision, as are Taxel's (poses travel as float64), so the only difference is the rounding of
// Taxel's float32 output: half an ulp, at most 2^-30 m ≈ 9.3e-10 m for depths below 16 mm. The
// tolerance, 1e-8 m, leaves a factor of ten over that and still catches any geometric error (a
// wrong frame, quaternion order or shape size shows up at 1e-6 m or more).
//
// Usage: taxel-example-mujoco [--target host:port]
//   Without --target the example starts a Taxel server in this process on 127.0.0.1:0.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "examples/common/example_support.h"
#include "taxel/client.h"
#include "taxel/model_import.h"
#include "taxel/scene_bundle.h"
#include <mujoco/mujoco.h>

namespace {

namespace v1 = taxel::v1;
using taxel::examples::AddProbeSensor;
using taxel::examples::AgreementCheck;
using taxel::examples::Channel;
using taxel::examples::PrintDepthGrid;

// Geometry shared by the MuJoCo model and the Taxel scene (m).
constexpr double kPadHalf[3] = {0.03, 0.03, 0.005};
constexpr double kPadZ = 0.05;  // pad centre above the floor
constexpr double kTipRadius = 0.01;
constexpr double kTipStartZ = 0.08;  // tip centre at joint position 0
constexpr double kBallRadius = 0.02;
constexpr double kBallStart[3] = {0.15, 0.0, 0.15};
constexpr int kGrid = 15;  // pad probes: kGrid x kGrid
constexpr double kPitch = 0.004;
constexpr double kPadProbeRadius = 0.0015;
constexpr double kPointProbeRadius = 0.001;  // tip and ball probes
constexpr double kGhostMargin = 0.005;       // ghost contacts are reported up to 5 mm apart

constexpr double kTimestep = 0.002;  // s
constexpr int kSteps = 1000;         // 2 s
constexpr double kToleranceM = 1e-8;
constexpr char kSceneName[] = "mujoco-example";

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "taxel-example-mujoco: %s\n", s.ToString().c_str());
  return 1;
}

// Pad probe centres in the pad frame, [kGrid, kGrid, 3] row-major: row i along y, column j along x.
std::vector<double> PadProbePositions() {
  std::vector<double> p;
  for (int i = 0; i < kGrid; ++i) {
    for (int j = 0; j < kGrid; ++j) {
      p.insert(p.end(), {(j - (kGrid - 1) / 2.0) * kPitch, (i - (kGrid - 1) / 2.0) * kPitch, kPadHalf[2]});
    }
  }
  return p;
}

// The MJCF model. Real geoms touch each other (contype bit 1) and are seen by the ghost probes
// (conaffinity bit 2); ghosts touch nothing themselves (conaffinity 0).
std::string ModelXml(bool with_ghost_probes) {
  std::string ghosts;
  if (with_ghost_probes) {
    const std::vector<double> p = PadProbePositions();
    for (size_t k = 0; k < p.size() / 3; ++k) {
      absl::StrAppendFormat(&ghosts, "      <geom name=\"probe%d\" class=\"ghost\" pos=\"%.17g %.17g %.17g\"/>\n", k,
                            p[3 * k], p[3 * k + 1], p[3 * k + 2]);
    }
  }
  return absl::StrFormat(R"(<mujoco model="taxel-mujoco-example">
  <option timestep="%g"/>
  <default>
    <geom contype="1" conaffinity="3"/>
    <default class="ghost">
      <geom type="sphere" size="%g" contype="2" conaffinity="0" margin="%g" gap="1" group="3"/>
    </default>
  </default>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="pad" pos="0 0 %g">
      <geom name="pad" type="box" size="%g %g %g"/>
%s    </body>
    <body name="tip" pos="0 0 %g">
      <joint name="tip_x" type="slide" axis="1 0 0"/>
      <joint name="tip_z" type="slide" axis="0 0 1"/>
      <geom name="tip" type="sphere" size="%g" mass="0.05"/>
    </body>
    <body name="ball" pos="%g %g %g">
      <freejoint/>
      <geom name="ball" type="sphere" size="%g" mass="0.1"/>
    </body>
  </worldbody>
  <actuator>
    <position name="servo_x" joint="tip_x" kp="300"/>
    <position name="servo_z" joint="tip_z" kp="300"/>
  </actuator>
</mujoco>
)",
                         kTimestep, kPadProbeRadius, kGhostMargin, kPadZ, kPadHalf[0], kPadHalf[1], kPadHalf[2], ghosts,
                         kTipStartZ, kTipRadius, kBallStart[0], kBallStart[1], kBallStart[2], kBallRadius);
}

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct MjDataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;
using DataPtr = std::unique_ptr<mjData, MjDataDeleter>;

// Compiles an MJCF string through MuJoCo's virtual file system (no temporary file).
absl::StatusOr<ModelPtr> LoadModel(const std::string& xml) {
  auto vfs = std::make_unique<mjVFS>();  // ~2 MB of file-name table: not on the stack
  mj_defaultVFS(vfs.get());
  if (mj_makeEmptyFileVFS(vfs.get(), "model.xml", static_cast<int>(xml.size())) != 0) {
    return absl::InternalError("mj_makeEmptyFileVFS failed");
  }
  std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), "model.xml")], xml.data(), xml.size());
  char error[1024] = "";
  ModelPtr model(mj_loadXML("model.xml", vfs.get(), error, sizeof(error)));
  mj_deleteVFS(vfs.get());
  if (model == nullptr) return absl::InvalidArgumentError(absl::StrCat("mj_loadXML: ", error));
  return model;
}

// The Taxel scene of the model, imported from the compiled model itself (taxel/model_import.h):
// the floor plane → TERRAIN "mujoco_terrain/world", the pad (a body without joints) → STATIC
// "mujoco_static/pad", the tip and the ball (joints) → links "mujoco/tip" and "mujoco/ball" of one
// ROBOT entity, moved every step by data->xpos / data->xquat. Only geom group 0 is taken: the
// ghost probes (group 3) can collide in MuJoCo (contype 2) but are not part of the scene.
absl::StatusOr<taxel::ImportedModel> ImportScene(const mjModel* m) {
  taxel::ImportOptions options;
  options.entity = "mujoco";
  options.scene_name = kSceneName;
  options.groups = {0};
  auto imported = taxel::ImportModel(m, options);
  if (!imported.ok()) return imported.status();
  v1::SceneSpec* spec = &imported->bundle.scene;
  const std::vector<double> grid = PadProbePositions();
  AddProbeSensor(spec, "pad_depth", v1::CONTACT_DEPTH_PROBE, "mujoco_static/pad", {kGrid, kGrid, 3}, grid,
                 kPadProbeRadius);
  AddProbeSensor(spec, "pad_skin", v1::KINEMATIC_TAXEL, "mujoco_static/pad", {kGrid, kGrid, 3}, grid, kPadProbeRadius);
  AddProbeSensor(spec, "tip_probe", v1::CONTACT_DEPTH_PROBE, "mujoco/tip", {1, 3}, {0, 0, -kTipRadius},
                 kPointProbeRadius);
  AddProbeSensor(spec, "ball_probe", v1::CONTACT_DEPTH_PROBE, "mujoco/ball", {1, 3}, {0, 0, -kBallRadius},
                 kPointProbeRadius);
  return imported;
}

// Servo targets of the tip's slide joints (m, relative to the start pose) at time t (s).
void TipTargets(double t, double* x, double* z) {
  const double contact_z = kPadZ + kPadHalf[2] + kTipRadius - kTipStartZ;  // joint z at first touch
  const double press_z = contact_z - 0.012;                                // servo pushes past it
  *x = t < 0.6 ? 0 : std::min(0.015, 0.015 * (t - 0.6));
  if (t < 0.4) {
    *z = press_z * t / 0.4;
  } else if (t < 1.6) {
    *z = press_z;
  } else {
    *z = press_z + 0.1 * (t - 1.6);  // lift at 10 cm/s
  }
}

const char* Phase(double t) { return t < 0.4 ? "approach" : t < 0.6 ? "press" : t < 1.6 ? "slide" : "lift"; }

// One comparison between Taxel and MuJoCo, accumulated over the run.

struct Checks {
  AgreementCheck tip{"tip probe vs tip-pad contact", 100, kToleranceM};
  AgreementCheck ball{"ball probe vs ball-floor contact", 100, kToleranceM};
  AgreementCheck pad{"pad probes vs ghost-probe contacts", 1000, kToleranceM};
};

// Geom ids of the model's named geoms, and the pad probe index of each ghost geom (-1: not a ghost).
struct GeomIds {
  int pad, tip, ball, floor;
  std::vector<int> probe_of_geom;
};

GeomIds FindGeoms(const mjModel* m) {
  GeomIds g;
  g.pad = mj_name2id(m, mjOBJ_GEOM, "pad");
  g.tip = mj_name2id(m, mjOBJ_GEOM, "tip");
  g.ball = mj_name2id(m, mjOBJ_GEOM, "ball");
  g.floor = mj_name2id(m, mjOBJ_GEOM, "floor");
  g.probe_of_geom.assign(m->ngeom, -1);
  for (int k = 0; k < kGrid * kGrid; ++k) {
    const int id = mj_name2id(m, mjOBJ_GEOM, absl::StrCat("probe", k).c_str());
    if (id >= 0) g.probe_of_geom[id] = k;
  }
  return g;
}

// MuJoCo's distance between geoms a and b in the current contact list; NaN when it reported none.
double PairDistance(const mjData* d, int a, int b) {
  for (int c = 0; c < d->ncon; ++c) {
    const mjContact& con = d->contact[c];
    if ((con.geom1 == a && con.geom2 == b) || (con.geom1 == b && con.geom2 == a)) return con.dist;
  }
  return NAN;
}

// Taxel's readings of one step, and what MuJoCo says they should be.
struct StepComparison {
  std::vector<float> pad_depth, pad_force;  // [kGrid², ] and [kGrid², 3]
  float tip_depth = 0, ball_depth = 0;
  std::vector<double> pad_expected;        // max(0, −dist) of each ghost probe
  double tip_dist = NAN, ball_dist = NAN;  // MuJoCo contact distances; NaN: no contact
};

StepComparison Compare(const mjData* d, const GeomIds& geoms, const v1::StepResponse& r, Checks* checks) {
  StepComparison c;
  c.pad_depth = Channel(r, "pad_depth", "depth");
  c.pad_force = Channel(r, "pad_skin", "force");
  c.tip_depth = Channel(r, "tip_probe", "depth").at(0);
  c.ball_depth = Channel(r, "ball_probe", "depth").at(0);
  // Point probes: depth = R − dist with a contact (dist < 0), at most R without one (dist ≥ 0).
  c.tip_dist = PairDistance(d, geoms.tip, geoms.pad);
  c.ball_dist = PairDistance(d, geoms.ball, geoms.floor);
  for (auto [check, depth, dist] :
       {std::tuple{&checks->tip, c.tip_depth, c.tip_dist}, std::tuple{&checks->ball, c.ball_depth, c.ball_dist}}) {
    if (std::isnan(dist)) {
      check->AtMost(depth, kPointProbeRadius);
    } else {
      check->Equal(depth, kPointProbeRadius - dist, dist < 0);
    }
  }
  // Pad probes: depth = max(0, −dist) of the ghost sphere's deepest contact (0 when it has none).
  c.pad_expected.assign(kGrid * kGrid, 0.0);
  for (int i = 0; i < d->ncon; ++i) {
    const mjContact& con = d->contact[i];
    const int k = std::max(geoms.probe_of_geom[con.geom1], geoms.probe_of_geom[con.geom2]);
    if (k >= 0) c.pad_expected[k] = std::max(c.pad_expected[k], -con.dist);
  }
  for (int k = 0; k < kGrid * kGrid; ++k) checks->pad.Equal(c.pad_depth[k], c.pad_expected[k], c.pad_expected[k] > 0);
  return c;
}

std::string Mm(double m) { return std::isnan(m) ? "      -" : absl::StrFormat("%+7.3f", 1e3 * m); }

void PrintHeader() {
  std::printf(
      "  t [s]  phase    |  tip: dist  depth  R-dist |  pad: n  max depth (mujoco)  sum Fz [N] |"
      "  ball: z     dist  depth  R-dist   (lengths in mm)\n");
}

void PrintRow(double t, const StepComparison& c, double ball_z) {
  int touching = 0;
  double fz = 0;
  for (size_t k = 0; k < c.pad_depth.size(); ++k) {
    touching += c.pad_depth[k] > 0;
    fz += c.pad_force[3 * k + 2];
  }
  std::printf("  %5.3f  %-8s | %s %s %s | %6d %7.3f  (%7.3f)   %+8.3f   | %7.2f %s %s %s\n", t, Phase(t),
              Mm(c.tip_dist).c_str(), Mm(c.tip_depth).c_str(), Mm(kPointProbeRadius - c.tip_dist).c_str(), touching,
              1e3 * *std::max_element(c.pad_depth.begin(), c.pad_depth.end()),
              1e3 * *std::max_element(c.pad_expected.begin(), c.pad_expected.end()), fz, 1e3 * ball_z,
              Mm(c.ball_dist).c_str(), Mm(c.ball_depth).c_str(), Mm(kPointProbeRadius - c.ball_dist).c_str());
}

bool Report(const Checks& checks, double twin_gap) {
  bool ok = taxel::examples::ReportAgreement("mujoco", kSteps, kToleranceM, {&checks.tip, &checks.ball, &checks.pad});
  std::printf("  ghost probes leave the physics unchanged: max |qpos - qpos without them| = %.3g  %s\n", twin_gap,
              twin_gap == 0 ? "ok" : "FAILED");
  ok = ok && twin_gap == 0;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok;
}

int Run(taxel::Client& client) {
  auto model = LoadModel(ModelXml(true));
  if (!model.ok()) return Fail(model.status());
  auto twin = LoadModel(ModelXml(false));  // the same physics without the ghost probes
  if (!twin.ok()) return Fail(twin.status());
  const mjModel* m = model->get();
  DataPtr d(mj_makeData(m)), d_twin(mj_makeData(twin->get()));
  const GeomIds geoms = FindGeoms(m);

  client.DeleteScene(kSceneName).IgnoreError();  // leftovers of an earlier run against the same server
  auto imported = ImportScene(m);
  if (!imported.ok()) return Fail(imported.status());
  auto info = taxel::CreateSceneFromBundle(client, imported->bundle);
  if (!info.ok()) return Fail(info.status());
  // The scene's moving links are the ROBOT entity's, in the importer's order (MovingLinkPoses).
  if (info->moving_links_size() != 2 || info->moving_links(0) != "mujoco/tip" ||
      info->moving_links(1) != "mujoco/ball") {
    return Fail(
        absl::InternalError(absl::StrCat("unexpected moving links [", absl::StrJoin(info->moving_links(), ", "), "]")));
  }
  const int ball_body = mj_name2id(m, mjOBJ_BODY, "ball");
  std::printf("MuJoCo %s; Taxel scene '%s', moving links [%s]; %d pad probes\n\n", mj_versionString(),
              info->name().c_str(), absl::StrJoin(info->moving_links(), ", ").c_str(), kGrid * kGrid);
  PrintHeader();

  Checks checks;
  double twin_gap = 0;
  auto stream = client.OpenStepStream();
  v1::StepRequest req;
  req.set_scene(kSceneName);
  req.set_quat_order(v1::WXYZ);  // MuJoCo's xquat
  req.set_dt(kTimestep);
  req.mutable_read()->add_branches(v1::GROUND_TRUTH);
  for (int step = 0; step < kSteps; ++step) {
    const double t = step * kTimestep;
    for (mjData* data : {d.get(), d_twin.get()}) TipTargets(t, &data->ctrl[0], &data->ctrl[1]);
    // mj_step runs mj_forward (poses, then contacts) before integrating: xpos, xquat and contact
    // describe the same configuration, the one at time t.
    mj_step(m, d.get());
    mj_step(twin->get(), d_twin.get());
    for (int q = 0; q < m->nq; ++q) twin_gap = std::max(twin_gap, std::abs(d->qpos[q] - d_twin->qpos[q]));

    const std::vector<double> poses = taxel::MovingLinkPoses(*imported, d.get());
    *req.mutable_poses() = taxel::DoubleTensor({1, static_cast<int64_t>(poses.size() / 7), 7}, poses);
    auto r = stream->Step(req);
    if (!r.ok()) return Fail(r.status());
    const StepComparison c = Compare(d.get(), geoms, *r, &checks);
    if (step % 100 == 50 || step == 85) PrintRow(t, c, d->xpos[3 * ball_body + 2]);
    if (step == 650) {
      std::printf("         pad depth at t = %.2f s (tip sliding along +x, up = +y):\n", t);
      PrintDepthGrid(c.pad_depth, kGrid);
    }
  }
  if (auto s = stream->Close(); !s.ok()) return Fail(s);
  client.DeleteScene(kSceneName).IgnoreError();
  return Report(checks, twin_gap) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return taxel::examples::ExampleMain(argc, argv, "taxel-example-mujoco", Run); }
