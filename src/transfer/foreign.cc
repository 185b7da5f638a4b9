#include "transfer/foreign.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "dedup/index.h"
#include "transfer/csv_format.h"
#include "transfer/jsonl_format.h"
#include "transfer/markdown.h"
#include "transfer/server_memory.h"
#include "util/json_text.h"
#include "util/status_macros.h"
#include "util/sv.h"
#include "util/time_parse.h"

namespace strata::transfer {
namespace {

using nlohmann::json;

constexpr char kFormatList[] = "strata, server-memory, markdown, csv, jsonl";

// The length of the UTF-8 sequence (RFC 3629) starting at text[i], or 0 when it is not one.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // The second byte's range.
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F;  // No surrogates.
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

absl::StatusOr<int64_t> TimeField(const json& v, const char* name) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) return ParseTimeText(v.get<std::string>(), name);
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": expected unix milliseconds or a date-time, got ", v.type_name()));
}

}  // namespace

absl::StatusOr<std::string> ReadWhole(const std::string& path, int64_t& budget) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", ec.message()));
  if (static_cast<int64_t>(size) > budget) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a foreign import reads at most ", kMaxForeignBytes >> 30,
        " GiB (it is read whole); split it, or convert it to a strata export, which streams"));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(size, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size))) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  budget -= static_cast<int64_t>(size);
  return text;
}

int64_t FirstNonUtf8Line(std::string_view text, int64_t first_line) {
  int64_t line = first_line;
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8Length(text, i);
    if (n == 0) return line;
    if (text[i] == '\n') ++line;
    i += n;
  }
  return 0;
}

std::vector<TextLine> NonBlankLines(std::string_view text) {
  std::vector<TextLine> lines;
  int64_t number = 0;
  while (!text.empty()) {
    ++number;
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) {
      lines.push_back({.number = number, .text = line});
    }
  }
  return lines;
}

absl::StatusOr<WriteRequest> RequestFromFields(const json& fields, const ForeignImport& what) {
  WriteRequest r{.identity = {.workspace = what.workspace}, .dedup = false};
  bool has_body = false;
  for (const auto& item : fields.items()) {
    // Named, not structured bindings: C++20 lambdas cannot capture those (clang refuses).
    const std::string& name = item.key();
    const json& value = item.value();
    const auto text = [&]() -> absl::StatusOr<std::string> {
      if (value.is_string()) return value.get<std::string>();
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": expected a string, got ", value.type_name()));
    };
    if (name == "category") {
      ASSIGN_OR_RETURN(r.identity.category, text());
    } else if (name == "key") {
      ASSIGN_OR_RETURN(r.identity.key, text());
    } else if (name == "type") {
      ASSIGN_OR_RETURN(r.type, text());
    } else if (name == "body") {
      r.body_json = JsonText(value);
      has_body = true;
    } else if (name == "valid_from") {
      ASSIGN_OR_RETURN(r.valid_from_unix_ms, TimeField(value, "valid_from"));
    } else if (name == "valid_to") {
      ASSIGN_OR_RETURN(r.valid_to_unix_ms, TimeField(value, "valid_to"));
    } else if (name == "tags") {
      if (value.is_string()) {
        for (absl::string_view tag : absl::StrSplit(value.get<std::string>(), ',')) {
          tag = absl::StripAsciiWhitespace(tag);
          if (!tag.empty()) r.tags.emplace_back(tag);
        }
      } else if (value.is_array()) {
        for (const json& tag : value) {
          if (!tag.is_string()) {
            return absl::InvalidArgumentError(
                absl::StrCat("tags: expected strings, got ", tag.type_name()));
          }
          r.tags.push_back(tag.get<std::string>());
        }
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("tags: expected a list of strings, got ", value.type_name()));
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": unknown field (known: category, key, body, valid_from, valid_to, tags, type)"));
    }
  }
  if (r.identity.category.empty() && what.default_category) {
    r.identity.category = *what.default_category;
  }
  if (!has_body) return absl::InvalidArgumentError("body: missing");
  if (r.valid_from_unix_ms && r.valid_to_unix_ms && *r.valid_to_unix_ms <= *r.valid_from_unix_ms) {
    return absl::InvalidArgumentError(absl::StrCat("valid_to: must be after valid_from (",
                                                   *r.valid_from_unix_ms, "), got ",
                                                   *r.valid_to_unix_ms));
  }
  return r;
}

