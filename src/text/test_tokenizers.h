// Hand-made tokenizer.json files for the tokenizer, LLM and tokenize-backend tests
// (test-only header).
#ifndef INFERA_TEXT_TEST_TOKENIZERS_H_
#define INFERA_TEXT_TEST_TOKENIZERS_H_

#include <cstdio>
#include <string>
#include <vector>

namespace infera::text::testing {

// A Llama-2-style (SentencePiece) BPE: <unk>=0, <s>=1, </s>=2, <0x00>..<0xFF> = 3..258,
// then ▁=259 h=260 e=261 l=262 o=263 w=264 r=265 d=266 ll=267 ▁h=268 ell=269 ▁hell=270
// ▁hello=271 ▁w=272 or=273 ▁wor=274; merges in that order from "l l".
inline std::string SentencePieceTokenizerJson() {
  std::string vocab = R"("<unk>": 0, "<s>": 1, "</s>": 2)";
  for (int b = 0; b < 256; ++b) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), R"(, "<0x%02X>": %d)", b, 3 + b);
    vocab += buf;
  }
  vocab += R"(, "▁": 259, "h": 260, "e": 261, "l": 262, "o": 263, "w": 264, "r": 265, "d": 266,
      "ll": 267, "▁h": 268, "ell": 269, "▁hell": 270, "▁hello": 271, "▁w": 272, "or": 273, "▁wor": 274)";
  return R"({
  "added_tokens": [
    {"id": 0, "content": "<unk>", "special": true, "lstrip": false, "rstrip": false},
    {"id": 1, "content": "<s>", "special": true, "lstrip": false, "rstrip": false},
    {"id": 2, "content": "</s>", "special": true, "lstrip": false, "rstrip": false}],
  "normalizer": {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]},
  "pre_tokenizer": null,
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
    "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
  "decoder": {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
    {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
  "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true,
    "vocab": {)" + vocab + R"(},
    "merges": ["l l", "▁ h", "e ll", "▁h ell", "▁hell o", "▁ w", "o r", "▁w or"]}
})";
}

// A GPT-2-style byte-level BPE over the 256 byte symbols (ids = byte order of the GPT-2
// alphabet: "!"=0 ... ) plus "Ġ" merges: Ġt=256 Ġth=257 Ġthe=258 he=259; added
// <|endoftext|>=260 (special), <|im_start|>=261.
inline std::string ByteLevelTokenizerJson(const std::string& pre_tokenizer) {
  // GPT-2 alphabet in id order: printable bytes first, then the remapped ones.
  std::string vocab;
  int id = 0;
  auto add = [&](const std::string& token) {
    std::string escaped;
    for (char c : token) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    vocab += (vocab.empty() ? "" : ", ") + ("\"" + escaped + "\": ") + std::to_string(id++);
  };
  auto utf8 = [](int cp) {
    std::string s;
    if (cp < 0x80) s += static_cast<char>(cp);
    else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
  };
  std::vector<int> order;
  for (int b = '!'; b <= '~'; ++b) order.push_back(b);
  for (int b = 0xA1; b <= 0xAC; ++b) order.push_back(b);
  for (int b = 0xAE; b <= 0xFF; ++b) order.push_back(b);
  int n = 0;
  std::vector<int> cp(256);
  for (int b = 0; b < 256; ++b) cp[b] = -1;
  for (int b : order) cp[b] = b;
  for (int b = 0; b < 256; ++b) {
    if (cp[b] < 0) cp[b] = 256 + n++;
  }
  for (int b = 0; b < 256; ++b) add(utf8(cp[b]));  // id == byte value
  add("Ġt");
  add("Ġth");
  add("Ġthe");
  add("he");
  return R"({
  "added_tokens": [
    {"id": 260, "content": "<|endoftext|>", "special": true, "lstrip": false, "rstrip": false},
    {"id": 261, "content": "<|im_start|>", "special": true, "lstrip": false, "rstrip": false}],
  "normalizer": null,
  "pre_tokenizer": )" + pre_tokenizer + R"(,
  "post_processor": {"type": "ByteLevel"},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "unk_token": null, "byte_fallback": false, "vocab": {)" + vocab + R"(},
    "merges": ["Ġ t", "Ġt h", "Ġth e", "h e"]}
})";
}

inline const char* kGpt2PreTokenizer = R"({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})";

// A BERT-uncased-style WordPiece: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, then
// the=5 un=6 ##aff=7 ##able=8 cafe=9 ,=10 !=11 中=12 文=13 ##s=14 a=15 ##a=16 hello=17
// world=18 run=19 ##ning=20; max_input_chars_per_word 8; BertNormalizer (lowercase,
// accents stripped), BertPreTokenizer, TemplateProcessing [CLS] $A [SEP], padding
// pad_id 0, WordPiece decoder.
inline std::string BertTokenizerJson() {
  return R"({
  "added_tokens": [
    {"id": 0, "content": "[PAD]", "special": true},
    {"id": 1, "content": "[UNK]", "special": true},
    {"id": 2, "content": "[CLS]", "special": true},
    {"id": 3, "content": "[SEP]", "special": true},
    {"id": 4, "content": "[MASK]", "special": true}],
  "truncation": null,
  "padding": {"strategy": "BatchLongest", "pad_id": 0, "pad_token": "[PAD]", "pad_type_id": 0},
  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                 "strip_accents": null, "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                       "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
  "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
    "max_input_chars_per_word": 8, "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4,
    "the": 5, "un": 6, "##aff": 7, "##able": 8, "cafe": 9, ",": 10, "!": 11, "中": 12, "文": 13,
    "##s": 14, "a": 15, "##a": 16, "hello": 17, "world": 18, "run": 19, "##ning": 20}}
})";
}

}  // namespace infera::text::testing

#endif  // INFERA_TEXT_TEST_TOKENIZERS_H_
