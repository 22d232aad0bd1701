// AddSensor, RemoveSensor, UpdateSensor: layouts, every kind's options and their ranges,
// undeclared enum numbers, the imperfections, unknown names, the limits.
#include <string>

#include "tests/server/bad_inputs/bad_input.h"

namespace taxel::testing {
namespace {

// A 3 × 3 grid (pitch 1 cm) on the pad's top face: crosstalk needs a grid.
void MakeGrid(v1::SensorSpec& s) {
  std::vector<double> p;
  for (const auto& q : PlanarGrid(3, 3, 0.01, kPadHalfZ)) p.insert(p.end(), {q.x(), q.y(), q.z()});
  *s.mutable_probe_local_pos() = DoubleTensor({3, 3, 3}, p);
}

v1::ImperfectionOptions& Imperfect(v1::SensorSpec& s) { return *s.mutable_imperfections(); }

void Tracking(v1::SensorSpec& s, v1::SensorKind kind, const std::string& link) {
  s.set_kind(kind);
  s.add_track_links(link);
}

}  // namespace

std::vector<BadInput> SensorCases() {
  const std::string m = "AddSensor";
  std::vector<BadInput> cases = {
      Case("scene_unknown", m, Build<v1::AddSensorRequest>([](v1::AddSensorRequest& r, BadInputContext&) {
             r.set_scene("nope");
             *r.mutable_sensor() = GoodSensor();
           }),
           kNotFound, "scene", "no scene named 'nope'"),
      Case("name_taken", m, Sensor([](auto& s) { s.set_name("kin"); }), kExists, "sensor.name",
           "a sensor named 'kin' already exists"),
      Case("name_empty", m, Sensor([](auto& s) { s.set_name(""); }), kInvalid, "sensor.name",
           "expected a non-empty name"),
      Case("kind_unspecified", m, Sensor([](auto& s) { s.clear_kind(); }), kInvalid, "sensor.kind",
           "expected CONTACT_PROBE"),
      Case("kind_9", m, Sensor([](auto& s) { s.set_kind(static_cast<v1::SensorKind>(9)); }), kInvalid, "sensor.kind",
           "9 is not a value of taxel.v1.SensorKind"),
      Case("kind_negative", m, Sensor([](auto& s) { s.set_kind(static_cast<v1::SensorKind>(-1)); }), kInvalid,
           "sensor.kind", "-1 is not a value of taxel.v1.SensorKind"),
      Case("link_unknown", m, Sensor([](auto& s) { s.set_link("hand/nope"); }), kNotFound, "sensor.link",
           "unknown link 'hand/nope'"),
      Case("link_empty", m, Sensor([](auto& s) { s.set_link(""); }), kNotFound, "sensor.link", "unknown link ''"),
      Case("filter_link_unknown", m, Sensor([](auto& s) { s.add_filter_links("nope"); }), kNotFound,
           "sensor.filter_links[0]", "unknown link 'nope'"),
      Case("sdf_backend_7", m, Sensor([](auto& s) { s.set_sdf_backend(static_cast<v1::SdfBackend>(7)); }), kInvalid,
           "sensor.sdf_backend", "7 is not a value of taxel.v1.SdfBackend"),
      Case("sdf_backend_grid_on_proximity", m, Sensor([](auto& s) {
             Tracking(s, v1::PROXIMITY_TAXEL, "ball");
             s.set_sdf_backend(v1::GRID);
           }),
           kInvalid, "sensor.sdf_backend", "a PROXIMITY_TAXEL reads point clouds"),

      // ---- Layout ----
      Case("positions_missing", m, Sensor([](auto& s) { s.clear_probe_local_pos(); }), kInvalid,
           "sensor.probe_local_pos", "required"),
      Case("positions_n_by_2", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = DoubleTensor({2, 2}, {0, 0, 0, 0});
           }),
           kInvalid, "sensor.probe_local_pos", "expected shape [N, 3] or [rows, cols, 3], got [2, 2]"),
      Case("positions_1d", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = DoubleTensor({3}, {0, 0, 0});
           }),
           kInvalid, "sensor.probe_local_pos", "got [3]"),
      Case("positions_int32", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = Int32Tensor({1, 3}, {0, 0, 0});
           }),
           kInvalid, "sensor.probe_local_pos", "FLOAT32 or FLOAT64"),
      Case("positions_dtype_bool", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = RawTensor(v1::BOOL, {1, 3}, std::string(3, '\1'));
           }),
           kInvalid, "sensor.probe_local_pos", "FLOAT32 or FLOAT64"),
      Case("positions_dtype_negative", m,
           Sensor([](auto& s) { s.mutable_probe_local_pos()->set_dtype(static_cast<v1::DType>(-3)); }), kInvalid,
           "sensor.probe_local_pos.dtype", "-3 is not a value of taxel.v1.DType"),
      Case("positions_short_bytes", m, Sensor([](auto& s) { s.mutable_probe_local_pos()->mutable_data()->resize(16); }),
           kInvalid, "sensor.probe_local_pos", "needs 24 bytes, got 16"),
      Case("positions_empty", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = DoubleTensor({0, 3}, {});
           }),
           kInvalid, "sensor.probe_local_pos", "expected at least one probe"),
      Case("position_nan", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = DoubleTensor({2, 3}, {0, 0, 0, 0, kNaN, 0});
           }),
           kInvalid, "sensor.probe_local_pos[1]", "expected finite coordinates"),
      Case("position_float32_inf", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = FloatTensor({1, 3}, {0, std::numeric_limits<float>::infinity(), 0});
           }),
           kInvalid, "sensor.probe_local_pos[0]", "expected finite coordinates"),
      Case("radius_missing", m, Sensor([](auto& s) { s.clear_probe_radius(); }), kInvalid, "sensor.probe_radius",
           "required"),
      Case("radius_nan", m, Sensor([](auto& s) { *s.mutable_probe_radius() = DoubleTensor({}, {kNaN}); }), kInvalid,
           "sensor.probe_radius[0]", "expected a finite value >= 0"),
      Case("radius_negative", m, Sensor([](auto& s) { *s.mutable_probe_radius() = DoubleTensor({1}, {-0.001}); }),
           kInvalid, "sensor.probe_radius[0]", "expected a finite value >= 0, got -0.001"),
      Case("radius_count", m, Sensor([](auto& s) {
             *s.mutable_probe_radius() = DoubleTensor({2}, {0.001, 0.001});
           }),
           kInvalid, "sensor.probe_radius", "expected a scalar, [1], got [2]"),
      Case("normal_zero", m, Sensor([](auto& s) {
             *s.mutable_probe_local_normal() = DoubleTensor({3}, {0, 0, 0});
           }),
           kInvalid, "sensor.probe_local_normal[0]", "expected a finite, non-zero vector"),
      Case("normal_count", m, Sensor([](auto& s) {
             *s.mutable_probe_local_normal() = DoubleTensor({2, 3}, {0, 0, 1, 0, 0, 1});
           }),
           kInvalid, "sensor.probe_local_normal", "one normal per probe (1), got [2, 3]"),
      // 2 envs × (30 + 524,259) probes = 1,048,578 > 2^20; float32 keeps the request under 8 MiB.
      Case("probes_over_limit", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = FloatTensor({524259, 3}, std::vector<float>(3 * 524259, 0.0f));
           }),
           kExhausted, "sensor", "num_envs x probes would be 1048578, over the server limit of 1048576"),
      // 524,288 float64 positions: 12.6 MB, over the 8 MiB message limit of the transport.
      Case("request_over_message_limit", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = DoubleTensor({524288, 3}, std::vector<double>(3 * 524288, 0.0));
           }),
           kExhausted, ""),

      // ---- Kinds' options ----
      Case("contact_threshold_nan", m, Sensor([](auto& s) {
             s.set_kind(v1::CONTACT_PROBE);
             s.mutable_contact_probe()->set_contact_threshold(kNaN);
           }),
           kInvalid, "sensor.contact_probe.contact_threshold", "expected a finite number"),
      Case("kinematic_exponent_zero", m, Sensor([](auto& s) {
             s.set_kind(v1::KINEMATIC_TAXEL);
             s.mutable_kinematic_taxel()->set_exponent(0);
           }),
           kInvalid, "sensor.kinematic_taxel.exponent", "expected a finite value > 0"),
      Case("kinematic_stiffness_negative", m, Sensor([](auto& s) {
             s.set_kind(v1::KINEMATIC_TAXEL);
             s.mutable_kinematic_taxel()->set_normal_stiffness(-1);
           }),
           kInvalid, "sensor.kinematic_taxel.normal_stiffness", "expected a finite value >= 0"),
      Case("kinematic_force_law_5", m, Sensor([](auto& s) {
             s.set_kind(v1::KINEMATIC_TAXEL);
             s.mutable_kinematic_taxel()->set_force_law(static_cast<v1::ForceLaw>(5));
           }),
           kInvalid, "sensor.kinematic_taxel.force_law", "5 is not a value of taxel.v1.ForceLaw"),
      // The law is the wire's kinematic_taxel.nonlinear_law.
      Case("kinematic_nonlinear_stiffness_nan", m, Sensor([](auto& s) {
             s.set_kind(v1::KINEMATIC_TAXEL);
             s.mutable_kinematic_taxel()->set_force_law(v1::NONLINEAR);
             s.mutable_kinematic_taxel()->mutable_nonlinear_law()->set_stiffness(kNaN);
           }),
           kInvalid, "sensor.kinematic_taxel.nonlinear_law.stiffness", "expected a finite value >= 0"),
      Case("elastomer_without_tracked_links", m, Sensor([](auto& s) { s.set_kind(v1::ELASTOMER_TAXEL); }), kInvalid,
           "sensor.track_links", "expected at least one tracked link"),
      Case("elastomer_tracks_own_link", m, Sensor([](auto& s) { Tracking(s, v1::ELASTOMER_TAXEL, "hand/pad"); }),
           kInvalid, "sensor.track_links[0]", "a sensor cannot track its own link"),
      Case("elastomer_tracks_unknown_link", m, Sensor([](auto& s) { Tracking(s, v1::ELASTOMER_TAXEL, "nope"); }),
           kNotFound, "sensor.track_links[0]", "unknown link 'nope'"),
      Case("elastomer_compressibility_2", m, Sensor([](auto& s) {
             Tracking(s, v1::ELASTOMER_TAXEL, "ball");
             s.mutable_elastomer()->set_compressibility(2);
           }),
           kInvalid, "sensor.elastomer.compressibility", "expected a value in [0, 1], got 2"),
      Case("proximity_sample_points_2e6", m, Sensor([](auto& s) {
             Tracking(s, v1::PROXIMITY_TAXEL, "ball");
             s.set_n_sample_points(2000000);
           }),
           kInvalid, "sensor.n_sample_points", "got 2000000"),
      Case("proximity_sample_points_negative", m, Sensor([](auto& s) {
             Tracking(s, v1::PROXIMITY_TAXEL, "ball");
             s.set_n_sample_points(-5);
           }),
           kInvalid, "sensor.n_sample_points", "got -5"),
      Case("proximity_density_negative", m, Sensor([](auto& s) {
             Tracking(s, v1::PROXIMITY_TAXEL, "ball");
             s.mutable_proximity()->set_density_scalar(-1);
           }),
           kInvalid, "sensor.proximity.density_scalar", "expected a finite value >= 0"),

      // ---- Imperfections ----
      Case("crosstalk_border_9", m, Sensor([](auto& s) {
             Imperfect(s).set_noise(0.01);
             Imperfect(s).set_crosstalk_border(static_cast<v1::CrosstalkBorder>(9));
           }),
           kInvalid, "sensor.imperfections.crosstalk_border", "9 is not a value of taxel.v1.CrosstalkBorder"),
      Case("crosstalk_strength_2", m, Sensor([](auto& s) {
             MakeGrid(s);
             Imperfect(s).set_crosstalk_strength(2);
             Imperfect(s).set_crosstalk_sigma(0.01);
           }),
           kInvalid, "sensor.imperfections.crosstalk_strength", "expected a value in [0, 1], got 2"),
      Case("crosstalk_without_sigma", m, Sensor([](auto& s) {
             MakeGrid(s);
             Imperfect(s).set_crosstalk_strength(0.5);
           }),
           kInvalid, "sensor.imperfections.crosstalk_sigma", "expected a value > 0 when crosstalk_strength > 0"),
      Case("crosstalk_on_scattered_probes", m, Sensor([](auto& s) {
             *s.mutable_probe_local_pos() = DoubleTensor({3, 3}, {0, 0, 0.005, 0.01, 0, 0.005, 0.013, 0.002, 0.005});
             Imperfect(s).set_crosstalk_strength(0.5);
             Imperfect(s).set_crosstalk_sigma(0.01);
           }),
           kInvalid, "sensor.imperfections.crosstalk*", "grid"),
      Case("crosstalk_kernel_even", m, Sensor([](auto& s) {
             MakeGrid(s);
             *Imperfect(s).mutable_crosstalk_kernel() = DoubleTensor({2, 2}, {0.25, 0.25, 0.25, 0.25});
           }),
           kInvalid, "sensor.imperfections.crosstalk_kernel", "odd-sized kernel"),
      Case("crosstalk_kernel_4d", m, Sensor([](auto& s) {
             MakeGrid(s);
             *Imperfect(s).mutable_crosstalk_kernel() = DoubleTensor({1, 1, 1, 1}, {1});
           }),
           kInvalid, "sensor.imperfections.crosstalk_kernel", "expected shape [N, M], [2, N, M] or [3, N, M]"),
      Case("crosstalk_kernel_nan", m, Sensor([](auto& s) {
             MakeGrid(s);
             *Imperfect(s).mutable_crosstalk_kernel() = DoubleTensor({1, 1}, {kNaN});
           }),
           kInvalid, "sensor.imperfections.crosstalk_kernel", "expected finite values"),
      Case("hysteresis_without_tau", m, Sensor([](auto& s) { Imperfect(s).set_hysteresis_strength(0.3); }), kInvalid,
           "sensor.imperfections.hysteresis_tau", "expected a value > 0 when hysteresis_strength > 0"),
      Case("jitter_above_delay", m, Sensor([](auto& s) {
             Imperfect(s).set_delay(0.01);
             Imperfect(s).set_jitter(0.02);
           }),
           kInvalid, "sensor.imperfections.jitter", "expected jitter <= delay"),
      Case("delay_negative", m, Sensor([](auto& s) { Imperfect(s).set_delay(-0.01); }), kInvalid,
           "sensor.imperfections.delay", "expected a finite value >= 0"),
      Case("delay_inf", m, Sensor([](auto& s) { Imperfect(s).set_delay(kInf); }), kInvalid,
           "sensor.imperfections.delay", "expected a finite value >= 0"),
      Case("history_length_5000", m, Sensor([](auto& s) { Imperfect(s).set_history_length(5000); }), kInvalid,
           "sensor.imperfections.history_length", "expected a value in [0, 4096], got 5000"),
      Case("history_length_negative", m, Sensor([](auto& s) { Imperfect(s).set_history_length(-1); }), kInvalid,
           "sensor.imperfections.history_length", "got -1"),
      Case("update_period_negative", m, Sensor([](auto& s) { Imperfect(s).set_update_period(-2); }), kInvalid,
           "sensor.imperfections.update_period", "expected a value >= 1, got -2"),
      Case("dead_probability_1_5", m, Sensor([](auto& s) { Imperfect(s).set_dead_taxel_probability(1.5); }), kInvalid,
           "sensor.imperfections.dead_taxel_probability", "expected a value in [0, 1], got 1.5"),
      Case("dead_value_range_reversed", m, Sensor([](auto& s) {
             Imperfect(s).set_dead_taxel_probability(0.1);
             Imperfect(s).add_dead_taxel_value_range(1);
             Imperfect(s).add_dead_taxel_value_range(0);
           }),
           kInvalid, "sensor.imperfections.dead_taxel_value_range", "lo <= hi"),
      Case("gain_resample_range_three_values", m, Sensor([](auto& s) {
             for (double v : {0.9, 1.0, 1.1}) Imperfect(s).add_probe_gain_resample_range(v);
           }),
           kInvalid, "sensor.imperfections.probe_gain_resample_range", "expected [lo, hi] or nothing, got 3 values"),
      Case("gain_count", m, Sensor([](auto& s) {
             *Imperfect(s).mutable_probe_gain() = DoubleTensor({2}, {1, 1});
           }),
           kInvalid, "sensor.imperfections.probe_gain", "one value per probe ([1]), got [2]"),
      Case("gain_nan", m, Sensor([](auto& s) { *Imperfect(s).mutable_probe_gain() = DoubleTensor({}, {kNaN}); }),
           kInvalid, "sensor.imperfections.probe_gain[0]", "expected a finite value"),
      Case("noise_negative", m, Sensor([](auto& s) { Imperfect(s).set_noise(-1); }), kInvalid,
           "sensor.imperfections.noise", "expected a finite value >= 0"),
      Case("noise_inf", m, Sensor([](auto& s) { Imperfect(s).set_noise(kInf); }), kInvalid,
           "sensor.imperfections.noise", "expected a finite value >= 0"),
      Case("bias_nan", m, Sensor([](auto& s) { Imperfect(s).set_bias(kNaN); }), kInvalid, "sensor.imperfections.bias",
           "expected a finite value"),
      Case("resolution_negative", m, Sensor([](auto& s) { Imperfect(s).set_resolution(-0.1); }), kInvalid,
           "sensor.imperfections.resolution", "expected a finite value >= 0"),
  };

  // ---- RemoveSensor ----
  const std::string r = "RemoveSensor";
  cases.push_back(
      Case("scene_unknown", r, Text(R"pb(scene: "nope" name: "kin")pb"), kNotFound, "scene", "no scene named 'nope'"));
  cases.push_back(Case("name_unknown", r, Text(R"pb(scene: "grasp" name: "ghost")pb"), kNotFound, "name",
                       "no sensor named 'ghost'"));
  cases.push_back(
      Case("name_empty", r, Text(R"pb(scene: "grasp" name: "")pb"), kNotFound, "name", "no sensor named ''"));
  cases.push_back(Case("id_unknown", r, Text(R"pb(scene: "grasp" sensor_id: 99)pb"), kNotFound, "sensor_id",
                       "no sensor with id 99"));
  cases.push_back(Case("id_negative", r, Text(R"pb(scene: "grasp" sensor_id: -1)pb"), kNotFound, "sensor_id",
                       "no sensor with id -1"));
  cases.push_back(
      Case("neither_id_nor_name", r, Text(R"pb(scene: "grasp")pb"), kInvalid, "sensor", "expected sensor_id or name"));

  // ---- UpdateSensor ("kin": 25 probes, with imperfections) ----
  const std::string u = "UpdateSensor";
  const auto gains = [](std::vector<int64_t> shape, std::vector<double> values) {
    v1::UpdateSensorRequest req;
    req.set_scene("grasp");
    req.set_sensor("kin");
    *req.mutable_probe_gain() = DoubleTensor(shape, values);
    return Bytes(req.SerializeAsString());
  };
  std::vector<double> nan_gains(25, 1.0);
  nan_gains[7] = kNaN;
  cases.push_back(Case("scene_unknown", u, Text(R"pb(scene: "nope" sensor: "kin" noise: 0.1)pb"), kNotFound, "scene",
                       "no scene named 'nope'"));
  cases.push_back(Case("sensor_unknown", u, Text(R"pb(scene: "grasp" sensor: "ghost" noise: 0.1)pb"), kNotFound,
                       "sensor", "no sensor named 'ghost'"));
  cases.push_back(Case("sensor_without_imperfections", u, Text(R"pb(scene: "grasp" sensor: "depth" noise: 0.1)pb"),
                       kPrecondition, "sensor", "'depth' has no imperfections"));
  cases.push_back(Case("gain_count", u, gains({3}, {1, 1, 1}), kInvalid, "probe_gain",
                       "expected 25 values (one per probe) or [2, 25], got [3]"));
  cases.push_back(Case("gain_nan", u, gains({25}, nan_gains), kInvalid, "probe_gain*", "expected finite values"));
  cases.push_back(Case("gain_dtype_9", u, Text(R"pb(scene: "grasp"
                                                    sensor: "kin"
                                                    probe_gain { dtype: 9 shape: 1 data: "\0\0\0\0" })pb"),
                       kInvalid, "probe_gain.dtype", "9 is not a value of taxel.v1.DType"));
  cases.push_back(Case("gain_sparse", u,
                       Text(R"pb(scene: "grasp"
                                 sensor: "kin"
                                 probe_gain { dtype: FLOAT32 shape: 1 data: "\0\0\200?" nonzero_mask: "\1" })pb"),
                       kInvalid, "probe_gain.nonzero_mask", "inputs must be dense"));
  cases.push_back(Case("noise_negative", u, Text(R"pb(scene: "grasp" sensor: "kin" noise: -1)pb"), kInvalid, "noise",
                       "expected a finite value >= 0, got -1"));
  cases.push_back(Case("noise_nan", u, Text(R"pb(scene: "grasp" sensor: "kin" noise: nan)pb"), kInvalid, "noise",
                       "expected a finite value >= 0"));
  cases.push_back(Case("random_walk_inf", u, Text(R"pb(scene: "grasp" sensor: "kin" random_walk: inf)pb"), kInvalid,
                       "random_walk", "expected a finite value >= 0"));
  cases.push_back(Case("bias_inf", u, Text(R"pb(scene: "grasp" sensor: "kin" bias: -inf)pb"), kInvalid, "bias",
                       "expected a finite value"));
  cases.push_back(Case("env_out_of_range", u, Text(R"pb(scene: "grasp" sensor: "kin" env_ids: 2 noise: 0.1)pb"),
                       kOutOfRange, "env_ids[0]", "env id 2 out of range [0, 2)"));
  cases.push_back(Case("env_negative", u, Text(R"pb(scene: "grasp" sensor: "kin" env_ids: -1 noise: 0.1)pb"),
                       kOutOfRange, "env_ids[0]", "env id -1 out of range [0, 2)"));
  cases.push_back(Case("env_repeated", u, Text(R"pb(scene: "grasp"
                                                    sensor: "kin"
                                                    env_ids: [ 0, 0 ]
                                                    noise: 0.1)pb"),
                       kInvalid, "env_ids[1]", "env id 0 appears more than once"));
  return cases;
}

}  // namespace taxel::testing
