#include "transfer/markdown.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::transfer {
namespace {

using nlohmann::json;

// Front-matter fields strata reads; the others stay in the body (`front_matter`).
constexpr const char* kFields[] = {"category", "key", "type", "tags", "valid_from", "valid_to"};

// A note split at its front matter.
struct Note {
  json front_matter = json::object();  // Strings, nulls and lists of strings.
  std::string_view text;               // Below the front matter.
};

// A front-matter error and its line.
struct NoteError {
  int64_t line = 0;
  absl::Status status;
};

std::string_view Trim(std::string_view s) { return ToStd(absl::StripAsciiWhitespace(ToAbsl(s))); }

// Without a trailing " # comment".
std::string_view StripComment(std::string_view s) {
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '#' && (s[i - 1] == ' ' || s[i - 1] == '\t')) return Trim(s.substr(0, i));
  }
  return s;
}

// A scalar: "double-quoted" (escapes \" \\ \/ \n \r \t), 'single-quoted' ('' is a quote) or
// plain (null and ~ are null). `rest` is what follows a quoted scalar.
absl::StatusOr<json> Scalar(std::string_view s, std::string_view& rest) {
  rest = {};
  if (s.empty()) return json();
  const char quote = s[0];
  if (quote == '"' || quote == '\'') {
    std::string out;
    for (size_t i = 1; i < s.size(); ++i) {
      const char c = s[i];
      if (c == quote) {
        if (quote == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
          out += '\'';
          ++i;
          continue;
        }
        rest = Trim(s.substr(i + 1));
        return out;
      }
      if (quote == '"' && c == '\\' && i + 1 < s.size()) {
        const char e = s[++i];
        switch (e) {
          case '"':
          case '\\':
          case '/':
            out += e;
            break;
          case 'n':
            out += '\n';
            break;
          case 'r':
            out += '\r';
            break;
          case 't':
            out += '\t';
            break;
          default:
            return absl::InvalidArgumentError(
                absl::StrCat("the escape \\", std::string(1, e),
                             " is not read (only \\\" \\\\ \\/ \\n \\r \\t)"));
        }
        continue;
      }
      out += c;
    }
    return absl::InvalidArgumentError("a quoted string is not closed on its line");
  }
  if (s[0] == '{' || s[0] == '[') {
    return absl::InvalidArgumentError("nested lists and maps are not read");
  }
  if (s[0] == '&' || s[0] == '*' || s[0] == '!' || s[0] == '|' || s[0] == '>') {
    return absl::InvalidArgumentError(
        "anchors, aliases, tags and block scalars (| and >) are not read; quote the value");
  }
  if (s == "null" || s == "~") return json();
  return std::string(s);
}

// A whole value after "key:": a scalar, or a [flow, list] of scalars.
absl::StatusOr<json> Value(std::string_view s) {
  s = Trim(s);
  if (!s.empty() && s[0] != '"' && s[0] != '\'') s = StripComment(s);
  std::string_view rest;
  if (s.empty() || s[0] != '[') {
    ASSIGN_OR_RETURN(json v, Scalar(s, rest));
    if (!rest.empty() && rest[0] != '#') {
      return absl::InvalidArgumentError("text after a quoted string");
    }
    return v;
  }
  json list = json::array();
  std::string_view items = Trim(s.substr(1));
  while (true) {
    if (items.empty()) return absl::InvalidArgumentError("a [list] is not closed on its line");
    if (items[0] == ']') {
      if (!Trim(items.substr(1)).empty() && Trim(items.substr(1))[0] != '#') {
        return absl::InvalidArgumentError("text after a [list]");
      }
      return list;
    }
    if (items[0] == '"' || items[0] == '\'') {
      ASSIGN_OR_RETURN(json v, Scalar(items, rest));
      list.push_back(std::move(v));
    } else {
      const size_t end = items.find_first_of(",]");
      if (end == std::string_view::npos) {
        return absl::InvalidArgumentError("a [list] is not closed on its line");
      }
      ASSIGN_OR_RETURN(json v, Scalar(Trim(items.substr(0, end)), rest));
      if (!v.is_null()) list.push_back(std::move(v));
      rest = items.substr(end);
    }
    items = Trim(rest);
    if (!items.empty() && items[0] == ',') items = Trim(items.substr(1));
  }
}

