#include "tools/analyze/config_edit.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/str_cat.h"
#include "repository/model_config_loader.h"

namespace infera::analyze {
namespace {

// One field of a text-format message, as offsets into the text.
struct TextField {
  std::string name;
  size_t begin = 0;        // the name's first character
  size_t value_begin = 0;  // the value's first character ('{', '[', '"' or the scalar)
  size_t value_end = 0;    // one past the value
  size_t end = 0;          // one past the value and its optional ',' or ';'
  char kind = 's';         // '{' message ('<' too), '[' list, '"' string, 's' scalar
};

// One replacement of [begin, end) of the original text.
struct Edit {
  size_t begin, end;
  std::string text;
};

bool IsIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class TextScanner {
 public:
  explicit TextScanner(const std::string& text) : t_(text) {}

  // Past whitespace and # comments.
  size_t SkipSpace(size_t i, size_t end) const {
    while (i < end) {
      if (std::isspace(static_cast<unsigned char>(t_[i]))) {
        ++i;
      } else if (t_[i] == '#') {
        while (i < end && t_[i] != '\n') ++i;
      } else {
        break;
      }
    }
    return i;
  }

  size_t SkipString(size_t i, size_t end) const {
    const char quote = t_[i++];
    while (i < end && t_[i] != quote) i += t_[i] == '\\' ? 2 : 1;
    return std::min(end, i + 1);
  }

  // `i` at an opening bracket: one past its matching close.
  size_t Matching(size_t i, size_t end) const {
    int depth = 0;
    while (i < end) {
      const char c = t_[i];
      if (c == '"' || c == '\'') {
        i = SkipString(i, end);
        continue;
      }
      if (c == '#') {
        i = SkipSpace(i, end);
        continue;
      }
      if (c == '{' || c == '[' || c == '<') ++depth;
      if ((c == '}' || c == ']' || c == '>') && --depth == 0) return i + 1;
      ++i;
    }
    return end;
  }

  // The fields of the message content [begin, end). Stops at anything unexpected (the
  // verification of the result catches what that leaves undone).
  std::vector<TextField> Fields(size_t begin, size_t end) const {
    std::vector<TextField> fields;
    size_t i = SkipSpace(begin, end);
    while (i < end && IsIdent(t_[i])) {
      TextField f;
      f.begin = i;
      while (i < end && IsIdent(t_[i])) ++i;
      f.name = t_.substr(f.begin, i - f.begin);
      i = SkipSpace(i, end);
      if (i < end && t_[i] == ':') i = SkipSpace(i + 1, end);
      if (i >= end) break;
      f.value_begin = i;
      const char c = t_[i];
      if (c == '{' || c == '<') {
        f.kind = '{';
        i = Matching(i, end);
      } else if (c == '[') {
        f.kind = '[';
        i = Matching(i, end);
      } else if (c == '"' || c == '\'') {
        f.kind = '"';
        i = SkipString(i, end);
        // Adjacent strings concatenate.
        for (size_t j = SkipSpace(i, end); j < end && (t_[j] == '"' || t_[j] == '\''); j = SkipSpace(i, end)) {
          i = SkipString(j, end);
        }
      } else {
        while (i < end && !std::isspace(static_cast<unsigned char>(t_[i])) &&
               std::string_view(",;}]>#").find(t_[i]) == std::string_view::npos) {
          ++i;
        }
      }
      f.value_end = f.end = i;
      const size_t next = SkipSpace(i, end);
      if (next < end && (t_[next] == ',' || t_[next] == ';')) f.end = next + 1;
      fields.push_back(f);
      i = SkipSpace(f.end, end);
    }
    return fields;
  }

  // The message elements (spans of "{...}") of a list value [begin, end).
  std::vector<std::pair<size_t, size_t>> ListMessages(size_t begin, size_t end) const {
    std::vector<std::pair<size_t, size_t>> out;
    for (size_t i = SkipSpace(begin + 1, end - 1); i < end - 1; i = SkipSpace(i, end - 1)) {
      if (t_[i] == '{' || t_[i] == '<') {
        const size_t close = Matching(i, end - 1);
        out.emplace_back(i, close);
        i = close;
      } else {
        ++i;  // a separator or a scalar element
      }
    }
    return out;
  }

  size_t LineStart(size_t i) const {
    const size_t nl = i == 0 ? std::string::npos : t_.rfind('\n', i - 1);
    return nl == std::string::npos ? 0 : nl + 1;
  }

  bool Blank(size_t begin, size_t end) const {
    for (size_t i = begin; i < end; ++i) {
      if (!std::isspace(static_cast<unsigned char>(t_[i]))) return false;
    }
    return true;
  }

  const std::string& text() const { return t_; }

 private:
  const std::string& t_;
};

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A message's content span and fields; the top level is [0, size) with no brackets.
struct MessageSpan {
  size_t content_begin = 0, content_end = 0;
  bool top_level = false;
};

class Editor {
 public:
  explicit Editor(const TextScanner& scanner) : s_(scanner) {}

