#include "security/api_key_command.h"

#include <algorithm>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "security/api_key_file.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

TEST(ApiKeyCommandTest, CreatesAKeyWhoseLineParsesAndMatches) {
  absl::StatusOr<CreatedApiKey> a = CreateApiKey({"--id", "team-a", "--rights=read,infer", "--models", "resnet*",
                                                  "--rps", "50", "--tokens-per-min", "100000"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->key.starts_with("inf-"));
  EXPECT_EQ(a->key.size(), 4u + 43u);  // 32 bytes in base64url, unpadded
  EXPECT_EQ(a->key.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 4),
            std::string::npos);
  absl::StatusOr<ApiKeySet> set = ParseApiKeyFile(a->file_line);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->entries[0].digest, DigestOf(a->key));
  EXPECT_EQ(set->entries[0].rps, 50);
  EXPECT_THAT(a->file_line, ::testing::Not(HasSubstr(a->key)));
  absl::StatusOr<CreatedApiKey> b = CreateApiKey({"--id", "team-b"});
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a->key, b->key);
}

TEST(ApiKeyCommandTest, BadInputIsRefused) {
  EXPECT_THAT(std::string(CreateApiKey({}).status().message()), HasSubstr("--id is required"));
  EXPECT_THAT(std::string(CreateApiKey({"--id", "a", "--rights", "root"}).status().message()),
              HasSubstr("unknown right"));
  EXPECT_THAT(std::string(CreateApiKey({"--id", "a b"}).status().message()), HasSubstr("may not hold spaces"));
  EXPECT_THAT(std::string(CreateApiKey({"--id"}).status().message()), HasSubstr("needs a value"));
  EXPECT_THAT(std::string(CreateApiKey({"--id", "a", "--colour", "x"}).status().message()), HasSubstr("unknown flag"));
  std::ostringstream out, err;
  EXPECT_EQ(RunApiKeyCommand({"delete"}, out, err), 2);
  EXPECT_EQ(RunApiKeyCommand({"create", "--id", "ok"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("ok sha256:"));
}

// docs/cli.md: a bad command line prints one line naming the problem and where to look;
// --help fits 100 columns.
TEST(ApiKeyCommandTest, ErrorsAreOneLineAndHelpFits) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"delete"}, {"create"}, {"create", "--id", "a", "--rights", "root"}, {"create", "--colour"}}) {
    std::ostringstream out, err;
    EXPECT_EQ(RunApiKeyCommand(args, out, err), 2);
    EXPECT_EQ(out.str(), "");
    const std::string text = err.str();
    ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
    EXPECT_EQ(text.rfind("infera api-key: ", 0), 0u) << text;
    EXPECT_THAT(text, ::testing::EndsWith("\nsee 'infera api-key --help'\n"));
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"create", "--help"}}) {
    std::ostringstream out, err;
    EXPECT_EQ(RunApiKeyCommand(args, out, err), 0);
    EXPECT_THAT(out.str(), HasSubstr("Usage: infera api-key create --id ID"));
    std::istringstream lines(out.str());
    for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
  }
}

TEST(ApiKeyCommandTest, Base64Url) {
  const unsigned char bytes[] = {0xfb, 0xff, 0x00};
  EXPECT_EQ(Base64Url(bytes, 3), "-_8A");
  EXPECT_EQ(Base64Url(bytes, 1), "-w");
}

}  // namespace
}  // namespace infera
