#include "tools/bench/progress_line.h"

#include <unistd.h>

namespace infera::bench {

ProgressLine::ProgressLine(std::FILE* out, int force)
    : out_(out), enabled_(force >= 0 ? force != 0 : isatty(fileno(out)) != 0) {}

void ProgressLine::Update(const std::string& text) {
  if (!enabled_) return;
  std::fprintf(out_, "\r%s\033[K", text.c_str());
  std::fflush(out_);
  shown_ = text.size();
}

void ProgressLine::Clear() {
  if (!enabled_ || shown_ == 0) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  shown_ = 0;
}

}  // namespace infera::bench
