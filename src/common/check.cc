#include "common/check.h"

#include <cstdlib>
#include <string>

#include "common/logging.h"

namespace infera::check_internal {

CheckFailure::CheckFailure(const char* condition, const char* file, int line)
    : condition_(condition), file_(file), line_(line) {}

CheckFailure::~CheckFailure() {
  const std::string message = stream_.str();
  {
    logging_internal::LogMessage log(LogLevel::kError, file_, line_);
    log.stream() << "CHECK failed: " << condition_ << (message.empty() ? "" : " ") << message
                 << " (at " << file_ << ":" << line_ << ")";
  }  // written here, before the abort
  std::abort();
}

}  // namespace infera::check_internal
