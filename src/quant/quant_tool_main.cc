// quant_tool: the C++ encoders and decoders of src/quant on files, so that
// scripts/gguf_quant.py can be checked against them byte for byte
// (tests/integration/test_gguf_quant.py).
//   quant_tool quantize   TYPE K in.f32 out.blocks   rows of K floats → GGUF blocks
//   quant_tool dequantize TYPE K in.blocks out.f32   GGUF blocks → rows of K floats
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "quant/block_types.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "quant_tool: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace infera::quant;
  if (argc != 6) return Fail("usage: quant_tool quantize|dequantize TYPE K IN OUT");
  const std::string mode = argv[1];
  const auto type = BlockTypeFromName(argv[2]);
  if (!type) return Fail(std::string("unknown type ") + argv[2]);
  const int64_t k = std::atoll(argv[3]);
  if (std::string problem = CheckRowLength(*type, k); !problem.empty()) return Fail(problem);
  std::ifstream in(argv[4], std::ios::binary);
  if (!in) return Fail(std::string("cannot read ") + argv[4]);
  const std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int64_t row_bytes = RowBytes(*type, k);
  std::vector<char> output;
  if (mode == "quantize") {
    if (input.size() % (4 * k) != 0) return Fail("input is not whole rows of K floats");
    const int64_t rows = static_cast<int64_t>(input.size()) / (4 * k);
    output.resize(static_cast<size_t>(rows * row_bytes));
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(row.data(), input.data() + r * 4 * k, static_cast<size_t>(4 * k));
      QuantizeRow(*type, row.data(), k, output.data() + r * row_bytes);
    }
  } else if (mode == "dequantize") {
    if (input.size() % row_bytes != 0) return Fail("input is not whole rows of blocks");
    const int64_t rows = static_cast<int64_t>(input.size()) / row_bytes;
    output.resize(static_cast<size_t>(rows * 4 * k));
    for (int64_t r = 0; r < rows; ++r) {
      DequantizeRow(*type, input.data() + r * row_bytes, k, reinterpret_cast<float*>(output.data() + r * 4 * k));
    }
  } else {
    return Fail("unknown mode " + mode);
  }
  std::ofstream out(argv[5], std::ios::binary);
  out.write(output.data(), static_cast<std::streamsize>(output.size()));
  return out ? 0 : Fail(std::string("cannot write ") + argv[5]);
}
