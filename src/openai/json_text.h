// A parsed JSON value back to compact JSON text (what the guided compilers and the chat
// template take: schemas, tool arguments).
//
// Thread-safe (a pure function).
#ifndef INFERA_OPENAI_JSON_TEXT_H_
#define INFERA_OPENAI_JSON_TEXT_H_

#include <string>

#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::openai {

inline std::string JsonText(const rapidjson::Value& value) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  value.Accept(w);
  return std::string(b.GetString(), b.GetSize());
}

}  // namespace infera::openai

#endif  // INFERA_OPENAI_JSON_TEXT_H_
