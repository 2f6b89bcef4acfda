#include "api/admin_guard.h"

#include <algorithm>
#include <cctype>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

constexpr std::pair<ApiCategory, std::string_view> kCategories[] = {
    {ApiCategory::kModelRepository, "model-repository"},
    {ApiCategory::kLogging, "logging"},
    {ApiCategory::kSharedMemory, "shared-memory"},
    {ApiCategory::kTrace, "trace"},
    {ApiCategory::kHealth, "health"},
    {ApiCategory::kMetadata, "metadata"},
    {ApiCategory::kInference, "inference"},
    {ApiCategory::kModelConfig, "model-config"},
    {ApiCategory::kStatistics, "statistics"},
};

constexpr std::string_view kKnownCategories =
    "health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging";

bool IsAdminCategory(ApiCategory category) {
  return category == ApiCategory::kModelRepository || category == ApiCategory::kLogging ||
         category == ApiCategory::kSharedMemory || category == ApiCategory::kTrace;
}

// Parses "<category>[,<category>...]"; `admin_only` refuses the protocol categories.
absl::StatusOr<std::vector<ApiCategory>> ParseCategoryList(std::string_view list, bool admin_only) {
  std::vector<ApiCategory> categories;
  while (true) {
    const size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    auto known = std::find_if(std::begin(kCategories), std::end(kCategories),
                              [&](const auto& entry) { return entry.second == name; });
    if (known == std::end(kCategories)) {
      return absl::InvalidArgumentError(StrCat("unknown restricted api '", name.substr(0, 64),
                                               "' (the categories: ", kKnownCategories, ")"));
    }
    if (admin_only && !IsAdminCategory(known->first)) {
      return absl::InvalidArgumentError(
          StrCat("'", name, "' has no admin operations to open (infera's admin categories: "
                            "model-repository, logging, shared-memory, trace)"));
    }
    categories.push_back(known->first);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return categories;
}

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
  absl::StatusOr<std::vector<ApiCategory>> categories = ParseCategoryList(spec.substr(0, colon), false);
  if (!categories.ok()) return categories.status();
  restriction.categories = *std::move(categories);
  return restriction;
}

absl::StatusOr<std::vector<ApiCategory>> ParseApiCategories(std::string_view list) {
  return ParseCategoryList(list, /*admin_only=*/true);
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
  return !options_.admin_token.empty() || options_.api_key_admin != nullptr || RestrictionFor(category) != nullptr;
}

bool AdminGuard::Opened(ApiCategory category) const {
  if (category == ApiCategory::kModelRepository && options_.explicit_mode) return true;
  return std::find(options_.opened.begin(), options_.opened.end(), category) != options_.opened.end();
}

bool AdminGuard::OpenToEveryone(ApiCategory category) const {
  return Opened(category) && !Protected(category);
}

namespace {

// Why a category is closed and how to open it (rule 3).
std::string ClosedMessage(ApiCategory category) {
  std::string_view what;
  std::string_view open;
  switch (category) {
    case ApiCategory::kModelRepository:
      what = "model repository admin operations are off";
      open = "--model-control-mode=explicit or --allow-admin-api=model-repository";
      break;
    case ApiCategory::kLogging:
      what = "the logging settings (/v2/logging, LogSettings) are off";
      open = "--allow-admin-api=logging";
      break;
    case ApiCategory::kSharedMemory:  // Triton's text first (its clients match it)
      what = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable. "
             "Registering client shared memory is off";
      open = "--allow-client-shm=true (or --allow-admin-api=shared-memory)";
      break;
    case ApiCategory::kTrace:
      what = "changing the trace settings is off";
      open = "--allow-admin-api=trace";
      break;
    default:  // protocol categories: never closed (no admin operations)
      what = "this API is off";
      open = "--allow-admin-api";
      break;
  }
  return StrCat(what, ": start the server with --admin-token (clients send Authorization: Bearer "
                "<token>), a restricted-API group naming '", ApiCategoryName(category),
                "' (--http-restricted-api / --grpc-restricted-protocol), or ", open,
                " to open it to every client");
}

// What any client can do with an open category (the SECURITY warning).
std::string_view OpenRisk(ApiCategory category) {
  switch (category) {
    case ApiCategory::kModelRepository:
      return "load, unload and reconfigure models";
    case ApiCategory::kLogging:
      return "turn error logs off or flood the log with verbose output";
    case ApiCategory::kSharedMemory:
      return "register any shared-memory object of the server's user (/dev/shm) and read or "
             "overwrite it through a model";
    case ApiCategory::kTrace:
      return "change trace settings (trace every request to the exporter)";
    default:
      return "";
  }
  return "";
}

}  // namespace

