// CreateScene: names, env counts, entities, links, poses, every shape's parameters, sensors,
// undeclared enum numbers, the contact matrix, and the limits. Field paths are relative to the
// request: "spec.entities[1].links[0].shapes[0].sphere.radius".
#include <string>

#include "tests/server/bad_inputs/bad_input.h"

namespace taxel::testing {
namespace {

constexpr char kBallShape[] = "spec.entities[1].links[0].shapes[0]";
constexpr char kPlanePose[] = "spec.entities[2].links[0].pose";

v1::Shape& BallShape(v1::SceneSpec& s) { return *s.mutable_entities(1)->mutable_links(0)->mutable_shapes(0); }
v1::Pose& PlanePose(v1::SceneSpec& s) { return *s.mutable_entities(2)->mutable_links(0)->mutable_pose(); }
v1::Shape& GroundShape(v1::SceneSpec& s) { return *s.mutable_entities(2)->mutable_links(0)->mutable_shapes(0); }

void SetHeightfield(v1::Shape& shape, std::vector<int64_t> dims, std::vector<double> heights, double dx = 0.1) {
  auto* hf = shape.mutable_heightfield();
  *hf->mutable_heights() = DoubleTensor(dims, heights);
  hf->set_dx(dx);
  hf->set_dy(0.1);
}

void SelectAllAgainstTerrain(v1::SceneSpec& s) {
  s.mutable_contact_matrix()->add_bodies("all");
  s.mutable_contact_matrix()->add_partners("terrain");
}

// Two 10 cm cubes, a robot and an object, and nothing else.
v1::SceneSpec TwoCubes() {
  scene::SceneSpec spec;
  spec.name = "cubes";
  spec.num_envs = 1;
  spec.entities.push_back(Entity("hand", scene::EntityKind::kRobot, {Link("palm", {BoxShape({0.05, 0.05, 0.05})})}));
  spec.entities.push_back(Entity("block", scene::EntityKind::kObject, {Link("body", {BoxShape({0.05, 0.05, 0.05})})}));
  return ToWire(spec);
}

}  // namespace

std::vector<BadInput> SceneCases() {
  const std::string m = "CreateScene";
  const std::string ball = kBallShape;
  const std::string plane_pose = kPlanePose;
  std::vector<BadInput> cases = {
      // ---- Name and envs ----
      Case("name_taken", m, Spec([](auto& s) { s.set_name("grasp"); }), kExists, "spec.name",
           "a scene named 'grasp' already exists"),
      Case("name_empty", m, Spec([](auto& s) { s.set_name(""); }), kInvalid, "spec.name", "expected 1 to 128"),
      Case("name_with_slash", m, Spec([](auto& s) { s.set_name("a/b"); }), kInvalid, "spec.name", "expected 1 to 128"),
      Case("name_129_chars", m, Spec([](auto& s) { s.set_name(std::string(129, 'a')); }), kInvalid, "spec.name",
           "expected 1 to 128"),
      Case("num_envs_zero", m, Spec([](auto& s) { s.set_num_envs(0); }), kInvalid, "spec.num_envs",
           "expected a value >= 1, got 0"),
      Case("num_envs_negative", m, Spec([](auto& s) { s.set_num_envs(-5); }), kInvalid, "spec.num_envs",
           "expected a value >= 1, got -5"),
      Case("num_envs_over_limit", m, Spec([](auto& s) { s.set_num_envs(65); }), kExhausted, "spec.num_envs",
           "65 exceeds the server limit of 64 envs per scene"),
      Case("num_envs_int32_max", m, Spec([](auto& s) { s.set_num_envs(2147483647); }), kExhausted, "spec.num_envs",
           "exceeds the server limit"),

      // ---- Entities and links ----
      Case("entity_kind_unspecified", m, Spec([](auto& s) { s.mutable_entities(0)->clear_kind(); }), kInvalid,
           "spec.entities[0].kind", "expected ROBOT"),
      Case("entity_kind_9", m, Spec([](auto& s) { s.mutable_entities(0)->set_kind(static_cast<v1::EntityKind>(9)); }),
           kInvalid, "spec.entities[0].kind", "9 is not a value of taxel.v1.EntityKind"),
      Case("entity_name_empty", m, Spec([](auto& s) { s.mutable_entities(1)->set_name(""); }), kInvalid,
           "spec.entities[1].name", "expected a non-empty name without '/'"),
      Case("entity_name_with_slash", m, Spec([](auto& s) { s.mutable_entities(1)->set_name("ball/x"); }), kInvalid,
           "spec.entities[1].name", "without '/'"),
      Case("entity_name_duplicate", m, Spec([](auto& s) { s.mutable_entities(1)->set_name("hand"); }), kInvalid,
           "spec.entities[1].name", "duplicate entity name 'hand'"),
      Case("entity_without_links", m, Spec([](auto& s) { s.mutable_entities(1)->clear_links(); }), kInvalid,
           "spec.entities[1].links", "expected at least one link"),
      Case("link_name_empty", m, Spec([](auto& s) { s.mutable_entities(0)->mutable_links(0)->set_name(""); }), kInvalid,
           "spec.entities[0].links[0].name", "expected a non-empty name"),
      Case("link_name_duplicate", m,
           Spec([](auto& s) { *s.mutable_entities(0)->add_links() = s.entities(0).links(0); }), kInvalid,
           "spec.entities[0].links[1].name", "duplicate link name 'pad'"),
      Case("moving_link_with_pose", m,
           Spec([](auto& s) { s.mutable_entities(0)->mutable_links(0)->mutable_pose()->add_position(0); }), kInvalid,
           "spec.entities[0].links[0].pose", "only TERRAIN and STATIC links have a fixed pose"),
      Case("assets_on_robot", m, Spec([](auto& s) { s.mutable_entities(0)->add_assets()->set_name("alt"); }), kInvalid,
           "spec.entities[0].assets", "only allowed on OBJECT entities"),
      Case("env_assets_count", m, Spec([](auto& s) { s.mutable_entities(1)->add_env_assets(0); }), kInvalid,
           "spec.entities[1].env_assets", "expected 2 values (one per env), got 1"),
      Case("env_asset_past_end", m, Spec([](auto& s) {
             s.mutable_entities(1)->add_env_assets(0);
             s.mutable_entities(1)->add_env_assets(3);
           }),
           kInvalid, "spec.entities[1].env_assets[1]", "asset index in [0, 1), got 3"),
      Case("asset_link_shapes_count", m, Spec([](auto& s) {
             v1::Asset* a = s.mutable_entities(1)->add_assets();
             a->set_name("two");
             a->add_link_shapes();
             a->add_link_shapes();
           }),
           kInvalid, "spec.entities[1].assets[0].link_shapes", "expected one shape list per link (1), got 2"),

      // ---- Poses (the terrain's fixed pose) ----
      Case("pose_position_nan", m, Spec([](auto& s) { PlanePose(s).set_position(2, kNaN); }), kInvalid,
           plane_pose + ".position[2]", "expected a finite number"),
      Case("pose_position_two_values", m, Spec([](auto& s) { PlanePose(s).mutable_position()->RemoveLast(); }),
           kInvalid, plane_pose + ".position", "expected 3 values or none, got 2"),
      Case("pose_quaternion_three_values", m, Spec([](auto& s) { PlanePose(s).mutable_quaternion()->RemoveLast(); }),
           kInvalid, plane_pose + ".quaternion", "expected 4 values or none, got 3"),
      Case("pose_quat_order_7", m, Spec([](auto& s) {
             PlanePose(s).clear_quaternion();
             for (double q : {0.0, 0.0, 0.0, 1.0}) PlanePose(s).add_quaternion(q);
             PlanePose(s).set_quat_order(static_cast<v1::QuatOrder>(7));
           }),
           kInvalid, plane_pose + ".quat_order", "7 is not a value of taxel.v1.QuatOrder"),
      Case("pose_quaternion_zero", m, Spec([](auto& s) {
             PlanePose(s).clear_quaternion();
             for (int i = 0; i < 4; ++i) PlanePose(s).add_quaternion(0);
             PlanePose(s).set_quat_order(v1::XYZW);
           }),
           kInvalid, plane_pose + "*", "quaternion norm must be at least 1e-6"),

      // ---- Shapes ----
      Case("shape_without_geometry", m, Spec([](auto& s) { BallShape(s).clear_geometry(); }), kInvalid, ball,
           "expected one of sphere, box"),
      Case("sphere_radius_negative", m, Spec([](auto& s) { BallShape(s).mutable_sphere()->set_radius(-1); }), kInvalid,
           ball + ".sphere.radius", "expected a finite value > 0, got -1"),
      Case("sphere_radius_zero", m, Spec([](auto& s) { BallShape(s).mutable_sphere()->set_radius(0); }), kInvalid,
           ball + ".sphere.radius", "expected a finite value > 0"),
      Case("sphere_radius_nan", m, Spec([](auto& s) { BallShape(s).mutable_sphere()->set_radius(kNaN); }), kInvalid,
           ball + ".sphere.radius", "expected a finite value > 0"),
      Case("sphere_radius_inf", m, Spec([](auto& s) { BallShape(s).mutable_sphere()->set_radius(kInf); }), kInvalid,
           ball + ".sphere.radius", "expected a finite value > 0"),
      Case("box_two_half_extents", m, Spec([](auto& s) {
             s.mutable_entities(0)
                 ->mutable_links(0)
                 ->mutable_shapes(0)
                 ->mutable_box()
                 ->mutable_half_extents()
                 ->RemoveLast();
           }),
           kInvalid, "spec.entities[0].links[0].shapes[0].box.half_extents", "expected 3 values, got 2"),
      Case("box_half_extent_zero", m, Spec([](auto& s) {
             s.mutable_entities(0)->mutable_links(0)->mutable_shapes(0)->mutable_box()->set_half_extents(1, 0);
           }),
           kInvalid, "spec.entities[0].links[0].shapes[0].box.half_extents[1]", "expected a finite value > 0"),
      Case("capsule_half_length_zero", m, Spec([](auto& s) {
             BallShape(s).mutable_capsule()->set_radius(0.05);
             BallShape(s).mutable_capsule()->set_half_length(0);
           }),
           kInvalid, ball + ".capsule.half_length", "expected a finite value > 0"),
      Case("cylinder_radius_nan", m, Spec([](auto& s) {
             BallShape(s).mutable_cylinder()->set_radius(kNaN);
             BallShape(s).mutable_cylinder()->set_half_length(0.05);
           }),
           kInvalid, ball + ".cylinder.radius", "expected a finite value > 0"),
      Case("heightfield_one_row", m, Spec([](auto& s) {
             SetHeightfield(GroundShape(s), {1, 5}, {0, 0, 0, 0, 0});
           }),
           kInvalid, "spec.entities[2].links[0].shapes[0].heightfield*", "expected at least 2x2 samples, got 1x5"),
      Case("heightfield_dx_zero", m, Spec([](auto& s) {
             SetHeightfield(GroundShape(s), {2, 2}, {0, 0, 0, 0}, 0);
           }),
           kInvalid, "spec.entities[2].links[0].shapes[0].heightfield*", "spacing must be finite and > 0"),
      Case("heightfield_height_nan", m, Spec([](auto& s) {
             SetHeightfield(GroundShape(s), {2, 2}, {0, 0, 0, kNaN});
           }),
           kInvalid, "spec.entities[2].links[0].shapes[0].heightfield.heights[3]", "expected a finite number"),
      Case("heightfield_1d", m, Spec([](auto& s) {
             SetHeightfield(GroundShape(s), {4}, {0, 0, 0, 0});
           }),
           kInvalid, "spec.entities[2].links[0].shapes[0].heightfield.heights", "expected shape [rows, cols], got [4]"),
      Case("heightfield_short_bytes", m, Spec([](auto& s) {
             SetHeightfield(GroundShape(s), {2, 2}, {0, 0, 0, 0});
             GroundShape(s).mutable_heightfield()->mutable_heights()->mutable_data()->resize(24);
           }),
           kInvalid, "spec.entities[2].links[0].shapes[0].heightfield.heights", "needs 32 bytes, got 24"),
      Case("mesh_not_uploaded", m, Spec([](auto& s) { BallShape(s).mutable_mesh()->set_mesh_id("0123abcd"); }),
           kNotFound, ball + ".mesh.mesh_id", "mesh '0123abcd' has not been uploaded"),
      Case("mesh_id_empty", m, Spec([](auto& s) { BallShape(s).mutable_mesh(); }), kInvalid, ball + ".mesh.mesh_id",
           "expected the id of an uploaded mesh"),
      Case("mesh_scale_zero", m, Spec([](auto& s) {
             BallShape(s).mutable_mesh()->set_mesh_id("0123abcd");
             for (double k : {1.0, 0.0, 1.0}) BallShape(s).mutable_mesh()->add_scale(k);
           }),
           kInvalid, ball + ".mesh.scale", "expected finite, non-zero components"),
      Case("mesh_scale_nan", m, Spec([](auto& s) {
             BallShape(s).mutable_mesh()->set_mesh_id("0123abcd");
             for (double k : {1.0, 1.0, kNaN}) BallShape(s).mutable_mesh()->add_scale(k);
           }),
           kInvalid, ball + ".mesh.scale", "expected finite, non-zero components"),
      Case("mesh_scale_two_values", m, Spec([](auto& s) {
             BallShape(s).mutable_mesh()->set_mesh_id("0123abcd");
             for (double k : {1.0, 1.0}) BallShape(s).mutable_mesh()->add_scale(k);
           }),
           kInvalid, ball + ".mesh.scale", "expected 3 values or none, got 2"),
      // Implicit shapes: the codec's sizes, then each factory's rules.
      Case("implicit_without_kind", m, Spec([](auto& s) { BallShape(s).mutable_implicit(); }), kInvalid,
           ball + ".implicit", "expected one of sphere, superellipsoid"),
      Case("implicit_sphere_radius_negative", m,
           Spec([](auto& s) { BallShape(s).mutable_implicit()->mutable_sphere()->set_radius(-1); }), kInvalid,
           ball + ".implicit.sphere.radius", "expected a finite value > 0, got -1"),
      Case("implicit_superellipsoid_n_fractional", m, Spec([](auto& s) {
             auto* se = BallShape(s).mutable_implicit()->mutable_superellipsoid();
             se->set_n(2.5);
             for (double a : {0.05, 0.05, 0.05}) se->add_semi_axes(a);
           }),
           kInvalid, ball + ".implicit.superellipsoid.n", "expected an integer in [1, 32], got 2.5"),
      Case("implicit_superellipsoid_n_zero", m, Spec([](auto& s) {
             auto* se = BallShape(s).mutable_implicit()->mutable_superellipsoid();
             for (double a : {0.05, 0.05, 0.05}) se->add_semi_axes(a);
           }),
           kInvalid, ball + ".implicit.superellipsoid.n", "expected an integer in [1, 32], got 0"),
      Case("implicit_superellipsoid_two_semi_axes", m, Spec([](auto& s) {
             auto* se = BallShape(s).mutable_implicit()->mutable_superellipsoid();
             se->set_n(2);
             for (double a : {0.05, 0.05}) se->add_semi_axes(a);
           }),
           kInvalid, ball + ".implicit.superellipsoid.semi_axes", "expected 3 values, got 2"),
      Case("implicit_superellipsoid_semi_axis_nan", m, Spec([](auto& s) {
             auto* se = BallShape(s).mutable_implicit()->mutable_superellipsoid();
             se->set_n(2);
             for (double a : {0.05, kNaN, 0.05}) se->add_semi_axes(a);
           }),
           kInvalid, ball + ".implicit.superellipsoid.b", "expected a finite value > 0"),
      Case("implicit_polytope_normals_not_triples", m, Spec([](auto& s) {
             auto* p = BallShape(s).mutable_implicit()->mutable_smooth_polytope();
             for (double a : {1.0, 0.0}) p->add_normals(a);
           }),
           kInvalid, ball + ".implicit.smooth_polytope.normals", "expected 3 values per plane, got 2"),
      Case("implicit_polytope_origin_outside", m, Spec([](auto& s) {
             // The cube |y_i| <= 0.05 with one offset negative: the origin is outside that half-space.
             auto* p = BallShape(s).mutable_implicit()->mutable_smooth_polytope();
             for (int axis = 0; axis < 3; ++axis) {
               for (double sign : {1.0, -1.0}) {
                 for (int k = 0; k < 3; ++k) p->add_normals(k == axis ? sign : 0.0);
                 p->add_offsets(axis == 2 && sign < 0 ? -0.01 : 0.05);
               }
             }
             p->set_beta(20);
           }),
           kInvalid, ball + ".implicit.smooth_polytope.offsets[5]", "origin must be strictly inside"),
      Case("implicit_polytope_unbounded", m, Spec([](auto& s) {
             // Four half-spaces x, y <= 0.05 and x, y >= -0.05: open along z.
             auto* p = BallShape(s).mutable_implicit()->mutable_smooth_polytope();
             for (int axis = 0; axis < 2; ++axis) {
               for (double sign : {1.0, -1.0}) {
                 for (int k = 0; k < 3; ++k) p->add_normals(k == axis ? sign : 0.0);
                 p->add_offsets(0.05);
               }
             }
             p->set_beta(20);
           }),
           kInvalid, ball + ".implicit.smooth_polytope.normals", "do not bound a finite region"),
      Case("implicit_polytope_offsets_count", m, Spec([](auto& s) {
             auto* p = BallShape(s).mutable_implicit()->mutable_smooth_polytope();
             for (int k = 0; k < 12; ++k) p->add_normals(k % 4 == 0 ? 1.0 : 0.0);
             p->add_offsets(0.05);
           }),
           kInvalid, ball + ".implicit.smooth_polytope.offsets", "expected one offset per plane (4), got 1"),
      Case("implicit_cylinder_half_length_zero", m, Spec([](auto& s) {
             auto* c = BallShape(s).mutable_implicit()->mutable_superelliptic_cylinder();
             c->set_n(4);
             c->set_radius(0.05);
           }),
           kInvalid, ball + ".implicit.superelliptic_cylinder.half_length", "expected a finite value > 0, got 0"),
      Case("implicit_cone_beta_too_small", m, Spec([](auto& s) {
             auto* c = BallShape(s).mutable_implicit()->mutable_truncated_cone();
             c->set_beta(1);
             c->set_bottom_radius(0.05);
             c->set_top_radius(0.03);
             c->set_a(0.05);
             c->set_b(0.05);
           }),
           kInvalid, ball + ".implicit.truncated_cone.beta", "expected a finite value > ln 3"),

      // ---- Sensors ----
      Case("sensor_kind_unspecified", m, Spec([](auto& s) { s.mutable_sensors(1)->clear_kind(); }), kInvalid,
           "spec.sensors[1].kind", "expected CONTACT_PROBE"),
      Case("sensor_kind_9", m, Spec([](auto& s) { s.mutable_sensors(1)->set_kind(static_cast<v1::SensorKind>(9)); }),
           kInvalid, "spec.sensors[1].kind", "9 is not a value of taxel.v1.SensorKind"),
      Case("sensor_name_empty", m, Spec([](auto& s) { s.mutable_sensors(1)->set_name(""); }), kInvalid,
           "spec.sensors[1].name", "expected a non-empty name"),
      // Two sensors of one spec with one name: the request contradicts itself (INVALID_ARGUMENT,
      // like duplicate entity and link names); nothing on the server "already exists".
      Case("sensor_name_duplicate_in_spec", m, Spec([](auto& s) { s.mutable_sensors(1)->set_name("kin"); }), kInvalid,
           "spec.sensors[1].name", "kin"),
      Case("sensor_link_unknown", m, Spec([](auto& s) { s.mutable_sensors(2)->set_link("hand/nope"); }), kNotFound,
           "spec.sensors[2].link", "unknown link 'hand/nope'"),
      Case("sensor_filter_link_unknown", m, Spec([](auto& s) { s.mutable_sensors(0)->add_filter_links("nope"); }),
           kNotFound, "spec.sensors[0].filter_links[0]", "unknown link 'nope'"),
      Case("sensor_radius_negative", m,
           Spec([](auto& s) { *s.mutable_sensors(1)->mutable_probe_radius() = DoubleTensor({}, {-0.001}); }), kInvalid,
           "spec.sensors[1].probe_radius[0]", "expected a finite value >= 0"),
      Case("sensor_release_above_contact", m, Spec([](auto& s) {
             s.mutable_sensors(2)->mutable_contact_probe()->set_contact_threshold(1e-4);
             s.mutable_sensors(2)->mutable_contact_probe()->set_release_threshold(1e-3);
           }),
           kInvalid, "spec.sensors[2].contact_probe.release_threshold", "expected a finite value <= contact_threshold"),
      Case("force_law_5", m, Spec([](auto& s) {
             s.mutable_sensors(0)->mutable_kinematic_taxel()->set_force_law(static_cast<v1::ForceLaw>(5));
           }),
           kInvalid, "spec.sensors[0].kinematic_taxel.force_law", "5 is not a value of taxel.v1.ForceLaw"),
      Case("crosstalk_border_9", m, Spec([](auto& s) {
             auto* imp = s.mutable_sensors(0)->mutable_imperfections();
             imp->set_noise(0.01);
             imp->set_crosstalk_border(static_cast<v1::CrosstalkBorder>(9));
           }),
           kInvalid, "spec.sensors[0].imperfections.crosstalk_border", "9 is not a value of taxel.v1.CrosstalkBorder"),
      // 64 envs × (25 + 16385 + 2) probes = 1,050,368 > the test server's 2^20 = 1,048,576.
      Case("probes_over_limit", m, Spec([](auto& s) {
             s.set_num_envs(64);
             *s.mutable_sensors(1)->mutable_probe_local_pos() =
                 DoubleTensor({16385, 3}, std::vector<double>(3 * 16385, 0.0));
           }),
           kExhausted, "spec.sensors", "num_envs x probes = 1050368 exceeds the server limit of 1048576"),

      // ---- Contact matrix ----
      Case("contact_source_5", m, Spec([](auto& s) {
             SelectAllAgainstTerrain(s);
             s.mutable_contact_matrix()->set_source(static_cast<v1::ContactSource>(5));
           }),
           kInvalid, "spec.contact_matrix.source", "5 is not a value of taxel.v1.ContactSource"),
      Case("contact_sdf_backend_7", m, Spec([](auto& s) {
             SelectAllAgainstTerrain(s);
             s.mutable_contact_matrix()->set_sdf_backend(static_cast<v1::SdfBackend>(7));
           }),
           kInvalid, "spec.contact_matrix.sdf_backend", "7 is not a value of taxel.v1.SdfBackend"),
      Case("contact_sdf_backend_grid_reported", m, Spec([](auto& s) {
             SelectAllAgainstTerrain(s);
             s.mutable_contact_matrix()->set_source(v1::REPORTED);
             s.mutable_contact_matrix()->set_sdf_backend(v1::GRID);
           }),
           kInvalid, "spec.contact_matrix.sdf_backend", "REPORTED contacts come from the simulator"),
      Case("contact_body_unknown", m, Spec([](auto& s) { s.mutable_contact_matrix()->add_bodies("nope"); }), kInvalid,
           "spec.contact_matrix.bodies", "unknown names or globs matching nothing: 'nope'"),
      Case("contact_body_glob_matching_nothing", m,
           Spec([](auto& s) { s.mutable_contact_matrix()->add_bodies("*_foot"); }), kInvalid,
           "spec.contact_matrix.bodies", "'*_foot'"),
      Case("contact_partner_unknown", m, Spec([](auto& s) {
             s.mutable_contact_matrix()->add_bodies("all");
             s.mutable_contact_matrix()->add_partners("moon");
           }),
           kInvalid, "spec.contact_matrix.partners", "'moon'"),
      Case("contact_without_robot", m, Spec([](auto& s) {
             s.mutable_entities(0)->set_kind(v1::OBJECT);
             SelectAllAgainstTerrain(s);
           }),
           kInvalid, "spec.contact_matrix.bodies", "no ROBOT links"),
      Case("contact_sample_spacing_negative", m, Spec([](auto& s) {
             SelectAllAgainstTerrain(s);
             s.mutable_contact_matrix()->set_sample_spacing(-0.001);
           }),
           kInvalid, "spec.contact_matrix.sample_spacing", "expected a finite value > 0"),
      Case("contact_sample_spacing_nan", m, Spec([](auto& s) {
             SelectAllAgainstTerrain(s);
             s.mutable_contact_matrix()->set_sample_spacing(kNaN);
           }),
           kInvalid, "spec.contact_matrix.sample_spacing", "expected a finite value > 0"),
      Case("contact_law_exponent_zero", m, Spec([](auto& s) {
             SelectAllAgainstTerrain(s);
             s.mutable_contact_matrix()->mutable_law()->set_exponent(0);
           }),
           kInvalid, "spec.contact_matrix.law.exponent", "expected a finite value > 0"),
      Case("contact_law_transition_below_stiction", m, Spec([](auto& s) {
             SelectAllAgainstTerrain(s);
             s.mutable_contact_matrix()->mutable_law()->set_stiction_speed(0.1);
             s.mutable_contact_matrix()->mutable_law()->set_transition_speed(0.05);
           }),
           kInvalid, "spec.contact_matrix.law.transition_speed", "> stiction_speed"),
      // Two 10 cm cubes sampled every micrometre: 0.06 m² / 1e-12 m² = 6e10 samples per cube.
      Case("contact_sample_spacing_1um", m,
           Build<v1::CreateSceneRequest>([](v1::CreateSceneRequest& r, BadInputContext&) {
             *r.mutable_spec() = TwoCubes();
             r.mutable_spec()->mutable_contact_matrix()->add_bodies("all");
             r.mutable_spec()->mutable_contact_matrix()->add_partners("object/*");
             r.mutable_spec()->mutable_contact_matrix()->set_sample_spacing(1e-6);
           }),
           kExhausted, "spec.contact_matrix.sample_spacing", "sampl")
          .OrElse(kInvalid, "spec.contact_matrix.sample_spacing")
          .Isolated(),
  };

  // A scaled mesh is built (and stored) before the unknown sensor link fails the scene: what it
  // took must be given back (memory_bytes is part of the snapshot).
  cases.push_back(Case("scaled_mesh_then_unknown_link", m,
                       Build<v1::CreateSceneRequest>([](v1::CreateSceneRequest& r, BadInputContext& ctx) {
                         *r.mutable_spec() = GoodSpec();
                         v1::Shape& shape = BallShape(*r.mutable_spec());
                         shape.mutable_mesh()->set_mesh_id(ctx.mesh_id);
                         for (double k : {1.001, 1.0, 1.0}) shape.mutable_mesh()->add_scale(k);
                         r.mutable_spec()->mutable_sensors(2)->set_link("hand/nope");
                       }),
                       kNotFound, "spec.sensors[2].link", "unknown link 'hand/nope'")
                      .Setup([](BadInputContext& ctx) { UploadBall(ctx); }));

  // The test server holds at most 16 scenes: 3 reference scenes + 13 more fill it.
  cases.push_back(Case("scenes_over_limit", m, Spec([](auto&) {}), kExhausted, "", "maximum of 16 scenes")
                      .Setup([](BadInputContext& ctx) {
                        for (int i = 0; i < 13; ++i) {
                          MustCreate(ctx, ToWire(GraspSpec("filler" + std::to_string(i), 1, SphereShape(kBallR))));
                        }
                      }));
  return cases;
}

}  // namespace taxel::testing
