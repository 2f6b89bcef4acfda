#include "http/http_framing.h"

#include "common/str_cat.h"

namespace infera {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

void HttpFraming::AddContentLength(std::string_view value) {
  ++content_length_fields_;
  if (value.find(',') != std::string_view::npos) content_length_list_ = true;
}

void HttpFraming::AddTransferEncoding(std::string_view value) {
  ++transfer_encoding_fields_;
  transfer_encoding_ = value;
}

std::optional<std::string> HttpFraming::Problem() const {
  if (content_length_list_) return "bad Content-Length: a list of lengths is not accepted";
  if (content_length_fields_ > 1) return "bad Content-Length: the header appears more than once";
  if (transfer_encoding_fields_ == 0) return std::nullopt;
  if (content_length_fields_ > 0) return "bad framing: Content-Length and Transfer-Encoding together";
  if (transfer_encoding_fields_ > 1) return "bad Transfer-Encoding: the header appears more than once";
  const size_t begin = transfer_encoding_.find_first_not_of(" \t");
  const size_t end = transfer_encoding_.find_last_not_of(" \t");
  const std::string_view coding = begin == std::string_view::npos
                                      ? std::string_view()
                                      : transfer_encoding_.substr(begin, end - begin + 1);
  if (EqualsIgnoreCase(coding, "chunked")) return std::nullopt;
  // The value goes into the error body and the log: printable ASCII only.
  std::string shown(coding.substr(0, 64));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return StrCat("bad Transfer-Encoding '", shown, "': only a single 'chunked' is accepted");
}

}  // namespace infera