// Splits `text` at its front matter: a first line "---", then `key: value` lines (a value
// is a scalar or a [flow list]; an empty value followed by "- item" lines is a block list),
// then "---" or "...". Nested maps, multi-line strings, anchors, aliases and tags are not
// read: each is an error naming its line.
absl::StatusOr<Note> SplitNote(std::string_view text, NoteError& error) {
  Note note{.text = text};
  const auto line_of = [](std::string_view s) {
    std::string_view line = s.substr(0, s.find('\n'));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  if (Trim(line_of(text)) != "---") return note;
  std::string_view rest = text;
  int64_t number = 1;
  std::string pending;  // The key whose block list the next "- item" lines fill.
  const auto fail = [&](std::string message) {
    error = {.line = number,
             .status = absl::InvalidArgumentError(absl::StrCat("front matter: ", message))};
    return error.status;
  };
  while (true) {
    const size_t end = rest.find('\n');
    if (end == std::string_view::npos) {
      number = 1;
      return fail("no closing --- line");
    }
    rest = rest.substr(end + 1);
    ++number;
    const std::string_view line = line_of(rest);
    const std::string_view trimmed = Trim(line);
    if (trimmed == "---" || trimmed == "...") {
      const size_t body = rest.find('\n');
      note.text = body == std::string_view::npos ? std::string_view() : rest.substr(body + 1);
      return note;
    }
    if (trimmed.empty() || trimmed[0] == '#') continue;
    if (line[0] == '\t') {
      return fail("a tab in the indentation (YAML indents with spaces)");
    }
    if (trimmed.starts_with("- ") || trimmed == "-") {
      if (pending.empty())
        return fail("a \"- item\" line belongs under a \"key:\" line with no value");
      std::string_view after;
      std::string_view raw = Trim(trimmed.substr(1));
      if (!raw.empty() && raw[0] != '"' && raw[0] != '\'') raw = StripComment(raw);
      absl::StatusOr<json> item = Scalar(raw, after);
      if (item.ok() && !after.empty() && after[0] != '#') {
        item = absl::InvalidArgumentError("text after a quoted string");
      }
      if (!item.ok()) return fail(std::string(item.status().message()));
      json& list = note.front_matter[pending];
      if (list.is_null()) list = json::array();
      if (!item->is_null()) list.push_back(*std::move(item));
      continue;
    }
    if (line[0] == ' ')
      return fail("an indented line: nested maps are not read (scalars and lists only)");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || (colon + 1 < line.size() && line[colon + 1] != ' ')) {
      return fail("expected \"key: value\"");
    }
    const std::string key(Trim(line.substr(0, colon)));
    if (key.empty() || key[0] == '"' || key[0] == '\'' || key[0] == '?') {
      return fail("expected a plain key before the colon");
    }
    if (note.front_matter.contains(key)) return fail(absl::StrCat("\"", key, "\" is given twice"));
    absl::StatusOr<json> value = Value(line.substr(colon + 1));
    if (!value.ok()) return fail(absl::StrCat(key, ": ", value.status().message()));
    pending = value->is_null() ? key : "";
    note.front_matter[key] = *std::move(value);
  }
}

// The request for one note: `key` unless its front matter names one.
ForeignRecord NoteRecord(std::string_view text, const std::string& file, const std::string& key,
                         const ForeignImport& what) {
  ForeignRecord record{.at = {.file = file, .line = 1}, .record = absl::UnknownError("")};
  if (const int64_t bad = FirstNonUtf8Line(text); bad != 0) {
    record.at.line = bad;
    record.record = absl::InvalidArgumentError("not valid UTF-8");
    return record;
  }
  NoteError error;
  absl::StatusOr<Note> note = SplitNote(text, error);
  if (!note.ok()) {
    record.at.line = error.line;
    record.record = note.status();
    return record;
  }
  json fields = {{"key", key}};
  json others = json::object();
  for (auto& [name, value] : note->front_matter.items()) {
    if (std::find(std::begin(kFields), std::end(kFields), name) == std::end(kFields)) {
      others[name] = value;
    } else if (!value.is_null()) {
      fields[name] = value;
    }
  }
  const std::string body(note->text);
  fields["body"] = others.empty() ? json(body) : json{{"text", body}, {"front_matter", others}};
  record.record = RequestFromFields(fields, what);
  if (record.record.ok()) record.record->source = "markdown";
  return record;
}

bool IsNote(const std::filesystem::path& path) {
  const std::string extension = absl::AsciiStrToLower(path.extension().string());
  return extension == ".md" || extension == ".markdown";
}

}  // namespace

absl::StatusOr<std::vector<ForeignRecord>> ReadMarkdown(const ForeignImport& what) {
  ForeignImport with_default = what;
  if (!with_default.default_category) with_default.default_category = "notes";
  int64_t budget = kMaxForeignBytes;
  std::vector<ForeignRecord> records;
  std::error_code ec;
  const std::filesystem::path root(what.path);
  if (!std::filesystem::is_directory(root, ec)) {
    ASSIGN_OR_RETURN(const std::string text, ReadWhole(what.path, budget));
    records.push_back(NoteRecord(text, what.path, root.stem().string(), with_default));
    return records;
  }
  // Every note under the folder, in path order; hidden folders (.obsidian, .git, .trash)
  // hold no notes.
  std::vector<std::filesystem::path> notes;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().starts_with(".")) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && IsNote(it->path())) notes.push_back(it->path());
  }
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read ", what.path, ": ", ec.message()));
  std::sort(notes.begin(), notes.end());
  for (const std::filesystem::path& path : notes) {
    ASSIGN_OR_RETURN(const std::string text, ReadWhole(path.string(), budget));
    const std::string key =
        std::filesystem::relative(path, root).replace_extension().generic_string();
    records.push_back(NoteRecord(text, path.string(), key, with_default));
  }
  return records;
}

}  // namespace strata::transfer