absl::StatusOr<std::vector<ForeignRecord>> ReadForeign(const ForeignImport& what) {
  switch (what.format) {
    case ImportFormat::kServerMemory:
      return ReadServerMemory(what);
    case ImportFormat::kMarkdown:
      return ReadMarkdown(what);
    case ImportFormat::kCsv:
      return ReadCsv(what);
    case ImportFormat::kJsonl:
      return ReadJsonl(what);
    case ImportFormat::kStrata:
      break;
  }
  return absl::InvalidArgumentError("a strata export is read by Import, not ImportForeign");
}

BodyPreparer::BodyPreparer(const std::vector<ForeignRecord>& records)
    : records_(records), prepared_(records.size()), thread_([this] { Run(); }) {}

BodyPreparer::~BodyPreparer() {
  stopping_.store(true);
  taken_.store(records_.size());  // Releases a thread waiting for the writer.
  taken_.notify_all();
  thread_.join();
}

void BodyPreparer::Run() {
  // The writer is woken every this many entries (a wake-up is a system call), and at the end.
  constexpr size_t kNotifyEvery = 64;
  for (size_t i = 0; i < records_.size(); ++i) {
    for (size_t taken = taken_.load(); i >= taken + kLead; taken = taken_.load()) {
      if (stopping_.load()) return;
      taken_.wait(taken);
    }
    if (stopping_.load()) return;
    if (const absl::StatusOr<WriteRequest>& request = records_[i].record; request.ok()) {
      PreparedBody& p = prepared_[i];
      p.body = text::ParseBody(request->body_json);
      if (p.body.ok() && with_keys_.load(std::memory_order_relaxed)) {
        p.keys = dedup::BodyKeys(*p.body, request->identity);
      }
    }
    ready_.store(i + 1);
    if ((i + 1) % kNotifyEvery == 0) ready_.notify_all();
  }
  ready_.notify_all();
}

PreparedBody BodyPreparer::Take(size_t i) {
  // Tells the preparing thread how far the writer is, so that it has room: every 64 entries,
  // and always before waiting (the records since the last take may have been bad ones,
  // which are not taken).
  size_t ready = ready_.load();
  if (ready <= i || i % 64 == 0) {
    taken_.store(i);
    taken_.notify_all();
  }
  for (; ready <= i; ready = ready_.load()) ready_.wait(ready);
  return std::move(prepared_[i]);
}

absl::StatusOr<ImportFormat> DetectFormat(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": no such file or folder"));
  }
  if (std::filesystem::is_directory(status)) return ImportFormat::kMarkdown;
  const std::string extension =
      absl::AsciiStrToLower(std::filesystem::path(path).extension().string());
  if (extension == ".md" || extension == ".markdown") return ImportFormat::kMarkdown;
  if (extension == ".csv") return ImportFormat::kCsv;
  // Otherwise the first non-blank line says: a JSON object of one kind or another.
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line) && absl::StripAsciiWhitespace(line).empty()) {
  }
  const json first = ParseJsonText(line);
  if (first.is_object()) {
    if (first.value("format", json()) == "strata-export") return ImportFormat::kStrata;
    const json type = first.value("type", json());
    if ((type == "entity" || type == "relation") &&
        (first.contains("name") || first.contains("from"))) {
      return ImportFormat::kServerMemory;
    }
    if (first.contains("category") || first.contains("key") || first.contains("body")) {
      return ImportFormat::kJsonl;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot tell what ", path, " holds; name its format with --from (one of ", kFormatList, ")"));
}

}  // namespace strata::transfer
