#include "http/stream_writer.h"

namespace infera::http_internal {

bool StreamWriter::Admit(int64_t bytes) {
  const auto limit = static_cast<int64_t>(max_buffered_bytes_);
  if (pending_.fetch_add(bytes, std::memory_order_relaxed) + bytes > limit) {
    pending_.fetch_sub(bytes, std::memory_order_relaxed);
    return false;
  }
  budget_->Add(bytes);
  return true;
}

bool StreamWriter::Begin(HttpResponse head, bool keep_alive, bool head_only) {
  namespace http = boost::beast::http;
  head_ = {};
  head_.version(11);
  head_.result(static_cast<unsigned>(head.status));
  head_.set(http::field::content_type, head.content_type);
  for (auto& [name, value] : head.headers) head_.set(name, value);
  head_.keep_alive(keep_alive);
  head_.chunked(true);
  if (!head.body.empty() && !head_only) {
    const auto bytes = static_cast<int64_t>(head.body.size());
    pending_.fetch_add(bytes, std::memory_order_relaxed);
    queued_ += bytes;
    budget_->Add(bytes);
    queue_.push_front(std::move(head.body));
  }
  serializer_.emplace(head_);
  finish_requested_ = false;
  state_ = State::kWritingHead;
  return head_.keep_alive();
}

void StreamWriter::Enqueue(std::string chunk, int64_t bytes) {
  if (!accepting()) return Release(bytes);  // the stream is over
  queued_ += bytes;
  queue_.push_back(std::move(chunk));
}

StreamWriter::Next StreamWriter::TakeNext() {
  if (state_ != State::kIdle) return Next::kNothing;
  if (!queue_.empty()) {
    current_ = std::move(queue_.front());
    queue_.pop_front();
    current_accounted_ = static_cast<int64_t>(current_.size());
    state_ = State::kWritingChunk;
    return Next::kChunk;
  }
  if (!finish_requested_) return Next::kNothing;
  state_ = State::kWritingLast;
  return Next::kLastChunk;
}

void StreamWriter::ChunkWritten() {
  queued_ -= current_accounted_;
  Release(current_accounted_);
  current_accounted_ = 0;
  if (state_ == State::kWritingChunk) state_ = State::kIdle;
}

void StreamWriter::End() {
  serializer_.reset();
  queue_.clear();
  current_.clear();
  Release(queued_);
  queued_ = 0;
  current_accounted_ = 0;
  finish_requested_ = false;
  state_ = State::kNone;
}

}  // namespace infera::http_internal
