#include "repository/confined_path.h"

#include <fstream>

#include "gtest/gtest.h"

namespace infera {
namespace {

namespace fs = std::filesystem;

class ConfinedPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / "infera_confined_path_test";
    fs::remove_all(root_);
    dir_ = root_ / "m" / "warmup";
    fs::create_directories(dir_ / "sub");
    std::ofstream(dir_ / "sub" / "in.bin") << "in";
    std::ofstream(root_ / "secret.bin") << "out";
  }
  void TearDown() override { fs::remove_all(root_); }
  void Link(const fs::path& target, const std::string& name) { fs::create_symlink(target, dir_ / name); }

  fs::path root_, dir_;
};

TEST_F(ConfinedPathTest, NamesThatEscapeWithoutLookingAtTheFileSystem) {
  for (const char* bad : {"", "/etc/passwd", "..", "../x", "a/../../x", "a/.."}) {
    EXPECT_TRUE(EscapesLexically(bad)) << bad;
    EXPECT_FALSE(ResolveInside(dir_, bad).has_value()) << bad;
  }
  EXPECT_TRUE(EscapesLexically(std::string_view("a\0b", 3)));
  for (const char* good : {"x", "sub/in.bin", "./sub/in.bin", "a..b"}) EXPECT_FALSE(EscapesLexically(good)) << good;
}

TEST_F(ConfinedPathTest, InsideIsResolvedThroughLinksThatStayInside) {
  Link(dir_ / "sub" / "in.bin", "abs_in");
  Link("sub/in.bin", "rel_in");
  Link("sub", "subdir");
  const fs::path expected = fs::canonical(dir_ / "sub" / "in.bin");
  EXPECT_EQ(ResolveInside(dir_, "sub/in.bin"), expected);
  EXPECT_EQ(ResolveInside(dir_, "abs_in"), expected);
  EXPECT_EQ(ResolveInside(dir_, "rel_in"), expected);
  EXPECT_EQ(ResolveInside(dir_, "subdir/in.bin"), expected);
  // A name that does not exist (yet) inside is still inside; the caller finds nothing.
  EXPECT_EQ(ResolveInside(dir_, "missing.bin"), fs::canonical(dir_) / "missing.bin");
}

TEST_F(ConfinedPathTest, LinksThatLeadOutAreRefusedWhetherOrNotTheTargetExists) {
  Link(root_ / "secret.bin", "abs_out");
  Link(root_ / "no_such_file", "dangling_out");
  Link("../../secret.bin", "rel_out");
  Link("..", "up");
  Link("/", "slash");
  Link("dangling_dir/x", "via_dangling");
  for (const char* out : {"abs_out", "dangling_out", "rel_out", "up/x", "up/up/secret.bin", "slash/etc/passwd"}) {
    EXPECT_FALSE(ResolveInside(dir_, out).has_value()) << out;
  }
  // A dangling link whose target would be inside stays inside.
  EXPECT_TRUE(ResolveInside(dir_, "via_dangling").has_value());
}

TEST_F(ConfinedPathTest, LinkLoopsAndMissingFoldersAreRefused) {
  Link("loop_b", "loop_a");
  Link("loop_a", "loop_b");
  EXPECT_FALSE(ResolveInside(dir_, "loop_a").has_value());
  EXPECT_FALSE(ResolveInside(root_ / "no_model" / "warmup", "x").has_value());
}

}  // namespace
}  // namespace infera
