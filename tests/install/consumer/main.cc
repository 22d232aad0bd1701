// Connects to a taxel-server, creates a one-probe scene with a ball 1 mm into the probe's sphere
// and prints what it reads, as a user's program would. Usage: consumer HOST:PORT
#include <cstdio>

#include "taxel/client.h"
#include "taxel/version.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  auto client = taxel::Client::Connect(argv[1]);
  if (!client.ok()) return 1;
  auto info = (*client)->GetServerInfo();
  if (!info.ok()) {
    std::fprintf(stderr, "%s\n", info.status().ToString().c_str());
    return 1;
  }
  std::printf("client %s, server %s\n", taxel::kVersion, info->version().c_str());

  // A probe of radius R = 2 mm at the pad origin; a 1 cm ball centred 11 mm above it, so the
  // ball's surface is 1 mm above the probe centre: the probe reads R - 1 mm = 1 mm.
  taxel::v1::SceneSpec spec;
  spec.set_name("consumer");
  spec.set_num_envs(1);
  auto* hand = spec.add_entities();
  hand->set_name("hand");
  hand->set_kind(taxel::v1::ROBOT);
  hand->add_links()->set_name("pad");
  auto* ball = spec.add_entities();
  ball->set_name("ball");
  ball->set_kind(taxel::v1::OBJECT);
  ball->add_links()->add_shapes()->mutable_sphere()->set_radius(0.01);
  ball->mutable_links(0)->set_name("body");
  auto* s = spec.add_sensors();
  s->set_name("depth");
  s->set_kind(taxel::v1::CONTACT_DEPTH_PROBE);
  s->set_link("pad");
  *s->mutable_probe_local_pos() = taxel::DoubleTensor({1, 3}, std::vector<double>{0, 0, 0});
  *s->mutable_probe_radius() = taxel::DoubleTensor({}, std::vector<double>{0.002});
  if (auto created = (*client)->CreateScene(spec); !created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  taxel::v1::StepRequest step;
  step.set_scene("consumer");
  step.set_quat_order(taxel::v1::XYZW);
  step.set_dt(0.01);
  *step.mutable_poses() =
      taxel::DoubleTensor({1, 2, 7}, std::vector<double>{0, 0, 0, 0, 0, 0, 1, 0, 0, 0.011, 0, 0, 0, 1});
  auto r = (*client)->Step(step);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
    return 1;
  }
  for (const auto& reading : r->readings()) {
    const auto depth = taxel::FloatValues(reading.channels().at("depth"));
    if (depth.ok()) std::printf("depth %.6f m\n", (*depth)[0]);
  }
  return 0;
}
