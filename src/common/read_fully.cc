#include "common/read_fully.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace infera {

ReadFullyResult ReadFully(int fd, uint8_t* out, size_t size, uint64_t offset, size_t max_chunk) {
  ReadFullyResult r;
  const size_t chunk_limit = std::max<size_t>(1, max_chunk);
  while (r.done < size) {
    const size_t chunk = std::min(size - r.done, chunk_limit);
    const ssize_t n = pread(fd, out + r.done, chunk, static_cast<off_t>(offset + r.done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r.error = errno;
      return r;
    }
    if (n == 0) return r;  // end of file
    r.done += static_cast<size_t>(n);
  }
  return r;
}

}  // namespace infera
