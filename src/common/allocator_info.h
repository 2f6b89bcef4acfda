// Which malloc serves this process: the one the infera binary links
// (-DINFERA_ALLOCATOR=jemalloc|tcmalloc|glibc, docs/benchmarks.md "Allocator"), or one
// LD_PRELOADed over it. Found at run time from the object that defines the `malloc`
// symbol the dynamic linker chose (dladdr), so it reports what really runs, not what
// the build asked for; the version comes from that allocator's own API (jemalloc's
// mallctl("version"), tcmalloc's tc_version, glibc's gnu_get_libc_version).
//
// Thread-safe.
#ifndef INFERA_COMMON_ALLOCATOR_INFO_H_
#define INFERA_COMMON_ALLOCATOR_INFO_H_

#include <string>

namespace infera {

struct AllocatorInfo {
  std::string name;     // "jemalloc", "tcmalloc", "glibc", "asan" / "tsan" (a sanitizer build), or "unknown"
  std::string version;  // e.g. "5.3.0-0-g54eaed1d..."; "" when the allocator does not say
  std::string library;  // the shared object defining malloc, e.g. /lib/x86_64-linux-gnu/libc.so.6

  // "jemalloc 5.3.0-0-g54eaed1d (/usr/lib/x86_64-linux-gnu/libjemalloc.so.2)".
  std::string Describe() const;
};

AllocatorInfo ActiveAllocator();

}  // namespace infera

#endif  // INFERA_COMMON_ALLOCATOR_INFO_H_
