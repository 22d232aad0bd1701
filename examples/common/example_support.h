// What the simulator examples (examples/mujoco, examples/bullet) share: the agreement checks
// between Taxel's readings and a simulator's contact distances, their report, reading a channel
// out of a step response, a text heatmap of a depth grid, and a main() that connects to
// --target or starts a Taxel server in process.
#ifndef TAXEL_EXAMPLES_COMMON_EXAMPLE_SUPPORT_H_
#define TAXEL_EXAMPLES_COMMON_EXAMPLE_SUPPORT_H_

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/log.h"
#include "server/server.h"
#include "taxel/client.h"

namespace taxel::examples {

/// Adds entity `entity` of `kind` with one link `link` holding one shape; returns the shape to fill.
inline v1::Shape* AddSingleShapeLink(v1::SceneSpec* spec, const char* entity, v1::EntityKind kind, const char* link) {
  auto* e = spec->add_entities();
  e->set_name(entity);
  e->set_kind(kind);
  auto* l = e->add_links();
  l->set_name(link);
  return l->add_shapes();
}

/// Adds a sensor of `kind` on `link` ("entity/link") with probes at `pos` (tensor of `shape`) and
/// one shared probe radius.
inline void AddProbeSensor(v1::SceneSpec* spec, const char* name, v1::SensorKind kind, const char* link,
                           std::vector<int64_t> shape, const std::vector<double>& pos, double radius) {
  auto* s = spec->add_sensors();
  s->set_name(name);
  s->set_kind(kind);
  s->set_link(link);
  *s->mutable_probe_local_pos() = taxel::DoubleTensor(shape, pos);
  *s->mutable_probe_radius() = taxel::DoubleTensor({}, std::vector<double>{radius});
}

/// One comparison between Taxel and the simulator, accumulated over a run.
struct AgreementCheck {
  const char* what;
  int min_contacts;  ///< the run must exercise the check at least this often
  double tolerance_m;
  int compared = 0;             ///< readings compared
  int contacts = 0;             ///< of which the simulator reported penetration
  double max_error_m = 0;       ///< largest |Taxel − expected|
  bool bound_violated = false;  ///< a reading above its bound (AtMost) where no contact was reported

  AgreementCheck(const char* what_in, int min_contacts_in, double tolerance_m_in)
      : what(what_in), min_contacts(min_contacts_in), tolerance_m(tolerance_m_in) {}

  void Equal(double taxel_m, double expected_m, bool contact) {
    ++compared;
    contacts += contact;
    max_error_m = std::max(max_error_m, std::abs(taxel_m - expected_m));
  }
  void AtMost(double taxel_m, double bound_m) {
    ++compared;
    if (taxel_m > bound_m + tolerance_m) bound_violated = true;
  }
  bool ok() const { return !bound_violated && max_error_m <= tolerance_m && contacts >= min_contacts; }
};

/// Prints the agreement table ("max |taxel - <simulator>|" per check); true when every check passed.
inline bool ReportAgreement(const char* simulator, int steps, double tolerance_m,
                            std::initializer_list<const AgreementCheck*> checks) {
  std::printf("\nAgreement over %d steps (tolerance %.0e m):\n", steps, tolerance_m);
  bool ok = true;
  for (const AgreementCheck* check : checks) {
    ok = ok && check->ok();
    std::printf("  %-38s %6d readings, %5d in contact (need %d), max |taxel - %s| = %.3g m%s  %s\n", check->what,
                check->compared, check->contacts, check->min_contacts, simulator, check->max_error_m,
                check->bound_violated ? ", depth > R without a contact" : "", check->ok() ? "ok" : "FAILED");
  }
  return ok;
}

/// The float values of `channel` of `sensor` in a step response (empty when absent).
inline std::vector<float> Channel(const v1::StepResponse& r, const std::string& sensor, const std::string& channel) {
  for (const auto& reading : r.readings()) {
    if (reading.sensor() == sensor) return *FloatValues(reading.channels().at(channel));
  }
  return {};
}

/// A grid × grid depth map as text, row grid − 1 on top, shaded relative to its maximum.
inline void PrintDepthGrid(const std::vector<float>& depth, int grid) {
  static const char* kShades = " .:-=+*#%@";
  const double dmax = std::max(1e-12, static_cast<double>(*std::max_element(depth.begin(), depth.end())));
  for (int i = grid - 1; i >= 0; --i) {
    std::string row = "         |";
    for (int j = 0; j < grid; ++j) {
      row += kShades[std::min(9, static_cast<int>(depth[i * grid + j] / dmax * 9.999))];
      row += ' ';
    }
    std::printf("%s|\n", row.c_str());
  }
}

/// main() of an example: `--target host:port` uses a running server, otherwise one is started in
/// process on 127.0.0.1:0 (2 evaluation threads, no metrics); then `run(client)` is its exit code.
/// Errors are printed as "<program>: <status>".
inline int ExampleMain(int argc, char** argv, const char* program, const std::function<int(Client&)>& run) {
  auto fail = [&](const absl::Status& s) {
    std::fprintf(stderr, "%s: %s\n", program, s.ToString().c_str());
    return 1;
  };
  std::string target;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--target" && i + 1 < argc) {
      target = argv[++i];
    } else if (arg.rfind("--target=", 0) == 0) {
      target = arg.substr(9);
    } else {
      std::fprintf(stderr, "usage: %s [--target host:port]\n  without --target, starts a Taxel server in process\n",
                   argv[0]);
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  std::unique_ptr<server::TaxelServer> server;
  if (target.empty()) {
    server::SetLogLevel(server::LogLevel::kWarning);
    server::ServerOptions options;
    options.address = "127.0.0.1:0";
    options.metrics_address = "";  // no /metrics endpoint
    options.eval_threads = 2;
    auto started = server::TaxelServer::Start(options);
    if (!started.ok()) return fail(started.status());
    server = std::move(*started);
    target = server->target();
    std::printf("Started an in-process Taxel server at %s\n", target.c_str());
  }
  auto client = Client::Connect(target);
  if (!client.ok()) return fail(client.status());
  const int rc = run(**client);
  if (server != nullptr) server->Shutdown(1);
  return rc;
}

}  // namespace taxel::examples

#endif  // TAXEL_EXAMPLES_COMMON_EXAMPLE_SUPPORT_H_
