"""Small test-data builders and request helpers shared by several integration test files."""

import json


def bert_tokenizer_json(vocab, specials, max_input_chars_per_word=100):
    """A Hugging Face tokenizer.json (a dict) for a lowercasing BERT WordPiece tokenizer:
    BertNormalizer, BertPreTokenizer, `[CLS] A [SEP]` template, WordPiece decoder.
    vocab: {token: id}, holding every token of `specials` (added as special tokens),
    "[UNK]", "[CLS]" and "[SEP]"."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for t in specials],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                           "pair": [],
                           "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]}
                                              for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": max_input_chars_per_word, "vocab": vocab},
    }


def greedy_completion(server, model, prompt, max_tokens, stream=False, **extra):
    """A greedy /v1/completions of exactly `max_tokens` tokens (ignore_eos), streamed or
    not: (text, token strings as `token_id:N`, finish_reason). `extra` adds request fields."""
    import json
    body = dict({"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True,
                 "logprobs": 0, "return_tokens_as_token_ids": True, "stream": stream}, **extra)
    status, _, data = server.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    assert status == 200, data
    if not stream:
        choice = json.loads(data)["choices"][0]
        return choice["text"], choice["logprobs"]["tokens"], choice["finish_reason"]
    events = [line[len("data: "):] for line in data.decode().split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]", events[-3:]
    text, tokens, finish = "", [], None
    for event in map(json.loads, events[:-1]):
        for choice in event["choices"]:
            text += choice["text"]
            if choice.get("logprobs"):
                tokens += choice["logprobs"]["tokens"]
            finish = choice.get("finish_reason") or finish
    return text, tokens, finish
