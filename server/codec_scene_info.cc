// SceneInfo and SensorInfo: what CreateScene, GetScene, ListScenes and AddSensor answer.
#include <string>
#include <vector>

#include "server/codec.h"

namespace taxel::server {

void EncodeSensorInfo(const scene::Scene& scene, const sensors::Sensor& sensor, v1::SensorInfo* out) {
  out->set_sensor_id(sensor.id().value());
  out->set_name(sensor.spec().name);
  out->set_kind(EncodeSensorKind(sensor.kind()));
  out->set_link(scene.model().link(sensor.link()).name);
  out->set_num_probes(sensor.num_probes());
  const auto& layout = sensor.layout();
  const std::vector<int64_t> dims = layout.shape();
  out->mutable_layout()->Assign(dims.begin(), dims.end());
  out->set_has_imperfections(sensor.pipeline() != nullptr);
  out->set_history_length(sensor.spec().imperfections.history_length);
  for (sensors::Channel c : sensor.channels()) {
    v1::OutputInfo* o = out->add_outputs();
    o->set_channel(std::string(sensors::ChannelName(c)));
    o->set_dtype(c == sensors::Channel::kContact   ? v1::BOOL
                 : c == sensors::Channel::kPartner ? v1::INT32
                                                   : v1::FLOAT32);
    o->add_shape(scene.num_envs());
    for (int64_t d : dims) o->add_shape(d);
    if (sensors::ChannelWidth(c) == 3) o->add_shape(3);
  }
}

void EncodeSceneInfo(const scene::Scene& scene, v1::SceneInfo* out) {
  const scene::SceneModel& m = scene.model();
  out->set_name(m.name());
  out->set_num_envs(m.num_envs());
  out->set_seed(m.seed());
  for (int l = 0; l < m.num_links(); ++l) {
    const scene::LinkModel& link = m.links()[l];
    v1::LinkInfo* li = out->add_links();
    li->set_name(link.name);
    li->set_index(l);
    li->set_entity(m.entities()[link.entity.value()].name);
    li->set_kind(EncodeEntityKind(link.kind));
    li->set_moving_index(link.moving_index);
  }
  for (LinkIndex l : m.moving_links()) out->add_moving_links(m.link(l).name);
  for (const sensors::Sensor* s : scene.sensors()) EncodeSensorInfo(scene, *s, out->add_sensors());
  out->set_step(scene.step_count());
  out->set_memory_bytes(static_cast<int64_t>(scene.memory_bytes()));
  if (const scene::ContactEstimation* cm = scene.contact_matrix()) {
    v1::ContactMatrixInfo* info = out->mutable_contact_matrix();
    for (const auto& r : cm->matrix().row_names()) info->add_rows(r);
    for (const auto& c : cm->matrix().column_names()) info->add_columns(c);
    info->set_source(cm->spec().source == contact::ContactSource::kReported ? v1::REPORTED : v1::ESTIMATED);
    info->set_friction(cm->matrix().has_friction());
    info->set_bytes(static_cast<int64_t>(cm->matrix().matrix_bytes()));
    info->set_sdf_backend(EncodeSdfBackend(cm->spec().sdf_backend));
    info->set_gradients(cm->matrix().has_gradient());
  }
}

}  // namespace taxel::server
