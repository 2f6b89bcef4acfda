#include "tools/bench/http_response_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "common/str_cat.h"

namespace infera::bench {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x | 0x20) == (y | 0x20);
         });
}

bool ContainsTokenIgnoreCase(std::string_view value, std::string_view token) {
  for (size_t i = 0; i + token.size() <= value.size(); ++i) {
    if (EqualsIgnoreCase(value.substr(i, token.size()), token)) return true;
  }
  return false;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <typename T>
bool ParseUnsigned(std::string_view text, T* value, int base = 10) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value, base);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

void HttpResponseParser::Reset() {
  state_ = State::kNeedMore;
  phase_ = Phase::kHead;
  head_ = Head();
  head_bytes_.clear();
  body_.clear();
  body_bytes_ = 0;
  remaining_ = 0;
  error_.clear();
}

void HttpResponseParser::Fail(std::string message) {
  state_ = State::kError;
  error_ = std::move(message);
}

HttpResponseParser::State HttpResponseParser::Feed(const char* data, size_t size,
                                                   size_t* consumed) {
  size_t used = 0;
  while (state_ == State::kNeedMore && used < size) {
    const char* p = data + used;
    const size_t n = size - used;
    switch (phase_) {
      case Phase::kHead:
        used += ConsumeHead(p, n);
        break;
      case Phase::kBody:
      case Phase::kChunkData: {
        const size_t take = static_cast<size_t>(std::min<int64_t>(remaining_, static_cast<int64_t>(n)));
        OnBody(p, take);
        used += take;
        remaining_ -= static_cast<int64_t>(take);
        if (remaining_ == 0) {
          if (phase_ == Phase::kBody) {
            state_ = State::kDone;
          } else {
            phase_ = Phase::kChunkDataEnd;
          }
        }
        break;
      }
      case Phase::kUntilClose:
        OnBody(p, n);
        used += n;
        break;
      case Phase::kChunkDataEnd:
      case Phase::kChunkSize:
      case Phase::kTrailers: {
        bool complete = false;
        used += ConsumeLine(p, n, &complete);
        if (!complete) break;
        std::string_view line(head_bytes_);
        line.remove_suffix(2);  // CRLF
        if (phase_ == Phase::kChunkDataEnd) {
          if (!line.empty()) Fail("chunk data not followed by CRLF");
          phase_ = Phase::kChunkSize;
        } else if (phase_ == Phase::kChunkSize) {
          const std::string_view size_text = Trim(line.substr(0, line.find(';')));
          uint64_t chunk = 0;
          if (!ParseUnsigned(size_text, &chunk, 16) || chunk > (uint64_t{1} << 40)) {
            Fail(StrCat("bad chunk size '", size_text, "'"));
          } else if (chunk == 0) {
            phase_ = Phase::kTrailers;
          } else {
            remaining_ = static_cast<int64_t>(chunk);
            phase_ = Phase::kChunkData;
          }
        } else if (line.empty()) {  // end of trailers
          state_ = State::kDone;
        }
        head_bytes_.clear();
        break;
      }
    }
  }
  *consumed = used;
  return state_;
}

HttpResponseParser::State HttpResponseParser::FeedEof() {
  if (state_ != State::kNeedMore) return state_;
  if (phase_ == Phase::kUntilClose) {
    state_ = State::kDone;
  } else {
    Fail(phase_ == Phase::kHead && head_bytes_.empty()
             ? "connection closed before a response"
             : "connection closed in the middle of a response");
  }
  return state_;
}

// Reads one CRLF-terminated line into head_bytes_.
size_t HttpResponseParser::ConsumeLine(const char* data, size_t size, bool* complete) {
  const char* nl = static_cast<const char*>(std::memchr(data, '\n', size));
  const size_t take = nl ? static_cast<size_t>(nl - data) + 1 : size;
  head_bytes_.append(data, take);
  if (head_bytes_.size() > kMaxHeadBytes) {
    Fail("chunk-size or trailer line too long");
    return take;
  }
  if (nl) {
    if (head_bytes_.size() < 2 || head_bytes_[head_bytes_.size() - 2] != '\r') {
      Fail("line not terminated by CRLF");
      return take;
    }
    *complete = true;
  }
  return take;
}

