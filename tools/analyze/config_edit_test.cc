#include "tools/analyze/config_edit.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "repository/model_config_loader.h"
#include "tools/analyze/dimensions.h"

namespace infera::analyze {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A hand-written config as users keep them: comments everywhere, a list of inputs,
// dynamic batching with a comment inside, one instance group, a parameter.
constexpr char kCommented[] = R"pb(# The ranker: scores candidate rows for one query.
# Clients send up to 256 rows; do not lower this (the frontend batches 200).
name: "ranker"
platform: "pytorch_libtorch"
max_batch_size: 256  # rows per request

input [
  {
    name: "features"   # one row per candidate
    data_type: TYPE_FP32
    dims: [ 32 ]
  }
]
output [ { name: "score" data_type: TYPE_FP32 dims: [ 1 ] } ]

dynamic_batching {
  # wait a little for more rows
  max_queue_delay_microseconds: 100
}

instance_group [
  {
    count: 1  # one is enough on a laptop
    kind: KIND_CPU
  }
]

parameters { key: "PRECISION" value { string_value: "fp32" } }
# end
)pb";

inference::ModelConfig Parse(const std::string& text) {
  auto config = ParseModelConfig(text, "config.pbtxt");
  EXPECT_TRUE(config.ok()) << config.status() << "\n" << text;
  return config.ok() ? *config : inference::ModelConfig();
}

std::string Edit(const std::string& original, const inference::ModelConfig& chosen) {
  auto text = EditConfigText(original, Parse(original), chosen);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return "";
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(Parse(*text), chosen)) << *text;
  return *text;
}

// Every comment line of `original` is still in `edited`.
void ExpectCommentsKept(const std::string& original, const std::string& edited) {
  size_t start = 0;
  while (start < original.size()) {
    size_t end = original.find('\n', start);
    if (end == std::string::npos) end = original.size();
    const std::string line = original.substr(start, end - start);
    if (const size_t hash = line.find('#'); hash != std::string::npos) {
      EXPECT_THAT(edited, HasSubstr(line.substr(hash))) << "comment lost: " << line;
    }
    start = end + 1;
  }
}

TEST(ConfigEditTest, UnchangedConfigIsTheSameText) {
  const inference::ModelConfig base = Parse(kCommented);
  EXPECT_EQ(Edit(kCommented, base), kCommented);
  EXPECT_TRUE(ConfigChanges(base, base).empty());
}

TEST(ConfigEditTest, APointsFieldsAreEditedInPlaceAndCommentsKept) {
  const inference::ModelConfig base = Parse(kCommented);
  auto chosen = ApplyPoint(base, {{"instances", "3"}, {"batch", "16"}, {"queue_delay_us", "400"}, {"precision", "bf16"}},
                           Dimensions());
  ASSERT_TRUE(chosen.ok()) << chosen.status();
  const std::string edited = Edit(kCommented, *chosen);
  ExpectCommentsKept(kCommented, edited);
  // The edited values sit where the originals were, with their trailing comments.
  EXPECT_THAT(edited, HasSubstr("max_batch_size: 256  # rows per request\n"));
  EXPECT_THAT(edited, HasSubstr("    count: 3  # one is enough on a laptop\n"));
  EXPECT_THAT(edited, HasSubstr("  # wait a little for more rows\n  max_queue_delay_microseconds: 400\n"
                                "  preferred_batch_size: [ 16 ]\n}"));
  EXPECT_THAT(edited, HasSubstr("value { string_value: \"bf16\" }"));
  EXPECT_THAT(edited, HasSubstr("key: \"VALIDATE_PRECISION\""));
  // Nothing else moved: the text before the first edit is the original's.
  const size_t first_edit = std::string(kCommented).find("max_queue_delay_microseconds: 100");
  EXPECT_EQ(edited.substr(0, first_edit), std::string(kCommented).substr(0, first_edit));

  const auto changes = ConfigChanges(base, *chosen);
  std::vector<std::string> lines;
  for (const FieldChange& c : changes) lines.push_back(c.field + ": " + c.before + " -> " + c.after);
  EXPECT_THAT(lines, ::testing::UnorderedElementsAre(
                         "dynamic_batching.preferred_batch_size: [] -> [16]",
                         "dynamic_batching.max_queue_delay_microseconds: 100 -> 400",
                         "instance_group: 1 x KIND_CPU -> 3 x KIND_CPU", "parameters[PRECISION]: \"fp32\" -> \"bf16\"",
                         "parameters[VALIDATE_PRECISION]: absent -> \"true\""));
}

