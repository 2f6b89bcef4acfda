// StrCat / StrJoin over standard types.
//
// Why not absl::StrCat: Debian 12's abseil is built with its own absl::string_view
// (ABSL_OPTION_USE_STD_STRING_VIEW 0), so absl::StrCat rejects std::string_view, which
// is what infera's APIs use. These cover what error messages and logs need.
//
// Usage:
//   std::string msg = StrCat("tensor '", name, "' has ", n, " bytes");
//   std::string dims = StrJoin(shape, ",");
#ifndef INFERA_COMMON_STR_CAT_H_
#define INFERA_COMMON_STR_CAT_H_

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace infera {
namespace str_cat_internal {

// Converts one argument to text, using `scratch` for numbers.
class Piece {
 public:
  Piece(std::string_view s) : view_(s) {}                       // NOLINT
  Piece(const std::string& s) : view_(s) {}                     // NOLINT
  Piece(const char* s) : view_(s ? s : "") {}                   // NOLINT
  Piece(absl::string_view s) : view_(s.data(), s.size()) {}     // NOLINT
  Piece(char c) { scratch_[0] = c; view_ = {scratch_, 1}; }    // NOLINT
  Piece(bool b) : view_(b ? "true" : "false") {}                // NOLINT
  template <typename T>
    requires(std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>)
  Piece(T value) {                                              // NOLINT
    auto [end, ec] = std::to_chars(scratch_, scratch_ + sizeof(scratch_), value);
    view_ = {scratch_, static_cast<size_t>(end - scratch_)};
  }
  template <typename T>
    requires std::floating_point<T>
  Piece(T value) {                                              // NOLINT
    auto [end, ec] = std::to_chars(scratch_, scratch_ + sizeof(scratch_), value);
    view_ = {scratch_, static_cast<size_t>(end - scratch_)};
  }
  Piece(const Piece&) = delete;
  Piece& operator=(const Piece&) = delete;

  std::string_view view() const { return view_; }

 private:
  char scratch_[32];
  std::string_view view_;
};

}  // namespace str_cat_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  const str_cat_internal::Piece pieces[] = {str_cat_internal::Piece(args)...};
  size_t total = 0;
  for (const auto& p : pieces) total += p.view().size();
  std::string out;
  out.reserve(total);
  for (const auto& p : pieces) out.append(p.view());
  return out;
}
inline std::string StrCat() { return {}; }

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  out->append(StrCat(args...));
}

// Joins the elements of `range` (anything StrCat accepts) with `separator`.
template <typename Range>
std::string StrJoin(const Range& range, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& element : range) {
    if (!first) out.append(separator);
    first = false;
    out.append(StrCat(element));
  }
  return out;
}

}  // namespace infera

#endif  // INFERA_COMMON_STR_CAT_H_
