// CatchTorchErrors: runs LibTorch code and turns its exceptions into absl::Status, with
// the one line of the message worth showing a client (SummarizeTorchMessage).
//
// Why: LibTorch reports every failure (a bad file, a TorchScript error, a missing
// kernel) by throwing; the backend's contract is absl::Status, and a client should see
// the "...Error: ..." line of a TorchScript traceback, not the whole traceback (that goes
// to the verbose log).
//
// IMPORTANT: includes LibTorch's c10 headers: for the pytorch backend's .cc files only.
//
// Thread-safe: pure functions.
#ifndef INFERA_BACKEND_TORCH_TORCH_ERRORS_H_
#define INFERA_BACKEND_TORCH_TORCH_ERRORS_H_

#include <c10/util/Exception.h>

#include <exception>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/logging.h"
#include "common/str_cat.h"

namespace infera {

// The line of a LibTorch message worth showing a client: the last "...Error: ..." line
// of a TorchScript traceback, else the first line.
inline std::string SummarizeTorchMessage(std::string_view message) {
  std::string_view first, error_line;
  size_t start = 0;
  while (start < message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string_view::npos) end = message.size();
    const std::string_view line = message.substr(start, end - start);
    if (!line.empty() && first.empty()) first = line;
    const size_t colon = line.find(": ");
    if (colon != std::string_view::npos && colon >= 5 && line.substr(colon - 5, 5) == "Error" &&
        line.find(' ') > colon) {
      error_line = line;
    }
    start = end + 1;
  }
  return std::string(error_line.empty() ? first : error_line);
}

// Runs `fn` (returning Status or StatusOr), turning any exception into `code` with
// `what` prefixed. The full message goes to the verbose log.
template <typename Fn>
auto CatchTorchErrors(absl::StatusCode code, std::string_view what, Fn&& fn) -> decltype(fn()) {
  std::string message;
  try {
    return fn();
  } catch (const c10::Error& e) {
    message = e.what_without_backtrace();
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown exception";
  }
  INFERA_LOG(VERBOSE) << what << ": " << message;
  return absl::Status(code, StrCat(what, ": ", SummarizeTorchMessage(message)));
}

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_TORCH_ERRORS_H_
