// ChatMessage: one message of a chat conversation, as the OpenAI chat API and a model's
// chat template see it. Part of the transport-neutral generation request
// (api/generation.h).
//
// A value type; thread-safe to copy.
#ifndef INFERA_API_CHAT_MESSAGE_H_
#define INFERA_API_CHAT_MESSAGE_H_

#include <string>

namespace infera {

struct ChatMessage {
  std::string role;  // system, user, assistant
  std::string content;
};

}  // namespace infera

#endif  // INFERA_API_CHAT_MESSAGE_H_
