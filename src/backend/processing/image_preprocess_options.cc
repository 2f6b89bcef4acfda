#include "backend/processing/image_preprocess_options.h"

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera::processing {
namespace {

absl::Status ParamError(std::string_view key, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(
      StrCat("image_preprocess: parameters[", key, "] '", value, "' ", why));
}

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// "224" -> {224, 224} with *square = true; "240x320" -> {240, 320}.
absl::StatusOr<Size2d> ParseSize(std::string_view key, std::string_view text, bool* single) {
  const size_t x = text.find('x');
  std::optional<int64_t> h, w;
  if (x == std::string_view::npos) {
    h = w = ParseInt(text);
    *single = true;
  } else {
    h = ParseInt(text.substr(0, x));
    w = ParseInt(text.substr(x + 1));
    *single = false;
  }
  if (!h || !w) return ParamError(key, text, "is not a size (\"224\" or \"HxW\")");
  if (*h < 1 || *w < 1 || *h > kMaxImageSide || *w > kMaxImageSide) {
    return ParamError(key, text, StrCat("has a side outside [1, ", kMaxImageSide, "]"));
  }
  return Size2d{static_cast<int>(*h), static_cast<int>(*w)};
}

absl::StatusOr<std::array<float, 3>> ParseTriple(std::string_view key, std::string_view text) {
  std::array<float, 3> values{};
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    const size_t comma = rest.find(',');
    if ((i < 2) != (comma != std::string_view::npos)) {
      return ParamError(key, text, "is not three comma-separated numbers");
    }
    const auto value = ParseDouble(rest.substr(0, comma));
    if (!value) return ParamError(key, text, "is not three comma-separated numbers");
    values[i] = static_cast<float>(*value);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return values;
}

absl::StatusOr<bool> ParseBool(std::string_view key, std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return ParamError(key, text, "is not \"true\" or \"false\"");
}

absl::Status CheckTensors(const inference::ModelConfig& config, Size2d out) {
  if (config.input_size() != 1) {
    return absl::InvalidArgumentError(StrCat("image_preprocess: needs exactly one input; config has ",
                                             config.input_size()));
  }
  const auto& in = config.input(0);
  if (in.data_type() != inference::TYPE_STRING || in.dims_size() != 1 || in.dims(0) != 1) {
    return absl::InvalidArgumentError(StrCat("image_preprocess: input '", in.name(),
                                             "' must be TYPE_STRING with dims [ 1 ] (one encoded image)"));
  }
  if (in.optional()) {
    return absl::InvalidArgumentError(StrCat("image_preprocess: input '", in.name(), "' cannot be optional"));
  }
  if (config.output_size() != 1) {
    return absl::InvalidArgumentError(StrCat("image_preprocess: needs exactly one output; config has ",
                                             config.output_size()));
  }
  const auto& o = config.output(0);
  if (o.data_type() != inference::TYPE_FP32 || o.dims_size() != 3 || o.dims(0) != 3 ||
      o.dims(1) != out.height || o.dims(2) != out.width) {
    return absl::InvalidArgumentError(StrCat("image_preprocess: output '", o.name(),
                                             "' must be TYPE_FP32 with dims [ 3, ", out.height, ", ",
                                             out.width, " ] (CHW at the crop size)"));
  }
  return absl::OkStatus();
}

}  // namespace

TransformOptions ImagePreprocessOptions::ForImage(int height, int width) const {
  TransformOptions t;
  t.resize = resize_shorter_side > 0 ? ResizedSizeForShorterSide(height, width, resize_shorter_side)
                                     : resize_exact;
  t.crop = crop;
  t.antialias = antialias;
  t.mean = mean;
  t.std = std;
  return t;
}

absl::StatusOr<ImagePreprocessOptions> ParseImagePreprocessOptions(
    const inference::ModelConfig& config) {
  ImagePreprocessOptions options;
  const auto resize = ConfigParameter(config, "resize");
  if (!resize) {
    return absl::InvalidArgumentError(
        "image_preprocess: parameters[resize] is required (\"256\": shorter side, or \"HxW\")");
  }
  bool single = false;
  ASSIGN_OR_RETURN(Size2d resize_size, ParseSize("resize", *resize, &single));
  if (single) {
    options.resize_shorter_side = resize_size.height;
  } else {
    options.resize_exact = resize_size;
  }
  if (const auto crop = ConfigParameter(config, "crop")) {
    bool crop_single = false;
    ASSIGN_OR_RETURN(options.crop, ParseSize("crop", *crop, &crop_single));
  } else if (single) {
    return absl::InvalidArgumentError(StrCat(
        "image_preprocess: parameters[crop] is required when parameters[resize] '", *resize,
        "' is a shorter side (the output size would depend on the image); or give resize as \"HxW\""));
  } else {
    options.crop = options.resize_exact;
  }
  if (const auto mean = ConfigParameter(config, "mean")) {
    ASSIGN_OR_RETURN(options.mean, ParseTriple("mean", *mean));
  }
  if (const auto std = ConfigParameter(config, "std")) {
    ASSIGN_OR_RETURN(options.std, ParseTriple("std", *std));
    for (float s : options.std) {
      if (s == 0.0f) return ParamError("std", *std, "has a zero (division by zero)");
    }
  }
  if (const auto antialias = ConfigParameter(config, "antialias")) {
    ASSIGN_OR_RETURN(options.antialias, ParseBool("antialias", *antialias));
  }
  if (const auto text = ConfigParameter(config, "max_pixels")) {
    const auto value = ParseInt(*text);
    if (!value || *value < 1 || *value > (int64_t{1} << 31)) {
      return ParamError("max_pixels", *text, "is not an integer in [1, 2147483648]");
    }
    options.limits.max_pixels = *value;
  }
  if (const auto text = ConfigParameter(config, "max_aspect_ratio")) {
    const auto value = ParseDouble(*text);
    if (!value || *value < 1.0 || *value > 10000.0) {
      return ParamError("max_aspect_ratio", *text, "is not a number in [1, 10000]");
    }
    options.limits.max_aspect_ratio = *value;
  }
  RETURN_IF_ERROR(CheckTensors(config, options.crop));
  return options;
}

}  // namespace infera::processing
