#include "server/grpc_status.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace taxel::server {

grpc::Status ToGrpcStatus(const absl::Status& unprefixed, absl::string_view field_prefix) {
  if (unprefixed.ok()) return grpc::Status::OK;
  const absl::Status status = PrefixField(unprefixed, field_prefix);
  const auto code = static_cast<grpc::StatusCode>(status.code());
  std::string message(status.message());
  const std::optional<std::string> field = FieldOf(status);
  // Any code that concerns a field carries it (NOT_FOUND of a mesh id, RESOURCE_EXHAUSTED of a
  // dt, ...), so that every client reads the path from the details instead of the message.
  if (!field.has_value()) return grpc::Status(code, message);
  google::rpc::BadRequest bad_request;
  auto* violation = bad_request.add_field_violations();
  violation->set_field(*field);
  violation->set_description(std::string(DescriptionOf(status)));
  google::rpc::Status rpc_status;
  rpc_status.set_code(static_cast<int>(status.code()));
  rpc_status.set_message(message);
  rpc_status.add_details()->PackFrom(bad_request);
  return grpc::Status(code, message, rpc_status.SerializeAsString());
}

grpc::Status BoundedStatus(const grpc::Status& status) {
  constexpr size_t kMax = 1024;
  const std::string& message = status.error_message();
  if (message.size() <= kMax) return status;
  std::string cut = absl::StrCat(message.substr(0, kMax - 40), "... (", message.size(), " bytes)");
  std::string details = status.error_details();
  if (!details.empty()) {
    // The BadRequest description quotes the same value: cut it the same way.
    google::rpc::Status rpc;
    if (rpc.ParseFromString(details)) {
      rpc.set_message(cut);
      for (auto& any : *rpc.mutable_details()) {
        google::rpc::BadRequest bad;
        if (!any.UnpackTo(&bad)) continue;
        for (auto& v : *bad.mutable_field_violations()) {
          if (v.description().size() > kMax) {
            v.set_description(
                absl::StrCat(v.description().substr(0, kMax - 40), "... (", v.description().size(), " bytes)"));
          }
          if (v.field().size() > kMax) v.set_field(v.field().substr(0, kMax));
        }
        any.PackFrom(bad);
      }
      details = rpc.SerializeAsString();
    }
  }
  return grpc::Status(status.error_code(), cut, details);
}

}  // namespace taxel::server
