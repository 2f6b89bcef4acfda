// The precompiled header every gcc-built unit test reuses (infera_unit_test in
// CMakeLists.txt): what nearly every test unit parses first. No project header and no
// abseil here: a change to either would rebuild every test, and the thread-safety stage
// selects units by whether they include abseil's annotations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
