// ChatTemplateFixture: a published chat template from tests/data/chat_templates/ (README.md
// there: sources and licences) for the chat-template tests (test-only header). The
// directory is found from the working directory upwards: tests run inside the build tree.
#ifndef INFERA_LLM_TEST_CHAT_TEMPLATE_FIXTURE_H_
#define INFERA_LLM_TEST_CHAT_TEMPLATE_FIXTURE_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace infera::llm::testing {

// The file's text; a test failure (and "") when it is not found.
inline std::string ChatTemplateFixture(const std::string& name) {
  std::filesystem::path dir = std::filesystem::current_path();
  while (!std::filesystem::exists(dir / "tests/data/chat_templates") && dir.has_parent_path() &&
         dir != dir.parent_path()) {
    dir = dir.parent_path();
  }
  std::ifstream in(dir / "tests/data/chat_templates" / name);
  EXPECT_TRUE(in.good()) << "fixture " << name << " not found above " << std::filesystem::current_path();
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace infera::llm::testing

#endif  // INFERA_LLM_TEST_CHAT_TEMPLATE_FIXTURE_H_
