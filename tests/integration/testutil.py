"""Small test-data builders shared by several integration test files."""


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
