// The live viewer's routes (`--ui_address`): the page, and a JSON API over the scene registry that
// shows each tenant its own scenes and the latest readings of one env of one sensor. Served by
// HttpServer; documented for users in README.md ("Live viewer") and docs/reference.md.
#ifndef TAXEL_SERVER_VIEWER_H_
#define TAXEL_SERVER_VIEWER_H_

#include <map>
#include <string>

#include "absl/strings/string_view.h"
#include "server/http_server.h"
#include "server/scene_registry.h"

namespace taxel::server {

/// The page (HTML, CSS and JavaScript in one document; it loads nothing else).
absl::string_view ViewerPage();

/// What a viewer channel shows and in which unit: the magnitude |v| of a vector channel (force N,
/// torque N·m, displacement m), the value of a scalar one (depth m, area m², contact 0/1).
struct ViewerChannel {
  sensors::Channel channel;
  absl::string_view name;      ///< the channel's name in readings ("force")
  absl::string_view quantity;  ///< what a value is ("|force|", "depth")
  absl::string_view unit;      ///< "N", "N·m", "m", "m²", "" (contact)
};
/// The channels of `sensor` the viewer can show, in the sensor's channel order (normal and
/// partner are left out: a direction and a link index make no heatmap).
std::vector<ViewerChannel> ViewerChannels(const sensors::Sensor& sensor);

/// The routes, over `registry` (not owned; it outlives the viewer).
///
///   GET /                 the page
///   GET /api/scenes       the caller's scenes, their sensors and viewable channels
///   GET /api/frame?scene=S&sensor=K[&env=E][&channel=C][&branch=measured|ground_truth]
///                         one env's latest readings of one channel, row-major, with min, max, unit
///
/// With tokens (the server's --auth_tokens_file) every request needs `Authorization: Bearer T`
/// or `?token=T` and sees only the tenant of T; anything else is 401. Without tokens every caller
/// is tenant "", as on the gRPC side. Errors are JSON {"error": message, "parameter": name}
/// (400 bad or unknown parameter, 401, 404 unknown path, scene or sensor). A handler holds a
/// scene's lock only to copy one env's values of one channel (rows·cols numbers).
class Viewer {
 public:
  Viewer(SceneRegistry* registry, std::map<std::string, std::string> tokens)
      : registry_(registry), tokens_(std::move(tokens)) {}

  HttpResponse Handle(const HttpRequest& request) const;

 private:
  HttpResponse Scenes(const std::string& tenant) const;
  HttpResponse Frame(const std::string& tenant, const std::map<std::string, std::string>& params) const;

  SceneRegistry* registry_;
  const std::map<std::string, std::string> tokens_;
};

}  // namespace taxel::server

#endif  // TAXEL_SERVER_VIEWER_H_
