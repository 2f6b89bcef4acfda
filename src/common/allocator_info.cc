#include "common/allocator_info.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>

#include <cstddef>

#include "common/str_cat.h"

namespace infera {
namespace {

// jemalloc: int mallctl(const char*, void*, size_t*, void*, size_t).
using MallctlFn = int (*)(const char*, void*, size_t*, void*, size_t);
// gperftools: const char* tc_version(int* major, int* minor, const char** patch).
using TcVersionFn = const char* (*)(int*, int*, const char**);

}  // namespace

std::string AllocatorInfo::Describe() const {
  return StrCat(name, version.empty() ? "" : " ", version, " (", library.empty() ? "?" : library, ")");
}

AllocatorInfo ActiveAllocator() {
  AllocatorInfo info;
  info.name = "unknown";
  void* malloc_symbol = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info where{};
  if (malloc_symbol != nullptr && dladdr(malloc_symbol, &where) != 0 && where.dli_fname != nullptr) {
    info.library = where.dli_fname;
  }
  const std::string& lib = info.library;
  // A sanitizer's runtime replaces malloc (its own allocator, in libasan/libtsan or linked
  // into the executable by clang); the sanitizer builds link no other allocator.
  if (dlsym(RTLD_DEFAULT, "__asan_init") != nullptr) {
    info.name = "asan";
  } else if (dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr) {
    info.name = "tsan";
  } else if (lib.find("jemalloc") != std::string::npos) {
    info.name = "jemalloc";
    if (auto mallctl = reinterpret_cast<MallctlFn>(dlsym(RTLD_DEFAULT, "mallctl"))) {
      const char* version = nullptr;
      size_t size = sizeof(version);
      if (mallctl("version", &version, &size, nullptr, 0) == 0 && version != nullptr) info.version = version;
    }
  } else if (lib.find("tcmalloc") != std::string::npos) {
    info.name = "tcmalloc";
    if (auto tc_version = reinterpret_cast<TcVersionFn>(dlsym(RTLD_DEFAULT, "tc_version"))) {
      int major = 0, minor = 0;
      const char* patch = nullptr;
      tc_version(&major, &minor, &patch);
      info.version = StrCat(major, ".", minor, patch != nullptr ? patch : "");
    }
  } else if (lib.find("libc.so") != std::string::npos) {
    info.name = "glibc";
    info.version = gnu_get_libc_version();
  }
  return info;
}

}  // namespace infera