  std::vector<TextField> FieldsOf(const MessageSpan& m) const { return s_.Fields(m.content_begin, m.content_end); }

  static MessageSpan Inside(size_t value_begin, size_t value_end) { return {value_begin + 1, value_end - 1, false}; }

  // Removes a field; the whole line when nothing else is on it.
  void Remove(const TextField& f) {
    const std::string& t = s_.text();
    const size_t line = s_.LineStart(f.begin);
    size_t after = f.end;
    while (after < t.size() && t[after] != '\n' && std::isspace(static_cast<unsigned char>(t[after]))) ++after;
    if (s_.Blank(line, f.begin) && (after == t.size() || t[after] == '\n')) {
      edits_.push_back({line, std::min(t.size(), after + 1), ""});
    } else {
      size_t through = f.end;  // and the spaces after it, so that no double space is left
      while (through < t.size() && (t[through] == ' ' || t[through] == '\t')) ++through;
      edits_.push_back({f.begin, through, ""});
    }
  }

  void ReplaceValue(const TextField& f, const std::string& value) { edits_.push_back({f.value_begin, f.value_end, value}); }
  void ReplaceField(const TextField& f, const std::string& text) { edits_.push_back({f.begin, f.value_end, text}); }

  // Adds "name: value" text (`line`) as the message's last field, in its layout.
  void Insert(const MessageSpan& m, const std::string& line) {
    const std::string& t = s_.text();
    if (m.top_level) {
      const bool newline = !t.empty() && t.back() != '\n';
      edits_.push_back({t.size(), t.size(), StrCat(newline ? "\n" : "", line, "\n")});
      return;
    }
    const size_t close = m.content_end;
    const size_t close_line = s_.LineStart(close);
    const auto fields = FieldsOf(m);
    if (close_line > m.content_begin && s_.Blank(close_line, close)) {
      std::string indent = StrCat(t.substr(close_line, close - close_line), "  ");
      if (!fields.empty() && s_.Blank(s_.LineStart(fields[0].begin), fields[0].begin)) {
        const size_t first_line = s_.LineStart(fields[0].begin);
        indent = t.substr(first_line, fields[0].begin - first_line);
      }
      edits_.push_back({close_line, close_line, StrCat(indent, line, "\n")});
      return;
    }
    const bool space_before = close > 0 && std::isspace(static_cast<unsigned char>(t[close - 1]));
    edits_.push_back({close, close, StrCat(space_before ? "" : " ", line, " ")});
  }

  // Sets a singular field to `value` (text-format value), adding it when absent.
  void SetScalar(const MessageSpan& m, const std::string& name, const std::string& value) {
    for (const TextField& f : FieldsOf(m)) {
      if (f.name == name) {
        ReplaceValue(f, value);
        return;
      }
    }
    Insert(m, StrCat(name, ": ", value));
  }

  // Sets a repeated scalar field to `values`: the first occurrence becomes the list, the
  // others go.
  void SetRepeated(const MessageSpan& m, const std::string& name, const std::vector<std::string>& values) {
    const std::string list = StrCat("[ ", StrJoin(values, ", "), " ]");
    bool first = true;
    for (const TextField& f : FieldsOf(m)) {
      if (f.name != name) continue;
      if (first && !values.empty()) {
        ReplaceValue(f, list);
      } else {
        Remove(f);
      }
      first = false;
    }
    if (first && !values.empty()) Insert(m, StrCat(name, ": ", list));
  }

  std::string Apply() {
    std::string out = s_.text();
    std::sort(edits_.begin(), edits_.end(), [](const Edit& a, const Edit& b) {
      return a.begin != b.begin ? a.begin > b.begin : a.end > b.end;
    });
    for (const Edit& e : edits_) out.replace(e.begin, e.end - e.begin, e.text);
    return out;
  }

