// Empty: the target exists to build cmake/test_pch.h's precompiled header once for every
// unit test (infera_unit_test in CMakeLists.txt).
