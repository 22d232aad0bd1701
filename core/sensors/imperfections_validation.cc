// ImperfectionSpec: what is set (any) and its validation against the layout.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/field_error.h"
#include "core/common/status_macros.h"
#include "core/sensors/imperfections.h"

namespace taxel::sensors {
namespace {

absl::Status NonNegative(absl::string_view field, absl::string_view name, double v) {
  if (!(v >= 0) || !std::isfinite(v))
    return InvalidFieldError(absl::StrCat(field, ".", name), absl::StrCat("expected a finite value >= 0, got ", v));
  return absl::OkStatus();
}

}  // namespace

bool ImperfectionSpec::any() const {
  const bool unit_gain = std::all_of(probe_gain.begin(), probe_gain.end(), [](double g) { return g == 1.0; });
  return probe_radius_noise != 0 || !unit_gain || probe_gain_resample_range.has_value() || crosstalk_strength != 0 ||
         !crosstalk_kernel.empty() || hysteresis_strength != 0 || random_walk != 0 || noise != 0 || bias != 0 ||
         resolution != 0 || dead_taxel_probability != 0 || delay != 0 || jitter != 0 || history_length != 0 ||
         update_period != 1;
}

absl::Status ValidateImperfections(const ImperfectionSpec& s, const ProbeLayout& layout, absl::string_view f_in) {
  const std::string f = absl::StrCat(f_in, ".imperfections");
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "probe_radius_noise", s.probe_radius_noise));
  if (s.probe_gain.size() != 1 && static_cast<int>(s.probe_gain.size()) != layout.size()) {
    return InvalidFieldError(f + ".probe_gain",
                             absl::StrCat("expected 1 or ", layout.size(), " values, got ", s.probe_gain.size()));
  }
  for (size_t k = 0; k < s.probe_gain.size(); ++k) {
    if (!std::isfinite(s.probe_gain[k]))
      return InvalidFieldError(absl::StrCat(f, ".probe_gain[", k, "]"), "expected a finite value");
  }
  if (s.probe_gain_resample_range) {
    const auto [lo, hi] = *s.probe_gain_resample_range;
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) {
      return InvalidFieldError(f + ".probe_gain_resample_range",
                               absl::StrCat("expected finite [lo, hi] with lo <= hi, got [", lo, ", ", hi, "]"));
    }
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "crosstalk_strength", s.crosstalk_strength));
  if (s.crosstalk_strength > 1) {
    return InvalidFieldError(f + ".crosstalk_strength",
                             absl::StrCat("expected a value in [0, 1], got ", s.crosstalk_strength));
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "crosstalk_sigma", s.crosstalk_sigma));
  if (s.crosstalk_strength > 0 && s.crosstalk_kernel.empty() && !(s.crosstalk_sigma > 0)) {
    return InvalidFieldError(f + ".crosstalk_sigma", "expected a value > 0 when crosstalk_strength > 0");
  }
  if (!s.crosstalk_kernel.empty()) {
    const int L = s.crosstalk_kernel_layers, r = s.crosstalk_kernel_rows, c = s.crosstalk_kernel_cols;
    if (L < 1 || L > 3 || r < 1 || c < 1 || r % 2 == 0 || c % 2 == 0) {
      return InvalidFieldError(
          f + ".crosstalk_kernel",
          absl::StrCat("expected an odd-sized kernel of shape (N, M), (2, N, M) or (3, N, M), got (", L, ", ", r, ", ",
                       c, ")"));
    }
    if (s.crosstalk_kernel.size() != static_cast<size_t>(L) * r * c) {
      return InvalidFieldError(f + ".crosstalk_kernel", "value count does not match its shape");
    }
    for (double v : s.crosstalk_kernel) {
      if (!std::isfinite(v)) return InvalidFieldError(f + ".crosstalk_kernel", "expected finite values");
    }
  }
  if (s.crosstalk_strength > 0 || !s.crosstalk_kernel.empty()) {
    TAXEL_RETURN_IF_ERROR(RegularGrid(layout, f + ".crosstalk").status());
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "hysteresis_strength", s.hysteresis_strength));
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "hysteresis_tau", s.hysteresis_tau));
  if (s.hysteresis_strength > 0 && !(s.hysteresis_tau > 0)) {
    return InvalidFieldError(f + ".hysteresis_tau", "expected a value > 0 when hysteresis_strength > 0");
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "random_walk", s.random_walk));
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "noise", s.noise));
  if (!std::isfinite(s.bias)) return InvalidFieldError(f + ".bias", "expected a finite value");
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "resolution", s.resolution));
  if (!(s.dead_taxel_probability >= 0 && s.dead_taxel_probability <= 1)) {
    return InvalidFieldError(f + ".dead_taxel_probability",
                             absl::StrCat("expected a value in [0, 1], got ", s.dead_taxel_probability));
  }
  const auto [dlo, dhi] = s.dead_taxel_value_range;
  if (!std::isfinite(dlo) || !std::isfinite(dhi) || dlo > dhi) {
    return InvalidFieldError(f + ".dead_taxel_value_range",
                             absl::StrCat("expected finite [lo, hi] with lo <= hi, got [", dlo, ", ", dhi, "]"));
  }
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "delay", s.delay));
  TAXEL_RETURN_IF_ERROR(NonNegative(f, "jitter", s.jitter));
  if (s.jitter > s.delay) {
    return InvalidFieldError(f + ".jitter", absl::StrCat("expected jitter <= delay (", s.delay, " s), got ", s.jitter));
  }
  if (s.history_length < 0 || s.history_length > 4096) {
    return InvalidFieldError(f + ".history_length",
                             absl::StrCat("expected a value in [0, 4096], got ", s.history_length));
  }
  if (s.update_period < 1) {
    return InvalidFieldError(f + ".update_period", absl::StrCat("expected a value >= 1, got ", s.update_period));
  }
  return absl::OkStatus();
}

}  // namespace taxel::sensors
