// TextStream: one request's generated text, piece by piece — incremental detokenisation
// plus stop strings.
//
// With stop strings, the last (longest stop − 1) bytes are held back, so a stop string
// split across tokens is never partly streamed; when one appears, the text ends just
// before it (or after it with include_stop_str_in_output) and the request must stop.
// Released text is always valid UTF-8 (cut points move back to character boundaries).
//
// Not thread-safe: one per request, on the output thread (output_processor.h).
//
// Usage:
//   TextStream s(tokenizer, params);
//   TextStream::Piece p = s.Push(token);   // p.text to send; p.stopped → finish "stop"
//   std::string rest = s.Finish();         // at the end, for any other reason
#ifndef INFERA_LLM_TEXT_STREAM_H_
#define INFERA_LLM_TEXT_STREAM_H_

#include <string>
#include <vector>

#include "llm/incremental_detokenizer.h"
#include "api/sampling_params.h"

namespace infera::llm {

class TextStream {
 public:
  TextStream(const Tokenizer& tokenizer, const SamplingParams& params);

  struct Piece {
    std::string text;
    bool stopped = false;  // a stop string was found; no more text follows
  };
  Piece Push(int32_t token_id);
  // Releases whatever is held back (the stream ends for a reason other than a stop string).
  std::string Finish();

 private:
  IncrementalDetokenizer detokenizer_;
  std::vector<std::string> stops_;
  bool include_stop_ = false;
  size_t hold_ = 0;  // bytes to hold back
  std::string held_;
  bool stopped_ = false;
};

}  // namespace infera::llm

#endif  // INFERA_LLM_TEXT_STREAM_H_
