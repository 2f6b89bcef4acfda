// Errors as values across module boundaries.
//
// infera uses absl::Status / absl::StatusOr<T> (shipped with gRPC on Debian 12). Debian's
// abseil (20220623) predates abseil's own status macros, so the project defines them here.
// Exceptions from LibTorch, protobuf or a parser are caught in the adapter that calls
// them and become a Status; transports map a Status to their wire code in one function
// each (see http/http_status.h).
//
// Usage:
//   absl::StatusOr<Config> Load(const std::string& path) {
//     ASSIGN_OR_RETURN(std::string text, ReadFile(path));
//     RETURN_IF_ERROR(Validate(text));
//     ...
//   }
#ifndef INFERA_COMMON_STATUS_H_
#define INFERA_COMMON_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define INFERA_STATUS_CONCAT_INNER_(a, b) a##b
#define INFERA_STATUS_CONCAT_(a, b) INFERA_STATUS_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function when `expr` is not OK.
#define RETURN_IF_ERROR(expr)                            \
  do {                                                   \
    ::absl::Status infera_status_ = (expr);              \
    if (!infera_status_.ok()) return infera_status_;     \
  } while (0)

// Evaluates `rexpr` (a StatusOr); on error returns its status, else assigns the value
// to `lhs`, which may be a declaration (`ASSIGN_OR_RETURN(auto x, F())`).
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  INFERA_ASSIGN_OR_RETURN_IMPL_(INFERA_STATUS_CONCAT_(infera_statusor_, __LINE__), lhs, rexpr)

#define INFERA_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // INFERA_COMMON_STATUS_H_
