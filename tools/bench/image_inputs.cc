#include "tools/bench/image_inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/str_cat.h"
#include "rapidjson/document.h"

namespace infera::bench {
namespace {

constexpr int kMaxEnsembleDepth = 8;

std::string StringMember(const rapidjson::Value& v, const char* name) {
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

std::set<std::string> ImageInputsAtDepth(const std::string& model, const ModelConfigFetcher& fetch, int depth) {
  std::set<std::string> images;
  if (depth > kMaxEnsembleDepth) return images;
  std::optional<std::string> text = fetch(model);
  if (!text) return images;
  rapidjson::Document doc;
  doc.Parse(text->data(), text->size());
  if (doc.HasParseError() || !doc.IsObject()) return images;
  const rapidjson::Value* config = &doc;
  if (doc.HasMember("config") && doc["config"].IsObject()) config = &doc["config"];
  std::set<std::string> bytes_inputs;
  if (auto in = config->FindMember("input"); in != config->MemberEnd() && in->value.IsArray()) {
    for (const rapidjson::Value& t : in->value.GetArray()) {
      if (t.IsObject() && StringMember(t, "data_type") == "TYPE_STRING") bytes_inputs.insert(StringMember(t, "name"));
    }
  }
  if (StringMember(*config, "backend") == "image_preprocess") return bytes_inputs;
  auto scheduling = config->FindMember("ensemble_scheduling");
  if (scheduling == config->MemberEnd() || !scheduling->value.IsObject()) return images;
  auto steps = scheduling->value.FindMember("step");
  if (steps == scheduling->value.MemberEnd() || !steps->value.IsArray()) return images;
  for (const rapidjson::Value& step : steps->value.GetArray()) {
    if (!step.IsObject()) continue;
    auto map = step.FindMember("input_map");
    if (map == step.MemberEnd() || !map->value.IsObject()) continue;
    std::set<std::string> step_images;
    bool step_read = false;
    for (auto m = map->value.MemberBegin(); m != map->value.MemberEnd(); ++m) {
      if (!m->value.IsString() || bytes_inputs.count(m->value.GetString()) == 0) continue;
      if (!step_read) {  // only steps fed by a BYTES input of the ensemble are looked up
        step_images = ImageInputsAtDepth(StringMember(step, "model_name"), fetch, depth + 1);
        step_read = true;
      }
      if (step_images.count(m->name.GetString())) images.insert(m->value.GetString());
    }
  }
  return images;
}

}  // namespace

std::set<std::string> EncodedImageInputs(const std::string& model, const ModelConfigFetcher& fetch) {
  return ImageInputsAtDepth(model, fetch, 0);
}

absl::StatusOr<std::vector<std::string>> ReadImageFiles(const std::string& dir) {
  std::error_code error;
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::string ext = entry.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (entry.is_regular_file() && (ext == ".jpg" || ext == ".jpeg" || ext == ".png")) paths.push_back(entry.path());
  }
  if (error) return absl::NotFoundError(StrCat("cannot read the image folder ", dir, ": ", error.message()));
  if (paths.empty()) return absl::NotFoundError(StrCat("no .jpg, .jpeg or .png file in ", dir));
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> images;
  for (const auto& path : paths) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    if (!file) return absl::NotFoundError(StrCat("cannot read ", path.string()));
    images.push_back(bytes.str());
  }
  return images;
}

std::vector<std::string> DefaultImageDirs(const std::string& binary_path) {
  std::vector<std::string> dirs = {"demo-models/.images"};
  const std::filesystem::path binary_dir = std::filesystem::path(binary_path).parent_path();
  if (!binary_dir.empty()) dirs.push_back((binary_dir.parent_path() / "demo-models" / ".images").string());
  return dirs;
}

}  // namespace infera::bench
