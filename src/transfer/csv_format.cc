#include "transfer/csv_format.h"

#include <algorithm>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace strata::transfer {
namespace {

constexpr const char* kColumns[] = {"category", "key",  "body", "valid_from",
                                    "valid_to", "tags", "type"};

// One record of the file: its fields, or why it is not one.
struct Row {
  int64_t line = 0;  // Where it starts.
  std::vector<std::string> fields;
  absl::Status error;
};

// Splits `text` into records per RFC 4180: fields separated by commas, records by CRLF or
// LF; a field in double quotes may hold commas, line breaks and quotes (doubled). A blank
// line is no record. A record that breaks the rules is kept with its error, and reading goes
// on at the next line; an unclosed quote ends the file.
std::vector<Row> SplitRows(std::string_view text) {
  std::vector<Row> rows;
  size_t i = 0;
  int64_t line = 1;
  const size_t n = text.size();
  const auto at_line_end = [&](size_t k) {
    return k >= n || text[k] == '\n' || (text[k] == '\r' && k + 1 < n && text[k + 1] == '\n');
  };
  const auto skip_line_end = [&] {
    if (i < n && text[i] == '\r') ++i;
    if (i < n && text[i] == '\n') {
      ++i;
      ++line;
    }
  };
  while (i < n) {
    if (at_line_end(i)) {  // A blank line.
      skip_line_end();
      continue;
    }
    Row row{.line = line};
    while (true) {
      std::string field;
      if (text[i] == '"') {
        ++i;
        bool closed = false;
        while (i < n) {
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (text[i] == '\n') ++line;
          field += text[i++];
        }
        if (!closed) {
          row.error = absl::InvalidArgumentError(
              "a quoted field is not closed (a field's quotes are doubled inside it)");
          rows.push_back(std::move(row));
          return rows;
        }
        if (i < n && text[i] != ',' && !at_line_end(i)) {
          row.error = absl::InvalidArgumentError(
              "text after a field's closing quote (quotes inside a field are doubled)");
        }
      } else {
        while (i < n && text[i] != ',' && !at_line_end(i)) {
          if (text[i] == '"' && row.error.ok()) {
            row.error = absl::InvalidArgumentError(
                "a quote inside an unquoted field (quote the field and double its quotes)");
          }
          field += text[i++];
        }
      }
      row.fields.push_back(std::move(field));
      if (!row.error.ok()) {
        while (!at_line_end(i)) ++i;  // Resume at the next line.
      }
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      skip_line_end();
      break;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The request a row makes under the header's column names.
absl::StatusOr<WriteRequest> RowRequest(const Row& row, const std::vector<std::string>& columns,
                                        const ForeignImport& what) {
  RETURN_IF_ERROR(row.error);
  if (row.fields.size() != columns.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", columns.size(), " fields (as the header), got ", row.fields.size()));
  }
  nlohmann::json fields = nlohmann::json::object();
  for (size_t c = 0; c < row.fields.size(); ++c) {
    const std::string& name = columns[c];
    const std::string& value = row.fields[c];
    if (const int64_t bad = FirstNonUtf8Line(value, row.line); bad != 0) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": not valid UTF-8 (line ", bad, ")"));
    }
    // An empty optional field is an absent one; key and body are always given.
    const bool optional =
        name != "key" && name != "body" && (name != "category" || what.default_category);
    if (value.empty() && optional) continue;
    fields[name] = value;
  }
  return RequestFromFields(fields, what);
}

}  // namespace

absl::StatusOr<std::vector<ForeignRecord>> ReadCsv(const ForeignImport& what) {
  int64_t budget = kMaxForeignBytes;
  ASSIGN_OR_RETURN(std::string text, ReadWhole(what.path, budget));
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // A byte order mark.
  std::vector<Row> rows = SplitRows(text);
  const auto header_error = [&](const std::string& message) {
    return absl::InvalidArgumentError(absl::StrCat(
        what.path, ":", rows.empty() ? 1 : rows.front().line, ": ", message,
        "; the first row must name the columns: category,key,body[,valid_from,valid_to,tags,"
        "type] in any order"));
  };
  if (rows.empty()) return header_error("the file is empty");
  const Row& header = rows.front();
  if (!header.error.ok()) return header_error(std::string(header.error.message()));
  for (size_t c = 0; c < header.fields.size(); ++c) {
    const std::string& name = header.fields[c];
    if (std::find(std::begin(kColumns), std::end(kColumns), name) == std::end(kColumns)) {
      return header_error(absl::StrCat("column \"", name, "\" is not one strata reads"));
    }
    if (std::find(header.fields.begin(), header.fields.begin() + c, name) !=
        header.fields.begin() + c) {
      return header_error(absl::StrCat("column \"", name, "\" is named twice"));
    }
  }
  for (const char* required : {"category", "key", "body"}) {
    if (std::string_view(required) == "category" && what.default_category) continue;
    if (std::find(header.fields.begin(), header.fields.end(), required) == header.fields.end()) {
      return header_error(absl::StrCat("no \"", required, "\" column"));
    }
  }
  std::vector<ForeignRecord> records;
  for (size_t r = 1; r < rows.size(); ++r) {
    const Row& row = rows[r];
    records.push_back({.at = {.file = what.path, .line = row.line},
                       .record = RowRequest(row, header.fields, what)});
  }
  return records;
}

}  // namespace strata::transfer
