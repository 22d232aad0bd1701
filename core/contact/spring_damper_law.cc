#include "core/contact/spring_damper_law.h"

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"

namespace taxel::contact {

absl::Status ValidateSpringDamperParams(const SpringDamperParams& k, const char* field) {
  const struct {
    const char* name;
    double value;
  } values[] = {{"normal_stiffness", k.normal_stiffness},
                {"normal_damping", k.normal_damping},
                {"shear_damping", k.shear_damping},
                {"twist_damping", k.twist_damping}};
  for (const auto& v : values) {
    if (!(v.value >= 0) || !std::isfinite(v.value)) {
      return InvalidFieldError(absl::StrCat(field, ".", v.name),
                               absl::StrCat("expected a finite value >= 0, got ", v.value));
    }
  }
  if (!(k.exponent > 0) || !std::isfinite(k.exponent)) {
    return InvalidFieldError(absl::StrCat(field, ".exponent"),
                             absl::StrCat("expected a finite value > 0, got ", k.exponent));
  }
  return absl::OkStatus();
}

}  // namespace taxel::contact
