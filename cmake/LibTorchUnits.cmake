# Targets whose units include LibTorch's headers call infera_libtorch_units(target): the
# LibTorch C++ API's include path and, in a clang build (the sanitizer builds of
# `make test`, docs/reliability.md), gcc as their compiler. LibTorch 1.13's headers do not
# compile with clang in C++20 mode; cmake/gcc_for_libtorch.sh compiles these few units with
# gcc and the build's own flags, so that the rest of a sanitizer build can be clang's
# (its units compile two to four times faster than under gcc's ASan). The units link into
# clang-built executables: the same C++ ABI (libstdc++), the same sanitizer run-time
# interface (the launcher says why that holds).
#
# Keep LibTorch units in targets of their own (infera_backend_torch, infera_llm_torch, a
# few tests and benchmarks): every unit of such a target goes through gcc.
if(INFERA_IS_CLANG)
  find_program(INFERA_LIBTORCH_GXX NAMES g++ g++-12 REQUIRED)
endif()

function(infera_libtorch_units target)
  target_include_directories(${target} SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS})
  if(INFERA_IS_CLANG)
    set_property(TARGET ${target} PROPERTY CXX_COMPILER_LAUNCHER
                 ${CMAKE_SOURCE_DIR}/cmake/gcc_for_libtorch.sh ${INFERA_LIBTORCH_GXX}
                 ${CMAKE_CXX_COMPILER_LAUNCHER} --)
    # clang's precompiled header cannot be read by gcc.
    set_property(TARGET ${target} PROPERTY DISABLE_PRECOMPILE_HEADERS ON)
  endif()
endfunction()
