# Hardening build modes (docs/reliability.md). Everything here is off in the default
# build, which stays the gcc Release build every figure in docs/benchmarks.md comes from.
#
#   -DINFERA_SANITIZE=address,undefined   ASan + UBSan; gcc or clang (make test: clang)
#   -DINFERA_SANITIZE=thread              TSan (absl::Mutex made visible to it, cmake/tsan/)
#   -DINFERA_FUZZ=ON                      libFuzzer targets in fuzz/: clang, with
#                                         INFERA_SANITIZE=address,undefined
#   -DCMAKE_CXX_COMPILER=clang++          any clang build also runs clang's thread-safety
#                                         analysis on what it compiles, as errors
#
# scripts/hardening_checks.sh drives the build directories that `make test` uses.

set(INFERA_SANITIZE "" CACHE STRING
    "Sanitizers for every target: 'address,undefined' or 'thread'; empty for none")
option(INFERA_FUZZ "Build the libFuzzer targets in fuzz/ (clang, INFERA_SANITIZE=address,undefined)" OFF)

set(INFERA_IS_CLANG OFF)
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(INFERA_IS_CLANG ON)
  # abseil's ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED / ABSL_LOCKS_EXCLUDED are only
  # checked by clang. A wrong or unchecked annotation is a build error in every clang build.
  add_compile_options(-Wthread-safety -Werror=thread-safety)
endif()

if(INFERA_FUZZ AND NOT (INFERA_IS_CLANG AND INFERA_SANITIZE STREQUAL "address,undefined"))
  message(FATAL_ERROR "INFERA_FUZZ needs clang and -DINFERA_SANITIZE=address,undefined")
endif()

if(INFERA_SANITIZE)
  # UBSan stays recoverable so that its suppression file works (an unrecoverable check
  # aborts even when suppressed); every run sets UBSAN_OPTIONS=halt_on_error=1, so any
  # report that is not suppressed still ends the process (scripts/hardening_checks.sh).
  set(_infera_san_flags -fsanitize=${INFERA_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(${_infera_san_flags})
  # Line tables only: symbolized stacks without full debug info's compile and link cost.
  if(INFERA_IS_CLANG)
    list(APPEND _infera_san_flags -gline-tables-only)
    if(INFERA_SANITIZE MATCHES "undefined")
      # Two RapidJSON functions with their own undefined behaviour (the file says which).
      list(APPEND _infera_san_flags
           -fsanitize-ignorelist=${CMAKE_CURRENT_LIST_DIR}/sanitizers/rapidjson_ignorelist.txt)
    endif()
  else()
    list(APPEND _infera_san_flags -g1)
  endif()
  add_compile_options(${_infera_san_flags})
  # -O1: the sanitizers' recommended level (readable stacks, fast enough to run the tests).
  # NDEBUG stays: LibTorch's headers must see what its release build saw.
  set(CMAKE_CXX_FLAGS_RELEASE "-O1 -DNDEBUG")
endif()

if(INFERA_FUZZ)
  # Coverage instrumentation for everything the fuzz targets link (the targets themselves
  # add -fsanitize=fuzzer when they link).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# LibTorch and the other Debian libraries are not instrumented. absl::Mutex lives in
# libabsl_synchronization.so, so TSan would see none of its happens-before edges and
# report every guarded access as a race: the test executables of a TSan build link a
# shim that tells TSan when an absl::Mutex is acquired and released (cmake/tsan/).
set(INFERA_TEST_EXTRA_LIBS "")
if(INFERA_SANITIZE STREQUAL "thread")
  add_library(infera_tsan_absl_mutex OBJECT ${CMAKE_CURRENT_LIST_DIR}/tsan/absl_mutex_annotations.cc)
  target_link_libraries(infera_tsan_absl_mutex PUBLIC absl::synchronization)
  # The shim *is* the lock implementation (it forwards to abseil's): the analysis, which
  # checks callers of Lock()/Unlock(), cannot check their bodies.
  if(INFERA_IS_CLANG)
    target_compile_options(infera_tsan_absl_mutex PRIVATE -Wno-thread-safety)
  endif()
  set(INFERA_TEST_EXTRA_LIBS infera_tsan_absl_mutex ${CMAKE_DL_LIBS} -rdynamic)
endif()
