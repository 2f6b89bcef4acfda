#include "openai/response_writer.h"

#include <utility>

namespace infera::openai {

void HttpResponseWriter::Send(HttpResponse response) {
  if (!responder_) return;
  std::move(*responder_).Send(std::move(response));
  responder_.reset();
}

void HttpResponseWriter::StartStream(HttpResponse head) {
  if (!responder_) return;
  stream_.emplace(std::move(*responder_).StartStream(std::move(head)));
  responder_.reset();
}

void HttpResponseWriter::Write(std::string chunk) {
  if (stream_) stream_->Write(std::move(chunk));
}

void HttpResponseWriter::FinishStream() {
  if (!stream_) return;
  std::move(*stream_).Finish();
  stream_.reset();
}

}  // namespace infera::openai
