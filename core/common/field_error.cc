#include "core/common/field_error.h"

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace taxel {

absl::Status FieldError(absl::StatusCode code, absl::string_view field, absl::string_view description) {
  if (field.empty()) return absl::Status(code, description);
  absl::Status status(code, absl::StrCat(field, ": ", description));
  status.SetPayload(kFieldPathTypeUrl, absl::Cord(field));
  return status;
}

absl::Status InvalidFieldError(absl::string_view field, absl::string_view description) {
  return FieldError(absl::StatusCode::kInvalidArgument, field, description);
}

std::optional<std::string> FieldOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kFieldPathTypeUrl);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

absl::string_view DescriptionOf(const absl::Status& status) {
  const absl::string_view message = status.message();
  const std::optional<std::string> field = FieldOf(status);
  // FieldError and PrefixField keep the message "<field>: <description>"; the check only guards
  // against a payload set by hand on some other message.
  if (!field.has_value() || !absl::StartsWith(message, *field) ||
      !absl::StartsWith(message.substr(field->size()), ": ")) {
    return message;
  }
  return message.substr(field->size() + 2);
}

absl::Status PrefixField(const absl::Status& status, absl::string_view prefix) {
  const std::optional<std::string> field = FieldOf(status);
  if (!field.has_value() || prefix.empty()) return status;
  absl::Status prefixed(status.code(), absl::StrCat(prefix, status.message()));
  status.ForEachPayload(
      [&prefixed](absl::string_view type_url, const absl::Cord& payload) { prefixed.SetPayload(type_url, payload); });
  prefixed.SetPayload(kFieldPathTypeUrl, absl::Cord(absl::StrCat(prefix, *field)));
  return prefixed;
}

}  // namespace taxel
