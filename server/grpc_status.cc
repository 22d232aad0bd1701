#include "server/grpc_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace taxel::server {

bool SplitFieldMessage(absl::string_view message, absl::string_view* field, absl::string_view* description) {
  const size_t colon = message.find(": ");
  if (colon == absl::string_view::npos || colon == 0) return false;
  const absl::string_view head = message.substr(0, colon);
  if (head.find(' ') != absl::string_view::npos) return false;
  *field = head;
  *description = message.substr(colon + 2);
  return true;
}

absl::Status PrefixFieldPath(const absl::Status& status, absl::string_view prefix) {
  absl::string_view field, description;
  if (status.ok() || prefix.empty() || !SplitFieldMessage(status.message(), &field, &description)) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

grpc::Status ToGrpcStatus(const absl::Status& unprefixed, absl::string_view field_prefix) {
  if (unprefixed.ok()) return grpc::Status::OK;
  const absl::Status status = PrefixFieldPath(unprefixed, field_prefix);
  const auto code = static_cast<grpc::StatusCode>(status.code());
  std::string message(status.message());
  absl::string_view field, description;
  const bool has_field = SplitFieldMessage(status.message(), &field, &description);
  if (!has_field ||
      (status.code() != absl::StatusCode::kInvalidArgument && status.code() != absl::StatusCode::kOutOfRange)) {
    return grpc::Status(code, message);
  }
  google::rpc::BadRequest bad_request;
  auto* violation = bad_request.add_field_violations();
  violation->set_field(std::string(field));
  violation->set_description(std::string(description));
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