size_t HttpResponseParser::ConsumeHead(const char* data, size_t size) {
  if (head_bytes_.empty()) {  // common case: the whole head arrived in one read
    const size_t end = std::string_view(data, size).find("\r\n\r\n");
    if (end != std::string_view::npos) {
      head_bytes_.assign(data, end + 4);
      ParseHead();
      head_bytes_.clear();
      return end + 4;
    }
  }
  // Search for the blank line across the boundary of what was buffered before.
  const size_t before = head_bytes_.size();
  head_bytes_.append(data, size);
  const size_t from = before >= 3 ? before - 3 : 0;
  const size_t end = head_bytes_.find("\r\n\r\n", from);
  if (end == std::string::npos) {
    if (head_bytes_.size() > kMaxHeadBytes) Fail("response head larger than 64 KiB");
    return size;
  }
  const size_t head_size = end + 4;
  head_bytes_.resize(head_size);
  const size_t used = head_size - before;
  ParseHead();
  head_bytes_.clear();
  return used;
}

void HttpResponseParser::ParseHead() {
  std::string_view head(head_bytes_);
  head.remove_suffix(4);
  size_t line_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, line_end);
  // "HTTP/1.1 200 OK"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ' ||
      !ParseUnsigned(status_line.substr(9, 3), &head_.status) || head_.status < 100 ||
      (status_line.size() > 12 && status_line[12] != ' ')) {
    return Fail(StrCat("malformed status line '", status_line.substr(0, 80), "'"));
  }
  head_.keep_alive = status_line[7] == '1';  // HTTP/1.1 keeps alive unless told otherwise
  while (line_end != std::string_view::npos) {
    const size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    if (!ParseHeaderLine(head.substr(start, line_end == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : line_end - start))) {
      return;
    }
  }
  if (head_.status < 200) {  // 100 Continue and friends: the real response follows
    const bool keep = head_.keep_alive;
    head_ = Head();
    head_.keep_alive = keep;
    return;
  }
  StartBody();
}

bool HttpResponseParser::ParseHeaderLine(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    Fail(StrCat("malformed header line '", line.substr(0, 80), "'"));
    return false;
  }
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = Trim(line.substr(colon + 1));
  if (EqualsIgnoreCase(name, "content-length")) {
    uint64_t length = 0;
    if (!ParseUnsigned(value, &length) || length > (uint64_t{1} << 40)) {
      Fail(StrCat("bad Content-Length '", value, "'"));
      return false;
    }
    head_.content_length = static_cast<int64_t>(length);
  } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
    head_.chunked = ContainsTokenIgnoreCase(value, "chunked");
  } else if (EqualsIgnoreCase(name, "connection")) {
    if (ContainsTokenIgnoreCase(value, "close")) head_.keep_alive = false;
    if (ContainsTokenIgnoreCase(value, "keep-alive")) head_.keep_alive = true;
  } else if (EqualsIgnoreCase(name, "inference-header-content-length")) {
    size_t length = 0;
    if (!ParseUnsigned(value, &length)) {
      Fail(StrCat("bad Inference-Header-Content-Length '", value, "'"));
      return false;
    }
    head_.inference_header_length = length;
  } else if (EqualsIgnoreCase(name, "content-type")) {
    head_.content_type = std::string(value);
  }
  return true;
}

void HttpResponseParser::StartBody() {
  if (head_.status == 204 || head_.status == 304) {
    state_ = State::kDone;
  } else if (head_.chunked) {
    phase_ = Phase::kChunkSize;
  } else if (head_.content_length >= 0) {
    remaining_ = head_.content_length;
    phase_ = Phase::kBody;
    if (remaining_ == 0) state_ = State::kDone;
    if (keep_body_) body_.reserve(static_cast<size_t>(remaining_));
  } else {
    phase_ = Phase::kUntilClose;
    head_.keep_alive = false;
  }
}

void HttpResponseParser::OnBody(const char* data, size_t size) {
  body_bytes_ += static_cast<int64_t>(size);
  if (keep_body_) body_.append(data, size);
  if (on_body_data && size > 0) on_body_data(std::string_view(data, size));
}

}  // namespace infera::bench
