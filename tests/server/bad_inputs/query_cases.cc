// GetScene, DeleteScene, ReadSensors, ResetEnvs, GetContactMatrix: unknown names, env ids out of
// range or repeated, undeclared enum numbers, histories, and responses over the message limit.
#include <string>

#include "tests/server/bad_inputs/bad_input.h"

namespace taxel::testing {

std::vector<BadInput> QueryCases() {
  // A 100 kB scene name: refused without being echoed back whole (the status travels in an
  // HTTP/2 trailer, which the client caps at 8 or 16 kB).
  const std::string long_name(100000, 'x');
  v1::GetSceneRequest get_long;
  get_long.set_scene(long_name);
  v1::DeleteSceneRequest delete_long;
  delete_long.set_scene(long_name);

  std::vector<BadInput> cases = {
      Case("scene_unknown", "GetScene", Text(R"pb(scene: "nope")pb"), kNotFound, "scene", "no scene named 'nope'"),
      Case("scene_empty", "GetScene", Text(R"pb(scene: "")pb"), kNotFound, "scene", "no scene named ''"),
      Case("scene_100kb_name", "GetScene", Bytes(get_long.SerializeAsString()), kNotFound, "scene", "no scene named"),
      Case("scene_unknown", "DeleteScene", Text(R"pb(scene: "nope")pb"), kNotFound, "scene", "no scene named 'nope'"),
      Case("scene_empty", "DeleteScene", Text(R"pb(scene: "")pb"), kNotFound, "scene", "no scene named ''"),
      Case("scene_100kb_name", "DeleteScene", Bytes(delete_long.SerializeAsString()), kNotFound, "scene",
           "no scene named"),
  };

  const std::string r = "ReadSensors";
  cases.push_back(Case("scene_unknown", r, Text(R"pb(scene: "nope")pb"), kNotFound, "scene", "no scene named 'nope'"));
  cases.push_back(Case("env_out_of_range", r, Text(R"pb(scene: "grasp" env_ids: 2)pb"), kOutOfRange, "env_ids[0]",
                       "env id 2 out of range [0, 2)"));
  cases.push_back(Case("env_int32_min", r, Text(R"pb(scene: "grasp" env_ids: -2147483648)pb"), kOutOfRange,
                       "env_ids[0]", "out of range [0, 2)"));
  cases.push_back(Case("env_repeated", r, Text(R"pb(scene: "grasp"
                                                    env_ids: [ 1, 0, 1 ])pb"),
                       kInvalid, "env_ids[2]", "env id 1 appears more than once"));
  cases.push_back(Case("sensor_unknown", r, Text(R"pb(scene: "grasp"
                                                      read { sensors: "ghost" })pb"),
                       kNotFound, "read.sensors[0]", "no sensor named 'ghost'"));
  cases.push_back(Case("channel_unknown", r, Text(R"pb(scene: "grasp"
                                                       read { channels: [ "force", "heat" ] })pb"),
                       kInvalid, "read.channels[1]", "unknown channel 'heat'"));
  cases.push_back(Case("gradients", r, Text(R"pb(scene: "grasp"
                                                 read { gradients: true })pb"),
                       kInvalid, "read.gradients", "gradients are computed by a step"));
  cases.push_back(Case("branch_9", r, Text(R"pb(scene: "grasp"
                                                read { branches: 9 })pb"),
                       kInvalid, "read.branches[0]", "9 is not a value of taxel.v1.Branch"));
  cases.push_back(Case("branch_negative", r, Text(R"pb(scene: "grasp"
                                                       read { branches: [ MEASURED, -1 ] })pb"),
                       kInvalid, "read.branches[1]", "-1 is not a value of taxel.v1.Branch"));
  // "kin" keeps 4 samples; "depth" and "touch" none.
  cases.push_back(Case("history_past_length", r, Text(R"pb(scene: "grasp"
                                                           read { sensors: "kin" }
                                                           history: 5)pb"),
                       kInvalid, "history", "keeps 4 samples"));
  cases.push_back(Case("history_without_history", r, Text(R"pb(scene: "grasp"
                                                               read { sensors: "depth" }
                                                               history: 1)pb"),
                       kInvalid, "history", "keeps 0 samples"));
  cases.push_back(Case("history_negative", r, Text(R"pb(scene: "grasp"
                                                        read { sensors: "kin" }
                                                        history: -1)pb"),
                       kInvalid, "history", "expected a value >= 0"));
  cases.push_back(Case("readings_over_message_limit", r, Text(R"pb(scene: "big")pb"), kExhausted, "read",
                       "over the message limit of 8388608 bytes")
                      .Setup([](BadInputContext& ctx) { MustCreate(ctx, BigReadingsScene()); }));

  const std::string e = "ResetEnvs";
  cases.push_back(Case("scene_unknown", e, Text(R"pb(scene: "nope")pb"), kNotFound, "scene", "no scene named 'nope'"));
  cases.push_back(Case("env_out_of_range", e, Text(R"pb(scene: "grasp"
                                                        env_ids: [ 0, 2 ])pb"),
                       kOutOfRange, "env_ids[1]", "env id 2 out of range [0, 2)"));
  cases.push_back(Case("env_negative", e, Text(R"pb(scene: "grasp" env_ids: -1)pb"), kOutOfRange, "env_ids[0]",
                       "env id -1 out of range [0, 2)"));
  cases.push_back(Case("env_int32_max", e, Text(R"pb(scene: "grasp" env_ids: 2147483647)pb"), kOutOfRange, "env_ids[0]",
                       "out of range [0, 2)"));
  cases.push_back(Case("env_repeated", e, Text(R"pb(scene: "grasp"
                                                    env_ids: [ 0, 0 ])pb"),
                       kInvalid, "env_ids[1]", "env id 0 appears more than once"));

  const std::string c = "GetContactMatrix";
  cases.push_back(Case("scene_unknown", c, Text(R"pb(scene: "nope")pb"), kNotFound, "scene", "no scene named 'nope'"));
  cases.push_back(Case("env_out_of_range", c, Text(R"pb(scene: "grasp" env_ids: 3)pb"), kOutOfRange, "env_ids[0]",
                       "env id 3 out of range [0, 2)"));
  cases.push_back(Case("env_negative", c, Text(R"pb(scene: "grasp"
                                                    env_ids: [ 0, -7 ])pb"),
                       kOutOfRange, "env_ids[1]", "env id -7 out of range [0, 2)"));
  cases.push_back(Case("env_repeated", c, Text(R"pb(scene: "grasp"
                                                    env_ids: [ 1, 1 ])pb"),
                       kInvalid, "env_ids[1]", "env id 1 appears more than once"));
  // Rows are "pad"; columns "terrain", "object/ball".
  cases.push_back(Case("row_unknown", c, Text(R"pb(scene: "grasp" rows: "foot")pb"), kInvalid, "rows[0]",
                       "'foot' is not in the contact matrix"));
  cases.push_back(Case("column_unknown", c, Text(R"pb(scene: "grasp"
                                                      columns: [ "terrain", "moon" ])pb"),
                       kInvalid, "columns[1]", "'moon' is not in the contact matrix"));
  cases.push_back(Case("scene_without_matrix", c, Text(R"pb(scene: "bare")pb"), kPrecondition, "",
                       "this scene has no contact matrix"));
  cases.push_back(Case("friction_not_kept", c, Text(R"pb(scene: "reported" friction: true)pb"), kPrecondition,
                       "friction", "does not keep friction"));
  // 64 envs × 74 × 75 cells × 12 bytes × 2 (normal and friction) = 8.5 MB > 8 MiB.
  cases.push_back(
      Case("response_over_message_limit", c, Text(R"pb(scene: "bigcm" friction: true)pb"), kExhausted, "", "8388608")
          .Setup([](BadInputContext& ctx) { MustCreate(ctx, BigMatrixScene()); }));
  return cases;
}

}  // namespace taxel::testing
