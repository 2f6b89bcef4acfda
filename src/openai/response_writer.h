// ResponseWriter: where one OpenAI request's answer goes — one whole response, or a
// stream of chunks (Server-Sent Events). The server's is HttpResponseWriter, over the
// request's HttpResponder; the generation job's tests record what it is given.
//
// Not thread-safe: its owner serialises the calls (the generation job, under its lock).
// The calls themselves never block (HttpResponder posts to the connection's I/O thread).
#ifndef INFERA_OPENAI_RESPONSE_WRITER_H_
#define INFERA_OPENAI_RESPONSE_WRITER_H_

#include <optional>
#include <string>

#include "http/http_message.h"
#include "http/http_server.h"

namespace infera::openai {

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  // The answer: Send() once, or StartStream() once and then any Write()s and one
  // FinishStream().
  virtual void Send(HttpResponse response) = 0;
  virtual void StartStream(HttpResponse head) = 0;
  virtual void Write(std::string chunk) = 0;
  virtual void FinishStream() = 0;
};

class HttpResponseWriter final : public ResponseWriter {
 public:
  explicit HttpResponseWriter(HttpResponder responder) : responder_(std::move(responder)) {}

  void Send(HttpResponse response) override;
  void StartStream(HttpResponse head) override;
  void Write(std::string chunk) override;
  void FinishStream() override;

 private:
  std::optional<HttpResponder> responder_;  // until Send or StartStream
  std::optional<HttpStream> stream_;        // from StartStream to FinishStream
};

}  // namespace infera::openai

#endif  // INFERA_OPENAI_RESPONSE_WRITER_H_
