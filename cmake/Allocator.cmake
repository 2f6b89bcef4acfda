# The malloc linked into the infera binary (docs/benchmarks.md "Allocator"):
#
#   -DINFERA_ALLOCATOR=jemalloc   Debian libjemalloc-dev (the default: it won the comparison)
#   -DINFERA_ALLOCATOR=tcmalloc   Debian libgoogle-perftools-dev (libtcmalloc_minimal)
#   -DINFERA_ALLOCATOR=glibc      the C library's malloc
#
# Only the `infera` executable links it (src/server/CMakeLists.txt); unit tests, tools
# and fuzz targets keep glibc. Sanitizer builds (INFERA_SANITIZE) always use glibc: ASan
# and TSan replace malloc themselves. A chosen allocator that is not installed falls back
# to glibc with a message (scripts/install_deps.sh installs both). The server logs the
# malloc it really runs with at start ("allocator: ...", common/allocator_info.h).
#
# Sets INFERA_ALLOCATOR_LIBRARY (empty for glibc).

set(INFERA_ALLOCATOR "jemalloc" CACHE STRING "malloc linked into the infera binary: glibc, jemalloc or tcmalloc")
set_property(CACHE INFERA_ALLOCATOR PROPERTY STRINGS glibc jemalloc tcmalloc)
if(NOT INFERA_ALLOCATOR MATCHES "^(glibc|jemalloc|tcmalloc)$")
  message(FATAL_ERROR "INFERA_ALLOCATOR='${INFERA_ALLOCATOR}': choose glibc, jemalloc or tcmalloc")
endif()

set(INFERA_ALLOCATOR_LIBRARY "")
if(INFERA_SANITIZE)
  if(NOT INFERA_ALLOCATOR STREQUAL "glibc")
    message(STATUS "infera allocator: glibc (INFERA_SANITIZE=${INFERA_SANITIZE} replaces malloc; "
                   "INFERA_ALLOCATOR=${INFERA_ALLOCATOR} ignored)")
  endif()
elseif(INFERA_ALLOCATOR STREQUAL "jemalloc")
  find_library(INFERA_JEMALLOC_LIBRARY NAMES jemalloc)
  if(INFERA_JEMALLOC_LIBRARY)
    set(INFERA_ALLOCATOR_LIBRARY ${INFERA_JEMALLOC_LIBRARY})
  else()
    message(WARNING "INFERA_ALLOCATOR=jemalloc but libjemalloc is not installed (Debian: libjemalloc-dev, "
                    "scripts/install_deps.sh): infera uses glibc malloc")
  endif()
elseif(INFERA_ALLOCATOR STREQUAL "tcmalloc")
  find_library(INFERA_TCMALLOC_LIBRARY NAMES tcmalloc_minimal)
  if(INFERA_TCMALLOC_LIBRARY)
    set(INFERA_ALLOCATOR_LIBRARY ${INFERA_TCMALLOC_LIBRARY})
  else()
    message(WARNING "INFERA_ALLOCATOR=tcmalloc but libtcmalloc_minimal is not installed (Debian: "
                    "libgoogle-perftools-dev, scripts/install_deps.sh): infera uses glibc malloc")
  endif()
endif()
if(INFERA_ALLOCATOR_LIBRARY)
  message(STATUS "infera allocator: ${INFERA_ALLOCATOR} (${INFERA_ALLOCATOR_LIBRARY})")
endif()
