// ReadFully: pread until `size` bytes of a file from `offset` are in `out`, the loop
// every caller of pread otherwise writes again — a signal (EINTR) retries, a short read
// continues where it stopped, the end of the file stops it early.
//
// `max_chunk` bounds each pread (0 is taken as 1; the GGUF loader reads in 16 MiB calls:
// one call of 1 GiB into fresh huge-page memory was several times slower). Thread-safe (pread keeps no
// file position); the caller owns fd and out.
#ifndef INFERA_COMMON_READ_FULLY_H_
#define INFERA_COMMON_READ_FULLY_H_

#include <cstddef>
#include <cstdint>
#include <limits>

namespace infera {

struct ReadFullyResult {
  size_t done = 0;  // bytes now in out[0 .. done)
  int error = 0;    // errno of the failed pread, or 0; error == 0 && done < size: end of file
};

ReadFullyResult ReadFully(int fd, uint8_t* out, size_t size, uint64_t offset,
                          size_t max_chunk = std::numeric_limits<size_t>::max());

}  // namespace infera

#endif  // INFERA_COMMON_READ_FULLY_H_
