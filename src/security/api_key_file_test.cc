#include "security/api_key_file.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

std::string Hex(std::string_view key) { return DigestHex(DigestOf(key)); }

std::string Line(std::string_view id, std::string_view key, std::string_view rest) {
  return std::string(id) + " sha256:" + Hex(key) + " " + std::string(rest) + "\n";
}

TEST(ApiKeyFileTest, ParsesEntriesCommentsAndBlankLines) {
  const std::string text = "# keys\n\n" + Line("team-a", "ka", "rights=read,infer models=resnet*,fortune rps=50 tokens_per_min=100000") +
                           "   \t\n" + Line("ops", "kb", "rights=admin models=*  # the operators");
  absl::StatusOr<ApiKeySet> set = ParseApiKeyFile(text);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->entries.size(), 2u);
  const ApiKeyEntry& a = set->entries[0];
  EXPECT_EQ(a.id, "team-a");
  EXPECT_EQ(a.digest, DigestOf("ka"));
  EXPECT_EQ(a.rights, kRightRead | kRightInfer);
  EXPECT_EQ(a.model_globs, (std::vector<std::string>{"resnet*", "fortune"}));
  EXPECT_EQ(a.rps, 50);
  EXPECT_EQ(a.tokens_per_min, 100000);
  EXPECT_TRUE(a.AllowsModel("resnet50"));
  EXPECT_TRUE(a.AllowsModel("fortune"));
  EXPECT_FALSE(a.AllowsModel("fortune2"));
  EXPECT_FALSE(a.AllowsEveryModel());
  EXPECT_TRUE(set->entries[1].AllowsEveryModel());
  EXPECT_FALSE(set->entries[1].rps.has_value());
  EXPECT_EQ(set->by_digest.size(), 2u);
}

TEST(ApiKeyFileTest, UpperCaseHexAndCrlf) {
  std::string hex = Hex("k");
  for (char& c : hex) c = static_cast<char>(std::toupper(c));
  absl::StatusOr<ApiKeySet> set = ParseApiKeyFile("a sha256:" + hex + " rights=read models=*\r\n");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->entries[0].digest, DigestOf("k"));
}

void ExpectError(const std::string& text, std::string_view fragment) {
  absl::StatusOr<ApiKeySet> set = ParseApiKeyFile(text);
  ASSERT_FALSE(set.ok()) << text;
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr(std::string(fragment))) << text;
}

TEST(ApiKeyFileTest, HostileLinesNameTheLineAndProblem) {
  const std::string good = Line("a", "ka", "rights=read models=*");
  ExpectError(good + std::string(5000, 'x') + "\n", "line 2: longer than 4096 bytes");
  ExpectError(good + "b sha256:" + std::string(63, 'a') + "g rights=read models=*\n", "line 2: the digest has a character");
  ExpectError("b sha256:abc rights=read models=*\n", "line 1: the digest must be 64 hex digits");
  ExpectError("b md5:" + Hex("x") + " rights=read models=*\n", "line 1: the second field must be sha256:");
  ExpectError(good + Line("a", "kb", "rights=read models=*"), "line 2: duplicate id");
  ExpectError(good + Line("b", "ka", "rights=read models=*"), "line 2: duplicate digest");
  ExpectError(Line("a", "k", "rights=read,write models=*"), "line 1: unknown right");
  ExpectError(Line("a", "k", "rights= models=*"), "line 1: rights= has an empty right");
  ExpectError(Line("a", "k", "rights=read,,infer models=*"), "line 1: rights= has an empty right");
  ExpectError(Line("a", "k", "rights=read models="), "line 1: models= has an empty glob");
  ExpectError(Line("a", "k", "rights=read models=a,,b"), "line 1: models= has an empty glob");
  ExpectError(Line("a", "k", "rights=read"), "line 1: needs <id>");
  ExpectError(Line("a", "k", "rights=read rps=5"), "line 1: models= is missing");
  ExpectError(Line("a", "k", "models=* rps=5"), "line 1: rights= is missing");
  ExpectError(Line("a", "k", "rights=read models=* rps=0"), "line 1: rps must be a number");
  ExpectError(Line("a", "k", "rights=read models=* rps=-1"), "line 1: rps must be a number");
  ExpectError(Line("a", "k", "rights=read models=* rps=nan"), "line 1: rps must be a number");
  ExpectError(Line("a", "k", "rights=read models=* tokens_per_min=1e99"), "line 1: tokens_per_min must be");
  ExpectError(Line("a", "k", "rights=read models=* rps=1 rps=2"), "line 1: field rps given twice");
  ExpectError(Line("a", "k", "rights=read models=* colour=blue"), "line 1: unknown field");
  ExpectError(Line("a", "k", "rights=read models=* junk"), "line 1: a field is not name=value");
  ExpectError(Line("a/b", "k", "rights=read models=*"), "line 1: the id may hold only");
  ExpectError(Line(std::string(65, 'a'), "k", "rights=read models=*"), "line 1: the id is longer");
}

TEST(ApiKeyFileTest, ErrorsNeverEchoTheLine) {
  const std::string digest = Hex("secret");
  absl::StatusOr<ApiKeySet> set = ParseApiKeyFile("a sha256:" + digest + " rights=root models=*\n");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(std::string(set.status().message()), ::testing::Not(HasSubstr(digest)));
  EXPECT_THAT(std::string(set.status().message()), ::testing::Not(HasSubstr("root")));
}

TEST(ApiKeyFileTest, EmptyFileHasNoKeys) {
  absl::StatusOr<ApiKeySet> set = ParseApiKeyFile("# nothing\n\n");
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->entries.empty());
}

TEST(GlobTest, Matches) {
  EXPECT_TRUE(GlobMatches("*", ""));
  EXPECT_TRUE(GlobMatches("*", "anything"));
  EXPECT_TRUE(GlobMatches("resnet*", "resnet"));
  EXPECT_TRUE(GlobMatches("resnet*", "resnet50"));
  EXPECT_FALSE(GlobMatches("resnet*", "xresnet"));
  EXPECT_TRUE(GlobMatches("*net*", "resnet50"));
  EXPECT_TRUE(GlobMatches("a?c", "abc"));
  EXPECT_FALSE(GlobMatches("a?c", "ac"));
  EXPECT_TRUE(GlobMatches("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatches("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(GlobMatches("fortune", "fortune"));
  EXPECT_FALSE(GlobMatches("fortune", "fortune2"));
  EXPECT_FALSE(GlobMatches("", "x"));
  EXPECT_TRUE(GlobMatches("**", "x"));
  // Pathological patterns stay fast (no backtracking explosion).
  EXPECT_FALSE(GlobMatches("*a*a*a*a*a*a*a*a*b", std::string(4000, 'a')));
}

TEST(ApiKeyRightsTest, ParseAndName) {
  EXPECT_EQ(*ParseApiKeyRights("read,infer,admin"), kAllApiKeyRights);
  EXPECT_EQ(ApiKeyRightsName(kRightRead | kRightAdmin), "read,admin");
  EXPECT_FALSE(ParseApiKeyRights("").ok());
}

TEST(DigestTest, KnownVector) {
  EXPECT_EQ(DigestHex(DigestOf("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace infera
