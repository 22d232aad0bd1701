// Step and StepStream: poses and twists of the wrong shape, dtype or byte length, non-finite
// numbers, undeclared enum numbers, env ids, reads of unknown things, reported contacts, and
// requests whose work or response is too large. A StepStream case sends its request as the
// stream's only message: the stream must end with the status, without a response.
#include <string>

#include "tests/server/bad_inputs/bad_input.h"

namespace taxel::testing {
namespace {

// GoodPoses with element (env, link, k) replaced.
std::vector<double> PosesWith(int env, int link, int k, double v) {
  std::vector<double> p = GoodPoses();
  p[(env * kMovingLinks + link) * 7 + k] = v;
  return p;
}

// A step of "reported" with one reported contact: env 0, body `body` (0 hand/pad), partner
// `partner` (1 ball/body), 1 N along z; `fn` spoils it.
RequestBytes Reported(std::function<void(v1::StepRequest&)> fn, int body = 0, int partner = 1) {
  return Build<v1::StepRequest>([fn = std::move(fn), body, partner](v1::StepRequest& r, BadInputContext&) {
    r = MakeStep("reported", kRefEnvs, GoodPoses());
    v1::ReportedContacts* k = r.mutable_contacts();
    *k->mutable_env() = Int32Tensor({1}, {0});
    *k->mutable_body() = Int32Tensor({1}, {body});
    *k->mutable_partner() = Int32Tensor({1}, {partner});
    *k->mutable_force() = DoubleTensor({1, 3}, {0, 0, 1});
    fn(r);
  });
}

// A ContactDepthProbe on the pad with a measurement delay of `delay` s and jitter `jitter` s;
// `grid` × `grid` probes (pitch 1 cm).
v1::SensorSpec DelayedSensor(const std::string& name, double delay, double jitter, int grid = 1) {
  v1::SensorSpec s = GoodSensor();
  s.set_name(name);
  std::vector<double> p;
  for (const auto& q : PlanarGrid(grid, grid, 0.01, kPadHalfZ)) p.insert(p.end(), {q.x(), q.y(), q.z()});
  *s.mutable_probe_local_pos() = DoubleTensor({grid, grid, 3}, p);
  s.mutable_imperfections()->set_delay(delay);
  s.mutable_imperfections()->set_jitter(jitter);
  return s;
}

}  // namespace

std::vector<BadInput> StepCases() {
  const std::string m = "Step";
  std::vector<BadInput> cases = {
      Case("poses_missing", m, StepWith([](auto& r) { r.clear_poses(); }), kInvalid, "poses", "required"),
      Case("poses_shape", m, StepWith([](auto& r) {
             *r.mutable_poses() = DoubleTensor({2, 1, 7}, std::vector<double>(14, 0));
           }),
           kInvalid, "poses", "expected shape [2, 2, 7] (or [4, 7]), got [2, 1, 7]"),
      Case("poses_flat_shape", m, StepWith([](auto& r) {
             *r.mutable_poses() = DoubleTensor({3, 7}, std::vector<double>(21, 0));
           }),
           kInvalid, "poses", "got [3, 7]"),
      Case("poses_short_bytes", m, StepWith([](auto& r) { r.mutable_poses()->mutable_data()->resize(216); }), kInvalid,
           "poses", "shape [2, 2, 7] of FLOAT64 needs 224 bytes, got 216"),
      Case("poses_long_bytes", m, StepWith([](auto& r) { r.mutable_poses()->mutable_data()->append(8, '\0'); }),
           kInvalid, "poses", "needs 224 bytes, got 232"),
      Case("poses_int32", m, StepWith([](auto& r) {
             *r.mutable_poses() = Int32Tensor({2, 2, 7}, std::vector<int32_t>(28, 0));
           }),
           kInvalid, "poses", "FLOAT32 or FLOAT64"),
      Case("poses_dtype_9", m, StepWith([](auto& r) { r.mutable_poses()->set_dtype(static_cast<v1::DType>(9)); }),
           kInvalid, "poses.dtype", "9 is not a value of taxel.v1.DType"),
      Case("poses_dtype_unspecified", m, StepWith([](auto& r) { r.mutable_poses()->clear_dtype(); }), kInvalid, "poses",
           "dtype must be"),
      Case("poses_shape_claims_2_pow_40_envs", m,
           StepWith([](auto& r) { r.mutable_poses()->set_shape(0, int64_t{1} << 40); }), kInvalid, "poses",
           "shape [1099511627776, 2, 7]"),
      Case("poses_negative_dim", m, StepWith([](auto& r) { r.mutable_poses()->set_shape(0, -2); }), kInvalid, "poses",
           "negative dimension"),
      Case("poses_sparse", m, StepWith([](auto& r) { r.mutable_poses()->set_nonzero_mask(std::string(4, '\xff')); }),
           kInvalid, "poses.nonzero_mask", "inputs must be dense"),
      Case("pose_nan", m, StepWith([](auto& r) {
             *r.mutable_poses() = DoubleTensor({2, 2, 7}, PosesWith(1, 0, 2, kNaN));
           }),
           kInvalid, "poses[1][0][2]", "expected a finite number"),
      Case("pose_float32_inf", m, StepWith([](auto& r) {
             const std::vector<double> p = PosesWith(0, 1, 0, kInf);
             *r.mutable_poses() = FloatTensor({2, 2, 7}, std::vector<float>(p.begin(), p.end()));
           }),
           kInvalid, "poses[0][1][0]", "expected a finite number"),
      Case("pose_zero_quaternion", m, StepWith([](auto& r) {
             std::vector<double> p = PosesWith(0, 1, 6, 0);  // (x, y, z, w) = (0, 0, 0, 0)
             *r.mutable_poses() = DoubleTensor({2, 2, 7}, p);
           }),
           kInvalid, "poses[0][1]", "quaternion norm must be at least 1e-6"),
      Case("pose_quaternion_overflows", m, StepWith([](auto& r) {
             std::vector<double> p = PosesWith(1, 1, 3, 1e300);
             p[(1 * kMovingLinks + 1) * 7 + 4] = 1e300;  // |q|² overflows to inf
             *r.mutable_poses() = DoubleTensor({2, 2, 7}, p);
           }),
           kInvalid, "poses[1][1]*", ""),
      Case("quat_order_unspecified", m, StepWith([](auto& r) { r.clear_quat_order(); }), kInvalid, "quat_order",
           "expected XYZW or WXYZ"),
      Case("quat_order_5", m, StepWith([](auto& r) { r.set_quat_order(static_cast<v1::QuatOrder>(5)); }), kInvalid,
           "quat_order", "5 is not a value of taxel.v1.QuatOrder"),
      Case("dt_zero", m, StepWith([](auto& r) { r.set_dt(0); }), kInvalid, "dt", "expected a finite value > 0, got 0"),
      Case("dt_negative", m, StepWith([](auto& r) { r.set_dt(-0.01); }), kInvalid, "dt", "got -0.01"),
      Case("dt_nan", m, StepWith([](auto& r) { r.set_dt(kNaN); }), kInvalid, "dt", "expected a finite value > 0"),
      Case("dt_inf", m, StepWith([](auto& r) { r.set_dt(kInf); }), kInvalid, "dt", "expected a finite value > 0"),
      Case("twists_shape", m, StepWith([](auto& r) {
             *r.mutable_twists() = DoubleTensor({2, 2, 7}, std::vector<double>(28, 0));
           }),
           kInvalid, "twists", "expected shape [2, 2, 6] (or [4, 6]), got [2, 2, 7]"),
      Case("twist_nan", m, StepWith([](auto& r) {
             std::vector<double> t(24, 0.0);
             t[(0 * kMovingLinks + 1) * 6 + 4] = kNaN;
             *r.mutable_twists() = DoubleTensor({2, 2, 6}, t);
           }),
           kInvalid, "twists[0][1][4]", "expected a finite number"),
      Case("twists_dtype_bool", m, StepWith([](auto& r) {
             *r.mutable_twists() = RawTensor(v1::BOOL, {2, 2, 6}, std::string(24, '\0'));
           }),
           kInvalid, "twists", "FLOAT32 or FLOAT64"),
      Case("env_out_of_range", m, StepWith([](auto& r) {
             r.add_env_ids(0);
             r.add_env_ids(5);
           }),
           kOutOfRange, "env_ids[1]", "env id 5 out of range [0, 2)"),
      Case("env_negative", m, StepWith([](auto& r) {
             r.add_env_ids(-1);
             r.add_env_ids(0);
           }),
           kOutOfRange, "env_ids[0]", "env id -1 out of range [0, 2)"),
      Case("env_repeated", m, StepWith([](auto& r) {
             r.add_env_ids(1);
             r.add_env_ids(1);
           }),
           kInvalid, "env_ids[1]", "env id 1 appears more than once"),
      Case("env_ids_fewer_than_poses", m, StepWith([](auto& r) { r.add_env_ids(0); }), kInvalid, "poses",
           "expected shape [1, 2, 7] (or [2, 7]), got [2, 2, 7]"),
      Case("scene_unknown", m, StepWith([](auto& r) { r.set_scene("nope"); }), kNotFound, "scene",
           "no scene named 'nope'"),
      Case("scene_empty", m, StepWith([](auto& r) { r.set_scene(""); }), kNotFound, "scene", "no scene named ''"),
      Case("read_sensor_unknown", m, StepWith([](auto& r) {
             r.mutable_read()->add_sensors("kin");
             r.mutable_read()->add_sensors("nope");
           }),
           kNotFound, "read.sensors[1]", "no sensor named 'nope'"),
      Case("read_channel_unknown", m, StepWith([](auto& r) { r.mutable_read()->add_channels("pressure"); }), kInvalid,
           "read.channels[0]", "unknown channel 'pressure'"),
      // "kin" has imperfections: its gradients are the ground truth's.
      Case("read_gradients_measured_only", m, StepWith([](auto& r) { r.mutable_read()->set_gradients(true); }),
           kInvalid, "read.gradients", "sensor 'kin' has imperfections: its gradients are those of the ground truth"),
      Case("read_gradients_channel_left_out", m, StepWith([](auto& r) {
             r.mutable_read()->set_gradients(true);
             r.mutable_read()->add_branches(v1::GROUND_TRUTH);
             r.mutable_read()->add_channels("torque");
           }),
           kInvalid, "read.gradients", "sensor 'kin': its gradient is that of 'force', which read.channels leaves out"),
      Case("read_branch_9", m, StepWith([](auto& r) { r.mutable_read()->add_branches(static_cast<v1::Branch>(9)); }),
           kInvalid, "read.branches[0]", "9 is not a value of taxel.v1.Branch"),
      Case("read_contact_matrix_of_scene_without", m, Build<v1::StepRequest>([](v1::StepRequest& r, BadInputContext&) {
             r = MakeStep("bare", kRefEnvs, GoodPoses());
             r.mutable_read()->set_contact_matrix(true);
           }),
           kPrecondition, "read.contact_matrix", "this scene has no contact matrix"),

      // ---- Reported contacts ----
      Case("contacts_on_estimated_scene", m, StepWith([](auto& r) {
             *r.mutable_contacts()->mutable_env() = Int32Tensor({1}, {0});
             *r.mutable_contacts()->mutable_body() = Int32Tensor({1}, {0});
             *r.mutable_contacts()->mutable_partner() = Int32Tensor({1}, {1});
             *r.mutable_contacts()->mutable_force() = DoubleTensor({1, 3}, {0, 0, 1});
           }),
           kInvalid, "contacts", "need a contact matrix with source REPORTED"),
      Case("contact_body_past_end", m, Reported([](auto&) {}, 7), kInvalid, "contacts.body[0]",
           "link index 7 out of range [0, 3)"),
      Case("contact_partner_negative", m, Reported([](auto&) {}, 0, -1), kInvalid, "contacts.partner[0]",
           "link index -1 out of range [0, 3)"),
      Case("contact_env_not_stepped", m, Reported([](auto& r) {
             r.add_env_ids(1);
             const std::vector<double> p = GoodPoses();
             *r.mutable_poses() = DoubleTensor({1, 2, 7}, std::vector<double>(p.begin(), p.begin() + 14));
           }),
           kInvalid, "contacts.env[0]", "env 0 is not one of the envs this step updates"),
      Case("contact_force_nan", m, Reported([](auto& r) {
             *r.mutable_contacts()->mutable_force() = DoubleTensor({1, 3}, {0, 0, kNaN});
           }),
           kInvalid, "contacts.force[0][2]", "expected a finite number"),
      Case("contact_friction_inf", m, Reported([](auto& r) {
             *r.mutable_contacts()->mutable_friction() = DoubleTensor({1, 3}, {kInf, 0, 0});
           }),
           kInvalid, "contacts.friction[0][0]", "expected a finite number"),
      Case("contact_env_float64", m,
           Reported([](auto& r) { *r.mutable_contacts()->mutable_env() = DoubleTensor({1}, {0}); }), kInvalid,
           "contacts.env", "expected INT32 of shape [K], got FLOAT64 [1]"),
      Case("contact_body_longer_than_env", m, Reported([](auto& r) {
             *r.mutable_contacts()->mutable_body() = Int32Tensor({2}, {0, 0});
           }),
           kInvalid, "contacts.body", "expected shape [1] (K = len(contacts.env)), got [2]"),
      Case("contact_force_shape", m, Reported([](auto& r) {
             *r.mutable_contacts()->mutable_force() = DoubleTensor({1, 2}, {0, 1});
           }),
           kInvalid, "contacts.force", "expected shape [1, 3], got [1, 2]"),

      // ---- Too much: checked before the step happens ----
      // On "bare": the good step of "grasp" after the case must still be possible.
      Case("jitter_above_dt", m, Build<v1::StepRequest>([](v1::StepRequest& r, BadInputContext&) {
             r = MakeStep("bare", kRefEnvs, GoodPoses());
           }),
           kInvalid, "dt", "has a jitter of 0.02 s")
          .Setup([](BadInputContext& ctx) { MustAdd(ctx, "bare", DelayedSensor("jittery", 0.05, 0.02)); }),
      // A 1 s delay at dt = 1e-8 s asks for a ring of 1e8 samples per probe and env: for 400 probes
      // in 2 envs at least 1e8 · 400 · 4 B · 2 = 320 GB, more than any machine that runs this has
      // (so an allocation attempt fails at once rather than touching memory).
      Case("delay_ring_at_tiny_dt", m, StepWith([](auto& r) { r.set_dt(1e-8); }), kExhausted, "dt", "delay")
          .Setup([](BadInputContext& ctx) { MustAdd(ctx, "grasp", DelayedSensor("delayed", 1.0, 0, 20)); })
          .Isolated(),
      Case("readings_over_message_limit", m,
           Build<v1::StepRequest>([](v1::StepRequest& r, BadInputContext&) { r = MakeStep("big", 64, RefPoses(64)); }),
           kExhausted, "read", "over the message limit of 8388608 bytes")
          .Setup([](BadInputContext& ctx) { MustCreate(ctx, BigReadingsScene()); }),
      // The contact matrix is part of the response too: refused before the step, not after it.
      Case("reported_contact_matrix_over_message_limit", m,
           Build<v1::StepRequest>([](v1::StepRequest& r, BadInputContext&) { r = BigMatrixStep(); }), kExhausted,
           "read*", "8388608")
          .Setup([](BadInputContext& ctx) { MustCreate(ctx, BigMatrixScene()); }),
      // 9 MB of poses data past what the shape needs: the transport refuses it.
      Case("request_over_message_limit", m,
           StepWith([](auto& r) { r.mutable_poses()->mutable_data()->append(9 << 20, '\0'); }), kExhausted, "",
           "larger than max"),
  };

  // ---- StepStream: the same requests as a stream's only message ----
  const std::string s = "StepStream";
  cases.push_back(Case("pose_nan", s, StepWith([](auto& r) {
                         *r.mutable_poses() = DoubleTensor({2, 2, 7}, PosesWith(1, 0, 2, kNaN));
                       }),
                       kInvalid, "poses[1][0][2]", "expected a finite number"));
  cases.push_back(Case("poses_short_bytes", s,
                       StepWith([](auto& r) { r.mutable_poses()->mutable_data()->resize(216); }), kInvalid, "poses",
                       "needs 224 bytes, got 216"));
  cases.push_back(Case("quat_order_5", s, StepWith([](auto& r) { r.set_quat_order(static_cast<v1::QuatOrder>(5)); }),
                       kInvalid, "quat_order", "5 is not a value of taxel.v1.QuatOrder"));
  cases.push_back(
      Case("dt_zero", s, StepWith([](auto& r) { r.set_dt(0); }), kInvalid, "dt", "expected a finite value > 0"));
  cases.push_back(Case("env_out_of_range", s, StepWith([](auto& r) {
                         r.add_env_ids(0);
                         r.add_env_ids(2);
                       }),
                       kOutOfRange, "env_ids[1]", "env id 2 out of range [0, 2)"));
  cases.push_back(Case("scene_unknown", s, StepWith([](auto& r) { r.set_scene("nope"); }), kNotFound, "scene",
                       "no scene named 'nope'"));
  cases.push_back(Case("read_branch_9", s,
                       StepWith([](auto& r) { r.mutable_read()->add_branches(static_cast<v1::Branch>(9)); }), kInvalid,
                       "read.branches[0]", "9 is not a value of taxel.v1.Branch"));
  cases.push_back(Case("contact_body_past_end", s, Reported([](auto&) {}, 7), kInvalid, "contacts.body[0]",
                       "link index 7 out of range [0, 3)"));
  cases.push_back(Case("delay_ring_at_tiny_dt", s, StepWith([](auto& r) { r.set_dt(1e-8); }), kExhausted, "dt", "delay")
                      .Setup([](BadInputContext& ctx) { MustAdd(ctx, "grasp", DelayedSensor("delayed", 1.0, 0, 20)); })
                      .Isolated());
  cases.push_back(
      Case("readings_over_message_limit", s,
           Build<v1::StepRequest>([](v1::StepRequest& r, BadInputContext&) { r = MakeStep("big", 64, RefPoses(64)); }),
           kExhausted, "read", "over the message limit of 8388608 bytes")
          .Setup([](BadInputContext& ctx) { MustCreate(ctx, BigReadingsScene()); }));
  cases.push_back(Case("reported_contact_matrix_over_message_limit", s,
                       Build<v1::StepRequest>([](v1::StepRequest& r, BadInputContext&) { r = BigMatrixStep(); }),
                       kExhausted, "read*", "8388608")
                      .Setup([](BadInputContext& ctx) { MustCreate(ctx, BigMatrixScene()); }));
  cases.push_back(Case("request_over_message_limit", s,
                       StepWith([](auto& r) { r.mutable_poses()->mutable_data()->append(9 << 20, '\0'); }), kExhausted,
                       "", "larger than max"));
  return cases;
}

}  // namespace taxel::testing
