// The memory a request may still make the server allocate. Every allocation whose size a request
// controls (delay rings, histories, surface samples, scaled meshes, sensor buffers, matrices) asks
// its budget first, with the size computed before anything is allocated or any state changes.
#ifndef TAXEL_CORE_COMMON_MEMORY_BUDGET_H_
#define TAXEL_CORE_COMMON_MEMORY_BUDGET_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace taxel {

/// Reservations of bytes against a limit. Sizes are doubles so that a caller can compute an
/// absurd request (1e-8 s steps of a 1 s delay, 1 µm surface samples) without overflowing.
class MemoryBudget {
 public:
  virtual ~MemoryBudget() = default;

  /// Reserves `bytes` for `what`. RESOURCE_EXHAUSTED, with a message that starts with `field`
  /// (the request field whose value asked for the memory) and names `what`, the size and the
  /// limit, when the bytes do not fit; nothing is reserved then.
  virtual absl::Status Reserve(double bytes, absl::string_view field, absl::string_view what) = 0;

  /// A budget with no limit but the largest allocation any machine could make (2^46 bytes,
  /// 64 TiB): for tools, tests and benchmarks that build scenes in-process.
  static MemoryBudget& Unlimited();
};

/// A budget of at most `limit_bytes` in total over its reservations (for tests and in-process
/// callers that want a cap).
class FixedMemoryBudget final : public MemoryBudget {
 public:
  explicit FixedMemoryBudget(double limit_bytes) : limit_(limit_bytes) {}
  absl::Status Reserve(double bytes, absl::string_view field, absl::string_view what) override;
  double reserved() const { return reserved_; }

 private:
  double limit_;
  double reserved_ = 0;
};

/// The refusal every budget gives: "<field>: <what> needs 38.1 GB; <limit_description>".
absl::Status MemoryRefusal(double bytes, absl::string_view field, absl::string_view what,
                           absl::string_view limit_description);

/// "38.1 GB", "306 KB", "12 B" (decimal units).
std::string FormatBytes(double bytes);

}  // namespace taxel

#endif  // TAXEL_CORE_COMMON_MEMORY_BUDGET_H_
