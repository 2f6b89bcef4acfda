// Test helpers for the ensemble tests: configs from text.
#ifndef INFERA_ENSEMBLE_ENSEMBLE_TEST_UTIL_H_
#define INFERA_ENSEMBLE_ENSEMBLE_TEST_UTIL_H_

#include <string>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "model_config.pb.h"

namespace infera::testing {

inline inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

// A one-input one-output INT32 [4] model named `name`, with tensors IN / OUT.
inline inference::ModelConfig UnaryModel(const std::string& name, int max_batch_size = 0,
                                         const std::string& dtype = "TYPE_INT32") {
  return Config("name: '" + name + "' backend: 'identity' max_batch_size: " + std::to_string(max_batch_size) +
                " input [{ name: 'IN' data_type: " + dtype + " dims: [4] }]"
                " output [{ name: 'OUT' data_type: " + dtype + " dims: [4] }]");
}

// Two inputs (A, B), one output (OUT), INT32 [4].
inline inference::ModelConfig BinaryModel(const std::string& name) {
  return Config("name: '" + name + "' backend: 'add_sub' "
                "input [{ name: 'A' data_type: TYPE_INT32 dims: [4] }, { name: 'B' data_type: TYPE_INT32 dims: [4] }]"
                " output [{ name: 'OUT' data_type: TYPE_INT32 dims: [4] }]");
}

// The diamond a -> (b, c) -> d over unary models a, b, c and binary model d.
inline const char* kDiamond = R"pb(
  name: "diamond" platform: "ensemble"
  input [{ name: "X" data_type: TYPE_INT32 dims: [4] }]
  output [{ name: "Y" data_type: TYPE_INT32 dims: [4] }]
  ensemble_scheduling { step [
    { model_name: "a" model_version: -1 input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "ta" } },
    { model_name: "b" model_version: -1 input_map { key: "IN" value: "ta" } output_map { key: "OUT" value: "tb" } },
    { model_name: "c" model_version: -1 input_map { key: "IN" value: "ta" } output_map { key: "OUT" value: "tc" } },
    { model_name: "d" model_version: -1 input_map { key: "A" value: "tb" } input_map { key: "B" value: "tc" }
      output_map { key: "OUT" value: "Y" } }
  ] })pb";

}  // namespace infera::testing

#endif  // INFERA_ENSEMBLE_ENSEMBLE_TEST_UTIL_H_
