#include "api/admin_guard.h"

#include <algorithm>
#include <cctype>

#include "common/str_cat.h"

namespace infera {
namespace {

constexpr std::pair<ApiCategory, std::string_view> kCategories[] = {
    {ApiCategory::kModelRepository, "model-repository"},
    {ApiCategory::kLogging, "logging"},
    {ApiCategory::kSharedMemory, "shared-memory"},
    {ApiCategory::kTrace, "trace"},
};

// Equality that takes the same time wherever the strings differ (for secrets).
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view ApiCategoryName(ApiCategory category) {
  for (const auto& [c, name] : kCategories) {
    if (c == category) return name;
  }
  return "unknown";
}

absl::StatusOr<ApiRestriction> ParseApiRestriction(std::string_view spec) {
  const size_t colon = spec.find(':');
  const size_t equals = colon == std::string_view::npos ? colon : spec.find('=', colon);
  if (colon == std::string_view::npos || equals == std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat("'", spec, "' is not <category>[,<category>...]:<key>=<value>"));
  }
  ApiRestriction restriction;
  restriction.key = Lower(spec.substr(colon + 1, equals - colon - 1));
  restriction.value = std::string(spec.substr(equals + 1));
  if (restriction.key.empty()) return absl::InvalidArgumentError(StrCat("'", spec, "' has an empty key"));
  if (restriction.value.empty()) {
    return absl::InvalidArgumentError(
        StrCat("'", spec, "' has an empty value (any request sending the header would pass)"));
  }
  for (char c : restriction.key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) {
      return absl::InvalidArgumentError(
          StrCat("'", spec, "': the key must be a header name (letters, digits, '-', '_')"));
    }
  }
  std::string_view list = spec.substr(0, colon);
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    auto known = std::find_if(std::begin(kCategories), std::end(kCategories),
                              [&](const auto& entry) { return entry.second == name; });
    if (known == std::end(kCategories)) {
      return absl::InvalidArgumentError(
          StrCat("unknown API category '", name,
                 "' (infera restricts model-repository, logging, shared-memory, trace)"));
    }
    restriction.categories.push_back(known->first);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return restriction;
}

absl::StatusOr<AdminGuard> AdminGuard::Create(Options options) {
  std::vector<ApiCategory> seen;
  for (const ApiRestriction& r : options.restrictions) {
    for (ApiCategory c : r.categories) {
      if (std::find(seen.begin(), seen.end(), c) != seen.end()) {
        return absl::InvalidArgumentError(StrCat("API category '", ApiCategoryName(c),
                                                 "' cannot be in more than one restricted group"));
      }
      seen.push_back(c);
    }
  }
  return AdminGuard(std::move(options));
}

const ApiRestriction* AdminGuard::RestrictionFor(ApiCategory category) const {
  for (const ApiRestriction& r : options_.restrictions) {
    if (std::find(r.categories.begin(), r.categories.end(), category) != r.categories.end()) return &r;
  }
  return nullptr;
}

bool AdminGuard::Protected(ApiCategory category) const {
  return !options_.admin_token.empty() || RestrictionFor(category) != nullptr;
}

absl::Status AdminGuard::Check(ApiCategory category, Operation operation,
                               const HeaderLookup& headers) const {
  if (const ApiRestriction* restriction = RestrictionFor(category)) {
    const std::string header = StrCat(options_.header_prefix, restriction->key);
    std::optional<std::string_view> value = headers(header);
    if (!value || !ConstantTimeEquals(*value, restriction->value)) {
      return absl::PermissionDeniedError(
          StrCat("This API is restricted, expecting header '", header, "'"));
    }
  }
  if (operation == Operation::kAdmin && !options_.admin_token.empty()) {
    std::optional<std::string_view> auth = headers("authorization");
    if (!auth || !ConstantTimeEquals(*auth, StrCat("Bearer ", options_.admin_token))) {
      return absl::UnauthenticatedError(
          "this admin operation needs Authorization: Bearer <admin token> (--admin-token)");
    }
  }
  if (operation == Operation::kAdmin && category == ApiCategory::kModelRepository &&
      !Protected(category) && !options_.explicit_mode) {
    return absl::PermissionDeniedError(
        "model repository admin operations are off: outside --model-control-mode=explicit "
        "they need --admin-token or a restricted-API header (--http-restricted-api / "
        "--grpc-restricted-protocol=model-repository:<key>=<value>)");
  }
  return absl::OkStatus();
}

}  // namespace infera
