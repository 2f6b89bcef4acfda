// jinja_render TEMPLATE_FILE CONTEXT_JSON_FILE [NOW]: renders a template against a JSON
// object of variables and prints the result (no newline added); a parse or render error
// goes to stderr with exit status 1 (parse) or 2 (render). NOW fixes strftime_now's
// clock (seconds since the epoch, UTC). The reference test (jinja_reference_test.py)
// compares its output with Python's jinja2.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "jinja/builtins.h"
#include "jinja/template.h"

namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: jinja_render TEMPLATE_FILE CONTEXT_JSON_FILE [NOW]\n";
    return 64;
  }
  auto tmpl = infera::jinja::Template::Parse(ReadFile(argv[1]));
  if (!tmpl.ok()) {
    std::cerr << tmpl.status().message() << "\n";
    return 1;
  }
  infera::jinja::ValueDict context;
  try {
    infera::jinja::Value v = infera::jinja::FromJson(ReadFile(argv[2]));
    if (!v.is_dict()) throw infera::jinja::Error("the context must be a JSON object");
    context = v.as_dict();
  } catch (const infera::jinja::Error& e) {
    std::cerr << e.what() << "\n";
    return 64;
  }
  infera::jinja::RenderOptions options;
  if (argc > 3) {
    const std::time_t now = std::stoll(argv[3]);
    options.strftime_now = [now](const std::string& format) {
      std::tm t{};
      gmtime_r(&now, &t);
      char buf[256];
      return std::string(buf, std::strftime(buf, sizeof(buf), format.c_str(), &t));
    };
  }
  auto out = tmpl->Render(context, options);
  if (!out.ok()) {
    std::cerr << out.status().message() << "\n";
    return 2;
  }
  std::fwrite(out->data(), 1, out->size(), stdout);
  return 0;
}
