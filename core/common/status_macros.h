// Status propagation macros. Abseil 20220623 ships none, so Taxel has its own.
#ifndef TAXEL_CORE_COMMON_STATUS_MACROS_H_
#define TAXEL_CORE_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TAXEL_STATUS_CONCAT_INNER_(a, b) a##b
#define TAXEL_STATUS_CONCAT_(a, b) TAXEL_STATUS_CONCAT_INNER_(a, b)

/// Evaluates `expr` (an absl::Status); returns it from the enclosing function if not OK.
#define TAXEL_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::absl::Status taxel_status_ = (expr);         \
    if (!taxel_status_.ok()) return taxel_status_; \
  } while (false)

/// `TAXEL_ASSIGN_OR_RETURN(auto x, MaybeX());` — evaluates an absl::StatusOr<T>; on error returns
/// its status, otherwise move-assigns the value to `lhs`.
#define TAXEL_ASSIGN_OR_RETURN(lhs, expr) \
  TAXEL_ASSIGN_OR_RETURN_IMPL_(TAXEL_STATUS_CONCAT_(taxel_statusor_, __LINE__), lhs, expr)

#define TAXEL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#endif  // TAXEL_CORE_COMMON_STATUS_MACROS_H_
