// Metadata values of every GGUF type, arrays (of numbers, strings, nested arrays), and
// the typed getters' errors for absent keys and wrong types.
#include "gguf/gguf_metadata.h"

#include <cmath>

#include "gguf/gguf_file.h"
#include "gguf/test_gguf_builder.h"
#include "gtest/gtest.h"

namespace infera::gguf {
namespace {

using testing::GgufBuilder;

std::string Typed(uint32_t type, const std::string& bytes) {
  std::string s;
  GgufBuilder::PutU32(s, type);
  return s + bytes;
}
template <typename T>
std::string Le(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(T));
}

class GgufMetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string nested = Typed(9, Le<uint32_t>(9) + Le<uint64_t>(2));
    nested += Le<uint32_t>(5) + Le<uint64_t>(2) + Le<int32_t>(1) + Le<int32_t>(2);  // [1, 2]
    nested += Le<uint32_t>(8) + Le<uint64_t>(1);                                     // ["x"]
    GgufBuilder::PutString(nested, "x");
    bytes_ = GgufBuilder()
                 .RawKv("u8", Typed(0, Le<uint8_t>(200)))
                 .RawKv("i8", Typed(1, Le<int8_t>(-100)))
                 .RawKv("u16", Typed(2, Le<uint16_t>(60000)))
                 .RawKv("i16", Typed(3, Le<int16_t>(-30000)))
                 .U32("u32", 4000000000u)
                 .I32("i32", -7)
                 .F32("f32", 1.5f)
                 .Bool("flag", true)
                 .Str("s", "héllo")
                 .U64("u64", 18446744073709551615ull)
                 .RawKv("i64", Typed(11, Le<int64_t>(-5000000000ll)))
                 .RawKv("f64", Typed(12, Le<double>(0.25)))
                 .StrArray("strings", {"a", "", "ü"})
                 .I32Array("ints", {3, -1})
                 .F32Array("floats", {0.5f, -2.0f})
                 .RawKv("bools", Typed(9, Le<uint32_t>(7) + Le<uint64_t>(2) + std::string("\x01\x00", 2)))
                 .RawKv("nested", nested)
                 .Build();
    auto file = GgufFile::FromBytes(reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size(), "m.gguf");
    ASSERT_TRUE(file.ok()) << file.status();
    file_ = std::move(*file);
  }
  const GgufMetadata& md() const { return file_->metadata(); }
  std::string bytes_;
  std::unique_ptr<GgufFile> file_;
};

TEST_F(GgufMetadataTest, ScalarsOfEveryType) {
  EXPECT_EQ(md().size(), 17u);
  EXPECT_EQ(md().keys().front(), "u8");
  EXPECT_EQ(md().GetUint("u8").value(), 200u);
  EXPECT_EQ(md().GetInt("i8").value(), -100);
  EXPECT_EQ(md().GetUint("u16").value(), 60000u);
  EXPECT_EQ(md().GetInt("i16").value(), -30000);
  EXPECT_EQ(md().GetUint("u32").value(), 4000000000u);
  EXPECT_EQ(md().GetInt("u32").value(), 4000000000);
  EXPECT_EQ(md().GetInt("i32").value(), -7);
  EXPECT_EQ(md().GetFloat("f32").value(), 1.5);
  EXPECT_TRUE(md().GetBool("flag").value());
  EXPECT_EQ(md().GetString("s").value(), "héllo");
  EXPECT_EQ(md().GetUint("u64").value(), 18446744073709551615ull);
  EXPECT_EQ(md().GetInt("i64").value(), -5000000000ll);
  EXPECT_EQ(md().GetFloat("f64").value(), 0.25);
}

TEST_F(GgufMetadataTest, Arrays) {
  EXPECT_EQ(md().GetStringArray("strings").value(), (std::vector<std::string_view>{"a", "", "ü"}));
  EXPECT_EQ(md().GetIntArray("ints").value(), (std::vector<int64_t>{3, -1}));
  EXPECT_EQ(md().GetFloatArray("floats").value(), (std::vector<float>{0.5f, -2.0f}));
  auto bools = md().GetArray("bools");
  ASSERT_TRUE(bools.ok());
  EXPECT_EQ((*bools)->element_type(), GgufValueType::kBool);
  EXPECT_TRUE((*bools)->ScalarAt(0).AsBool());
  EXPECT_FALSE((*bools)->ScalarAt(1).AsBool());
  auto nested = md().GetArray("nested");
  ASSERT_TRUE(nested.ok());
  ASSERT_EQ((*nested)->items().size(), 2u);
  EXPECT_EQ((*nested)->items()[0].ScalarAt(1).AsInt(), 2);
  EXPECT_EQ((*nested)->items()[1].items()[0].AsString(), "x");
}

TEST_F(GgufMetadataTest, ErrorsNameTheKeyAndTheTypes) {
  auto absent = md().GetString("general.architecture");
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(absent.status().message().find("'general.architecture' is missing"), std::string_view::npos);
  auto wrong = md().GetString("u32");
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(), "GGUF metadata key 'u32' is uint32, expected string");
  EXPECT_EQ(md().GetUint("s").status().message(), "GGUF metadata key 's' is string, expected an integer");
  EXPECT_FALSE(md().GetUint("i32").ok());   // negative
  EXPECT_FALSE(md().GetInt("u64").ok());    // past int64
  EXPECT_FALSE(md().GetFloat("u32").ok());
  EXPECT_FALSE(md().GetBool("u8").ok());
  EXPECT_EQ(md().GetStringArray("ints").status().message(),
            "GGUF metadata key 'ints' is array of int32, expected array of string");
  EXPECT_FALSE(md().GetIntArray("floats").ok());
  EXPECT_FALSE(md().GetFloatArray("strings").ok());
  EXPECT_FALSE(md().GetArray("s").ok());
}

}  // namespace
}  // namespace infera::gguf
