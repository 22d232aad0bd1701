#include "core/common/memory_budget.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/common/field_error.h"

namespace taxel {
namespace {

constexpr double kLargestAllocation = 70368744177664.0;  // 2^46 bytes

class UnlimitedBudget final : public MemoryBudget {
 public:
  absl::Status Reserve(double bytes, absl::string_view field, absl::string_view what) override {
    if (bytes >= 0 && bytes <= kLargestAllocation) return absl::OkStatus();
    return MemoryRefusal(bytes, field, what, "that is more than any machine can allocate");
  }
};

}  // namespace

MemoryBudget& MemoryBudget::Unlimited() {
  static UnlimitedBudget* budget = new UnlimitedBudget();
  return *budget;
}

absl::Status FixedMemoryBudget::Reserve(double bytes, absl::string_view field, absl::string_view what) {
  // Written so that NaN is refused.
  if (!(bytes >= 0 && reserved_ + bytes <= limit_)) {
    return MemoryRefusal(bytes, field, what, absl::StrCat("the limit is ", FormatBytes(limit_)));
  }
  reserved_ += bytes;
  return absl::OkStatus();
}

absl::Status MemoryRefusal(double bytes, absl::string_view field, absl::string_view what,
                           absl::string_view limit_description) {
  return FieldError(absl::StatusCode::kResourceExhausted, field,
                    absl::StrCat(what, " needs ", FormatBytes(bytes), "; ", limit_description));
}

std::string FormatBytes(double bytes) {
  if (!std::isfinite(bytes)) return "an unbounded amount of memory";
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  double v = bytes;
  while (v >= 1000 && u < 6) {
    v /= 1000;
    ++u;
  }
  if (u == 0) return absl::StrCat(static_cast<int64_t>(v), " B");
  return absl::StrFormat("%.3g %s", v, units[u]);
}

}  // namespace taxel