absl::Status AdminGuard::CheckRestricted(ApiCategory category, const HeaderLookup& headers) const {
  const ApiRestriction* restriction = RestrictionFor(category);
  if (restriction == nullptr) return absl::OkStatus();
  const std::string header = StrCat(options_.header_prefix, restriction->key);
  std::optional<std::string_view> value = headers(header);
  if (value && ConstantTimeEquals(*value, restriction->value)) return absl::OkStatus();
  // Triton's texts: "API" over HTTP, "protocol" over gRPC (whose keys carry the prefix).
  return absl::PermissionDeniedError(StrCat("This ", options_.header_prefix.empty() ? "API" : "protocol",
                                            " is restricted, expecting header '", header, "'"));
}

absl::Status AdminGuard::Check(ApiCategory category, Operation operation,
                               const HeaderLookup& headers) const {
  RETURN_IF_ERROR(CheckRestricted(category, headers));
  if (operation != Operation::kRead && options_.api_key_admin) {
    // API keys configured: the Bearer key must hold the admin right (rules 2 and 3).
    return options_.api_key_admin(headers("authorization"));
  }
  if (operation != Operation::kRead && !options_.admin_token.empty()) {
    std::optional<std::string_view> auth = headers("authorization");
    if (!auth || !ConstantTimeEquals(*auth, StrCat("Bearer ", options_.admin_token))) {
      return absl::UnauthenticatedError(
          "this admin operation needs Authorization: Bearer <admin token> (--admin-token)");
    }
  }
  if (operation == Operation::kAdmin && !Protected(category) && !Opened(category)) {
    return absl::PermissionDeniedError(ClosedMessage(category));
  }
  return absl::OkStatus();
}

std::string AdminGuard::PresentedCredential(ApiCategory category, const HeaderLookup& headers) const {
  std::string credential;
  if (const ApiRestriction* restriction = RestrictionFor(category)) {
    if (headers(StrCat(options_.header_prefix, restriction->key))) {
      credential = StrCat("restricted:", ApiCategoryName(category));
    }
  }
  if (options_.credential_of) {
    // API keys: the bearer value is a key (--admin-token is one of them, id admin-token).
    if (std::optional<std::string_view> auth = headers("authorization")) {
      const std::string key = options_.credential_of(auth);
      credential = credential.empty() ? key : StrCat(credential, "+", key);
    }
  } else if (!options_.admin_token.empty()) {
    std::optional<std::string_view> auth = headers("authorization");
    if (auth && auth->substr(0, 7) == "Bearer ") {
      credential = credential.empty() ? "admin-token" : StrCat(credential, "+admin-token");
    }
  }
  return credential.empty() ? "none" : credential;
}

std::vector<std::string> OpenAdminApiWarnings(const AdminGuard& http, const AdminGuard& grpc) {
  std::vector<std::string> warnings;
  for (const auto& [category, name] : kCategories) {
    const bool on_http = http.OpenToEveryone(category);
    const bool on_grpc = grpc.OpenToEveryone(category);
    if (!on_http && !on_grpc) continue;
    warnings.push_back(StrCat(
        "SECURITY: the ", name, " admin API is open to every client on the ",
        on_http && on_grpc ? "HTTP and gRPC ports" : on_http ? "HTTP port" : "gRPC port",
        " (no --admin-token, no restricted-API group naming ", name, "): any client that "
        "reaches it can ", OpenRisk(category)));
  }
  return warnings;
}

}  // namespace infera