 private:
  const TextScanner& s_;
  std::vector<Edit> edits_;
};

std::string Deterministic(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

bool Same(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return Deterministic(a) == Deterministic(b);
}

std::string Groups(const inference::ModelConfig& c) {
  if (c.instance_group_size() == 0) return "absent";
  std::vector<std::string> parts;
  for (const auto& g : c.instance_group()) {
    parts.push_back(StrCat(g.count() != 0 ? g.count() : 1, " x ",
                           inference::ModelInstanceGroup::Kind_Name(g.kind())));
  }
  return StrJoin(parts, " + ");
}

std::string Sizes(const google::protobuf::RepeatedField<int32_t>& sizes) {
  std::vector<std::string> parts;
  for (int32_t s : sizes) parts.push_back(std::to_string(s));
  return StrCat("[", StrJoin(parts, ", "), "]");
}

std::string Parameter(const inference::ModelConfig& c, const std::string& key) {
  auto it = c.parameters().find(key);
  return it == c.parameters().end() ? "absent" : Quote(it->second.string_value());
}

// The parameters entry with `key`, as the span of its "value" message; or nothing.
std::optional<MessageSpan> FindParameterValue(const Editor& editor, const TextScanner& s,
                                              const std::vector<TextField>& top, const std::string& key) {
  std::vector<MessageSpan> entries;
  for (const TextField& f : top) {
    if (f.name != "parameters") continue;
    if (f.kind == '{') entries.push_back(Editor::Inside(f.value_begin, f.value_end));
    if (f.kind == '[') {
      for (auto [b, e] : s.ListMessages(f.value_begin, f.value_end)) entries.push_back(Editor::Inside(b, e));
    }
  }
  for (const MessageSpan& entry : entries) {
    const auto fields = editor.FieldsOf(entry);
    bool match = false;
    for (const TextField& f : fields) {
      if (f.name == "key" && f.kind == '"' && s.text().substr(f.value_begin, f.value_end - f.value_begin) == Quote(key)) {
        match = true;
      }
    }
    if (!match) continue;
    for (const TextField& f : fields) {
      if (f.name == "value" && f.kind == '{') return Editor::Inside(f.value_begin, f.value_end);
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<FieldChange> ConfigChanges(const inference::ModelConfig& base, const inference::ModelConfig& chosen) {
  std::vector<FieldChange> changes;
  inference::ModelConfig rest_base = base, rest_chosen = chosen;
  if (base.max_batch_size() != chosen.max_batch_size()) {
    changes.push_back({"max_batch_size", std::to_string(base.max_batch_size()), std::to_string(chosen.max_batch_size())});
  }
  const auto& db = base.dynamic_batching();
  const auto& dc = chosen.dynamic_batching();
  if (base.has_dynamic_batching() != chosen.has_dynamic_batching()) {
    changes.push_back({"dynamic_batching", base.has_dynamic_batching() ? "on" : "absent",
                       chosen.has_dynamic_batching() ? "on" : "absent (no batching)"});
  }
  if (chosen.has_dynamic_batching()) {
    if (!std::equal(db.preferred_batch_size().begin(), db.preferred_batch_size().end(),
                    dc.preferred_batch_size().begin(), dc.preferred_batch_size().end())) {
      changes.push_back({"dynamic_batching.preferred_batch_size", Sizes(db.preferred_batch_size()),
                         Sizes(dc.preferred_batch_size())});
    }
    if (db.max_queue_delay_microseconds() != dc.max_queue_delay_microseconds()) {
      changes.push_back({"dynamic_batching.max_queue_delay_microseconds",
                         std::to_string(db.max_queue_delay_microseconds()),
                         std::to_string(dc.max_queue_delay_microseconds())});
    }
  }
  if (Groups(base) != Groups(chosen)) changes.push_back({"instance_group", Groups(base), Groups(chosen)});
  for (const auto& [key, value] : chosen.parameters()) {
    if (Parameter(base, key) != Parameter(chosen, key)) {
      changes.push_back({StrCat("parameters[", key, "]"), Parameter(base, key), Parameter(chosen, key)});
    }
  }
  // Anything else (not made by a dimension; listed so that nothing changes unsaid).
  for (auto* c : {&rest_base, &rest_chosen}) {
    c->clear_max_batch_size();
    c->clear_dynamic_batching();
    c->clear_instance_group();
    c->clear_parameters();
  }
  if (!Same(rest_base, rest_chosen)) changes.push_back({"other fields", "the model's", "changed"});
  return changes;
}

absl::StatusOr<std::string> EditConfigText(const std::string& original_text, const inference::ModelConfig& base,
                                           const inference::ModelConfig& chosen) {
  const TextScanner scanner(original_text);
  Editor editor(scanner);
  const MessageSpan top_span{0, original_text.size(), true};
  const std::vector<TextField> top = editor.FieldsOf(top_span);
  auto named = [&top](const std::string& name) {
    std::vector<TextField> out;
    for (const TextField& f : top) {
      if (f.name == name) out.push_back(f);
    }
    return out;
  };

  if (base.max_batch_size() != chosen.max_batch_size()) {
    editor.SetScalar(top_span, "max_batch_size", std::to_string(chosen.max_batch_size()));
  }

  if (!Same(base.dynamic_batching(), chosen.dynamic_batching()) ||
      base.has_dynamic_batching() != chosen.has_dynamic_batching()) {
    const auto fields = named("dynamic_batching");
    const auto& dc = chosen.dynamic_batching();
    if (!chosen.has_dynamic_batching()) {
      for (const TextField& f : fields) editor.Remove(f);
    } else if (fields.empty() || fields[0].kind != '{') {
      editor.Insert(top_span, StrCat("dynamic_batching { ", dc.ShortDebugString(), " }"));
    } else {
      const MessageSpan inside = Editor::Inside(fields[0].value_begin, fields[0].value_end);
      const auto& db = base.dynamic_batching();
      if (!std::equal(db.preferred_batch_size().begin(), db.preferred_batch_size().end(),
                      dc.preferred_batch_size().begin(), dc.preferred_batch_size().end())) {
        std::vector<std::string> sizes;
        for (int32_t s : dc.preferred_batch_size()) sizes.push_back(std::to_string(s));
        editor.SetRepeated(inside, "preferred_batch_size", sizes);
      }
      if (db.max_queue_delay_microseconds() != dc.max_queue_delay_microseconds()) {
        editor.SetScalar(inside, "max_queue_delay_microseconds", std::to_string(dc.max_queue_delay_microseconds()));
      }
    }
  }

  if (Groups(base) != Groups(chosen) || base.instance_group_size() != chosen.instance_group_size()) {
    const auto fields = named("instance_group");
    std::vector<MessageSpan> elements;
    for (const TextField& f : fields) {
      if (f.kind == '{') elements.push_back(Editor::Inside(f.value_begin, f.value_end));
      if (f.kind == '[') {
        for (auto [b, e] : scanner.ListMessages(f.value_begin, f.value_end)) elements.push_back(Editor::Inside(b, e));
      }
    }
    inference::ModelInstanceGroup base_rest, chosen_rest;
    if (base.instance_group_size() == 1 && chosen.instance_group_size() == 1) {
      base_rest = base.instance_group(0);
      chosen_rest = chosen.instance_group(0);
      base_rest.clear_count();
      chosen_rest.clear_count();
    }
    if (elements.size() == 1 && base.instance_group_size() == 1 && chosen.instance_group_size() == 1 &&
        Same(base_rest, chosen_rest)) {
      editor.SetScalar(elements[0], "count", std::to_string(chosen.instance_group(0).count()));
    } else {
      std::vector<std::string> groups;
      for (const auto& g : chosen.instance_group()) groups.push_back(StrCat("{ ", g.ShortDebugString(), " }"));
      const std::string text = StrCat("instance_group [ ", StrJoin(groups, ", "), " ]");
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i == 0) {
          editor.ReplaceField(fields[i], text);
        } else {
          editor.Remove(fields[i]);
        }
      }
      if (fields.empty()) editor.Insert(top_span, text);
    }
  }

  for (const auto& [key, value] : chosen.parameters()) {
    auto it = base.parameters().find(key);
    if (it != base.parameters().end() && Same(it->second, value)) continue;
    if (auto span = FindParameterValue(editor, scanner, top, key)) {
      editor.SetScalar(*span, "string_value", Quote(value.string_value()));
    } else {
      editor.Insert(top_span, StrCat("parameters { key: ", Quote(key), " value { string_value: ",
                                     Quote(value.string_value()), " } }"));
    }
  }

  std::string edited = editor.Apply();
  auto reparsed = ParseModelConfig(edited, kModelConfigFilename);
  if (!reparsed.ok()) {
    return absl::FailedPreconditionError(StrCat("the edited config does not parse: ", reparsed.status().message()));
  }
  if (!Same(*reparsed, chosen)) {
    return absl::FailedPreconditionError("the config could not be edited in place (a field the editor does not handle)");
  }
  return edited;
}

}  // namespace infera::analyze