TEST(ConfigEditTest, BatchingOffRemovesTheBlockAndOnAddsIt) {
  const inference::ModelConfig base = Parse(kCommented);
  auto off = ApplyPoint(base, {{"batch", "off"}}, Dimensions());
  ASSERT_TRUE(off.ok());
  const std::string without = Edit(kCommented, *off);
  EXPECT_THAT(without, Not(HasSubstr("dynamic_batching")));
  EXPECT_THAT(without, Not(HasSubstr("max_queue_delay_microseconds")));
  EXPECT_THAT(without, HasSubstr("# The ranker: scores candidate rows for one query.\n"));
  EXPECT_THAT(without, HasSubstr("max_batch_size: 256  # rows per request"));

  // Back on from a config without the block: one line added at the end.
  const inference::ModelConfig bare = Parse(without);
  auto on = ApplyPoint(bare, {{"batch", "8"}, {"queue_delay_us", "200"}}, Dimensions());
  ASSERT_TRUE(on.ok());
  const std::string with = Edit(without, *on);
  EXPECT_EQ(with.substr(0, without.size()), without);
  EXPECT_THAT(with.substr(without.size()), HasSubstr("dynamic_batching {"));
}

TEST(ConfigEditTest, SeveralInstanceGroupsBecomeOneAndMissingFieldsAreAdded) {
  const std::string original = R"pb(name: "simple"  # the demo adder
backend: "add_sub"
max_batch_size: 8
instance_group [ { count: 2 kind: KIND_CPU }, { count: 1 kind: KIND_CPU } ]
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] } ]
)pb";
  const inference::ModelConfig base = Parse(original);
  auto chosen = ApplyPoint(base, {{"instances", "2"}}, Dimensions());
  ASSERT_TRUE(chosen.ok());
  const std::string edited = Edit(original, *chosen);
  EXPECT_THAT(edited, HasSubstr("name: \"simple\"  # the demo adder\n"));
  EXPECT_THAT(edited, HasSubstr("instance_group [ { count: 2 kind: KIND_CPU } ]\n"));
  EXPECT_THAT(edited, HasSubstr("input [ { name: \"INPUT0\""));

  // No instance_group at all: added.
  const std::string no_groups = "name: \"simple\"\nbackend: \"add_sub\"\nmax_batch_size: 8\n";
  auto added = ApplyPoint(Parse(no_groups), {{"instances", "2"}}, Dimensions());
  ASSERT_TRUE(added.ok());
  EXPECT_THAT(Edit(no_groups, *added), HasSubstr("instance_group [ { count: 2 kind: KIND_CPU } ]"));

  // --allow-api-change: max_batch_size edited in place, and listed.
  auto narrowed = ApplyPoint(base, {{"batch", "4"}}, Dimensions(), ApplyRules{true});
  ASSERT_TRUE(narrowed.ok());
  EXPECT_THAT(Edit(original, *narrowed), HasSubstr("max_batch_size: 4\n"));
  EXPECT_EQ(ConfigChanges(base, *narrowed).front().field, "max_batch_size");
}

TEST(ConfigEditTest, StringsAndCommentsWithBracketsDoNotConfuseTheScanner) {
  const std::string original = R"pb(name: "odd { name [ # not a comment"
# a comment with { braces ] and "quotes
max_batch_size: 8
parameters [ { key: "NOTE" value: { string_value: "}" } }, { key: "PRECISION" value: { string_value: "fp32" } } ]
dynamic_batching { preferred_batch_size: 2 preferred_batch_size: 4 }
)pb";
  const inference::ModelConfig base = Parse(original);
  auto chosen = ApplyPoint(base, {{"batch", "8"}, {"precision", "int8_dynamic"}}, Dimensions());
  ASSERT_TRUE(chosen.ok());
  const std::string edited = Edit(original, *chosen);
  EXPECT_THAT(edited, HasSubstr("# a comment with { braces ] and \"quotes\n"));
  EXPECT_THAT(edited, HasSubstr("dynamic_batching { preferred_batch_size: [ 8 ] }"));
  EXPECT_THAT(edited, HasSubstr("{ key: \"PRECISION\" value: { string_value: \"int8_dynamic\" } }"));
}

}  // namespace
}  // namespace infera::analyze
