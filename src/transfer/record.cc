#include "transfer/record.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "util/json_text.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::transfer {
namespace {

using nlohmann::json;

// Builds one JSON line. Strings are checked for UTF-8 as they are written; the first bad
// one is kept in `error`.
class LineWriter {
 public:
  explicit LineWriter(std::string& out) : out_(out) {}

  // `"name":`, after a comma unless first in its object.
  LineWriter& Key(const char* name) {
    Separate();
    out_ += '"';
    out_ += name;
    out_ += "\":";
    first_ = true;  // The value that follows needs no comma.
    pending_value_ = true;
    return *this;
  }
  LineWriter& Open(char bracket) {
    Separate();
    out_ += bracket;
    first_ = true;
    return *this;
  }
  LineWriter& Close(char bracket) {
    out_ += bracket;
    first_ = false;
    return *this;
  }
  LineWriter& Int(int64_t v) {
    Separate();
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
    return *this;
  }
  LineWriter& OptInt(const std::optional<int64_t>& v) { return v ? Int(*v) : Null(); }
  LineWriter& Double(double v, std::string_view what) {
    if (!std::isfinite(v)) {
      if (error_.ok()) error_ = absl::DataLossError(absl::StrCat(ToAbsl(what), " is not finite"));
      return Null();
    }
    Separate();
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);  // Shortest that reads back as v.
    out_.append(buf, r.ptr);
    return *this;
  }
  LineWriter& OptDouble(const std::optional<double>& v, std::string_view what) {
    return v ? Double(*v, what) : Null();
  }
  LineWriter& Null() {
    Separate();
    out_ += "null";
    return *this;
  }
  LineWriter& String(std::string_view s, std::string_view what) {
    Separate();
    if (!AppendJsonStringIfUtf8(s, out_)) {
      if (error_.ok()) {
        error_ = absl::DataLossError(
            absl::StrCat(ToAbsl(what), " is not valid UTF-8, which JSON cannot carry"));
      }
      out_ += "null";
    }
    return *this;
  }
  LineWriter& OptString(const std::optional<std::string>& s, std::string_view what) {
    return s ? String(*s, what) : Null();
  }
  // The three fields of an identity, into the current object.
  LineWriter& IdentityFields(const Identity& id) {
    Key("category").String(id.category, "category");
    Key("key").String(id.key, "key");
    return Key("workspace").String(id.workspace, "workspace");
  }
  const absl::Status& error() const { return error_; }

 private:
  void Separate() {
    if (pending_value_) {
      pending_value_ = false;
    } else if (!first_) {
      out_ += ',';
    }
    first_ = false;
  }

  std::string& out_;
  bool first_ = true;
  bool pending_value_ = false;
  absl::Status error_;
};

void AppendLinks(LineWriter& w, const char* name, const std::vector<LinkRecord>& links) {
  w.Key(name).Open('[');
  for (const LinkRecord& link : links) {
    w.Open('{').IdentityFields(link.other);
    w.Key("at").Int(link.at_unix_ms);
    w.Key("valid_from").Int(link.valid_from_unix_ms);
    w.Close('}');
  }
  w.Close(']');
}

// ---- Reading ----

// A JSON object being read, with the path of its fields for messages.
class Fields {
 public:
  Fields(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  // InvalidArgument unless the object holds only `names`.
  absl::Status OnlyKnown(std::initializer_list<const char*> names) const {
    for (const auto& [name, value] : object_.items()) {
      bool known = false;
      for (const char* n : names) known = known || name == n;
      if (!known) return absl::InvalidArgumentError(absl::StrCat(Path(name), ": unknown field"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<const json*> Get(const char* name) const {
    auto it = object_.find(name);
    if (it == object_.end())
      return absl::InvalidArgumentError(absl::StrCat(Path(name), ": missing"));
    return &*it;
  }
  absl::StatusOr<int64_t> Int(const char* name) const {
    ASSIGN_OR_RETURN(const json* v, Get(name));
    return AsInt(*v, Path(name));
  }
  absl::StatusOr<std::optional<int64_t>> OptInt(const char* name) const {
    ASSIGN_OR_RETURN(const json* v, Get(name));
    if (v->is_null()) return std::nullopt;
    return AsInt(*v, Path(name));
  }
  absl::StatusOr<double> Double(const char* name) const {
    ASSIGN_OR_RETURN(const json* v, Get(name));
    if (!v->is_number()) return TypeError(Path(name), "a number", *v);
    return v->get<double>();
  }
  absl::StatusOr<std::optional<double>> OptDouble(const char* name) const {
    ASSIGN_OR_RETURN(const json* v, Get(name));
    if (v->is_null()) return std::nullopt;
    if (!v->is_number()) return TypeError(Path(name), "a number or null", *v);
    return v->get<double>();
  }
  absl::StatusOr<std::string> String(const char* name) const {
    ASSIGN_OR_RETURN(const json* v, Get(name));
    if (!v->is_string()) return TypeError(Path(name), "a string", *v);
    return v->get<std::string>();
  }
  absl::StatusOr<std::optional<std::string>> OptString(const char* name) const {
    ASSIGN_OR_RETURN(const json* v, Get(name));
    if (v->is_null()) return std::nullopt;
    if (!v->is_string()) return TypeError(Path(name), "a string or null", *v);
    return v->get<std::string>();
  }
  // The array `name`, each element an object read by `read(Fields, element path)`.
  template <typename T, typename Read>
  absl::StatusOr<std::vector<T>> Objects(const char* name, Read read) const {
    ASSIGN_OR_RETURN(const json* v, Get(name));
    if (!v->is_array()) return TypeError(Path(name), "an array", *v);
    std::vector<T> out;
    out.reserve(v->size());
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string path = absl::StrCat(Path(name), "[", i, "]");
      if (!(*v)[i].is_object()) return TypeError(path, "an object", (*v)[i]);
      ASSIGN_OR_RETURN(T item, read(Fields((*v)[i], path)));
      out.push_back(std::move(item));
    }
    return out;
  }
  absl::StatusOr<Identity> IdentityFields() const {
    Identity id;
    ASSIGN_OR_RETURN(id.category, String("category"));
    ASSIGN_OR_RETURN(id.key, String("key"));
    ASSIGN_OR_RETURN(id.workspace, String("workspace"));
    return id;
  }
  std::string Path(std::string_view name) const {
    return path_.empty() ? std::string(name) : absl::StrCat(path_, ".", ToAbsl(name));
  }

  static absl::Status TypeError(const std::string& path, const char* expected, const json& v) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected ", expected, ", got ", v.type_name()));
  }

 private:
  static absl::StatusOr<int64_t> AsInt(const json& v, const std::string& path) {
    if (!v.is_number_integer()) return TypeError(path, "an integer", v);
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": out of range"));
    }
    return v.get<int64_t>();
  }

  const json& object_;
  std::string path_;
};

// Parses one line as a JSON object; nlohmann's exceptions stop here (its parser runs only
// on a line that is not JSON, to say where and why).
absl::StatusOr<json> ParseObject(std::string_view line) {
  json parsed = ParseJsonText(line);
  if (parsed.is_discarded()) {
    try {
      parsed = json::parse(line.begin(), line.end());
    } catch (const json::parse_error& e) {
      // e.what() is "[json.exception.parse_error.101] parse error at line 1, column N: ...".
      std::string_view what = e.what();
      if (const size_t at = what.find("parse error"); at != std::string_view::npos) {
        what.remove_prefix(at);
      }
      return absl::InvalidArgumentError(absl::StrCat("not JSON: ", ToAbsl(what)));
    }
    return absl::InternalError("nlohmann's parser accepted a line it had refused");
  }
  if (!parsed.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a JSON object, got ", parsed.type_name()));
  }
  return parsed;
}

absl::StatusOr<LinkRecord> ReadLink(const Fields& f) {
  RETURN_IF_ERROR(f.OnlyKnown({"category", "key", "workspace", "at", "valid_from"}));
  LinkRecord link;
  ASSIGN_OR_RETURN(link.other, f.IdentityFields());
  ASSIGN_OR_RETURN(link.at_unix_ms, f.Int("at"));
  ASSIGN_OR_RETURN(link.valid_from_unix_ms, f.Int("valid_from"));
  return link;
}

absl::StatusOr<Version> ReadVersion(const Fields& f) {
  RETURN_IF_ERROR(f.OnlyKnown({"version", "recorded_at", "superseded_at", "valid_from", "valid_to",
                               "type", "tags", "source", "importance", "body_json"}));
  Version v;
  ASSIGN_OR_RETURN(v.version, f.Int("version"));
  ASSIGN_OR_RETURN(v.recorded_at_unix_ms, f.Int("recorded_at"));
  ASSIGN_OR_RETURN(v.superseded_at_unix_ms, f.OptInt("superseded_at"));
  ASSIGN_OR_RETURN(v.valid_from_unix_ms, f.Int("valid_from"));
  ASSIGN_OR_RETURN(v.valid_to_unix_ms, f.OptInt("valid_to"));
  ASSIGN_OR_RETURN(v.type, f.String("type"));
  ASSIGN_OR_RETURN(const json* tags, f.Get("tags"));
  if (!tags->is_array()) return Fields::TypeError(f.Path("tags"), "an array of strings", *tags);
  for (size_t i = 0; i < tags->size(); ++i) {
    if (!(*tags)[i].is_string()) {
      return Fields::TypeError(absl::StrCat(f.Path("tags"), "[", i, "]"), "a string", (*tags)[i]);
    }
    v.tags.push_back((*tags)[i].get<std::string>());
  }
  ASSIGN_OR_RETURN(v.source, f.OptString("source"));
  ASSIGN_OR_RETURN(v.importance, f.OptDouble("importance"));
  ASSIGN_OR_RETURN(v.body_json, f.String("body_json"));
  return v;
}

}  // namespace

absl::Status AppendHeader(const Header& header, std::string& out) {
  LineWriter w(out);
  w.Open('{');
  w.Key("format").String(kFormat, "format");
  w.Key("format_version").Int(header.format_version);
  w.Key("strata_version").String(header.strata_version, "strata_version");
  w.Key("schema_version").Int(header.schema_version);
  w.Key("scope").Open('{');
  w.Key("workspace").OptString(header.scope.workspace, "scope.workspace");
  w.Key("category").OptString(header.scope.category, "scope.category");
  w.Key("as_of").OptInt(header.as_of_unix_ms);
  w.Close('}');
  w.Key("counts").Open('{');
  w.Key("memories").Int(header.counts.memories);
  w.Key("versions").Int(header.counts.versions);
  w.Key("retractions").Int(header.counts.retractions);
  w.Key("aliases").Int(header.counts.aliases);
  w.Key("supersessions").Int(header.counts.supersessions);
  w.Close('}');
  w.Close('}');
  out += '\n';
  return w.error();
}

absl::Status AppendRecord(const MemoryRecord& r, std::string& out) {
  const size_t start = out.size();
  LineWriter w(out);
  w.Open('{');
  w.Key("id").Int(r.id);
  w.IdentityFields(r.identity);
  w.Key("created_at").Int(r.created_at_unix_ms);
  w.Key("last_event_at").Int(r.last_event_at_unix_ms);
  w.Key("versions").Open('[');
  for (const Version& v : r.versions) {
    w.Open('{');
    w.Key("version").Int(v.version);
    w.Key("recorded_at").Int(v.recorded_at_unix_ms);
    w.Key("superseded_at").OptInt(v.superseded_at_unix_ms);
    w.Key("valid_from").Int(v.valid_from_unix_ms);
    w.Key("valid_to").OptInt(v.valid_to_unix_ms);
    w.Key("type").String(v.type, "type");
    w.Key("tags").Open('[');
    for (const std::string& tag : v.tags) w.String(tag, "a tag");
    w.Close(']');
    w.Key("source").OptString(v.source, "source");
    w.Key("importance").OptDouble(v.importance, "importance");
    w.Key("body_json").String(v.body_json, "body_json");
    w.Close('}');
  }
  w.Close(']');
  w.Key("retractions").Open('[');
  for (const temporal::RetractionRow& t : r.retractions) {
    w.Open('{');
    w.Key("at").Int(t.at_unix_ms);
    w.Key("reason").OptString(t.reason, "a forget reason");
    w.Close('}');
  }
  w.Close(']');
  w.Key("aliases").Open('[');
  for (const AliasRecord& a : r.aliases) {
    w.Open('{').IdentityFields(a.identity);
    w.Key("similarity").Double(a.similarity, "an alias similarity");
    w.Key("created_at").Int(a.created_at_unix_ms);
    w.Close('}');
  }
  w.Close(']');
  AppendLinks(w, "supersedes", r.supersedes);
  AppendLinks(w, "superseded_by", r.superseded_by);
  w.Close('}');
  out += '\n';
  if (!w.error().ok()) {
    out.resize(start);
    return absl::DataLossError(absl::StrCat("memory ", r.id, ": ", w.error().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Header> ParseHeader(std::string_view line) {
  ASSIGN_OR_RETURN(const json object, ParseObject(line));
  const Fields f(object, "");
  absl::StatusOr<std::string> format = f.String("format");
  if (!format.ok() || *format != kFormat) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a strata export: the first line must be a header with \"format\": \"", kFormat, "\""));
  }
  Header h;
  ASSIGN_OR_RETURN(h.format_version, f.Int("format_version"));
  if (h.format_version != kFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat("format_version: this strata reads version ",
                                                   kFormatVersion, ", got ", h.format_version,
                                                   "; import it with the strata that exported it"));
  }
  // The rest is informative; read what is there.
  if (auto v = f.String("strata_version"); v.ok()) h.strata_version = *v;
  if (auto v = f.Int("schema_version"); v.ok()) h.schema_version = *v;
  if (auto counts = object.find("counts"); counts != object.end() && counts->is_object()) {
    if (auto v = Fields(*counts, "counts").Int("memories"); v.ok()) h.counts.memories = *v;
  }
  return h;
}

absl::StatusOr<MemoryRecord> ParseRecord(std::string_view line) {
  ASSIGN_OR_RETURN(const json object, ParseObject(line));
  const Fields f(object, "");
  RETURN_IF_ERROR(
      f.OnlyKnown({"id", "category", "key", "workspace", "created_at", "last_event_at", "versions",
                   "retractions", "aliases", "supersedes", "superseded_by"}));
  MemoryRecord r;
  ASSIGN_OR_RETURN(r.id, f.Int("id"));
  ASSIGN_OR_RETURN(r.identity, f.IdentityFields());
  ASSIGN_OR_RETURN(r.created_at_unix_ms, f.Int("created_at"));
  ASSIGN_OR_RETURN(r.last_event_at_unix_ms, f.Int("last_event_at"));
  ASSIGN_OR_RETURN(r.versions, f.Objects<Version>("versions", ReadVersion));
  ASSIGN_OR_RETURN(
      r.retractions,
      f.Objects<temporal::RetractionRow>(
          "retractions", [](const Fields& t) -> absl::StatusOr<temporal::RetractionRow> {
            RETURN_IF_ERROR(t.OnlyKnown({"at", "reason"}));
            temporal::RetractionRow row;
            ASSIGN_OR_RETURN(row.at_unix_ms, t.Int("at"));
            ASSIGN_OR_RETURN(row.reason, t.OptString("reason"));
            return row;
          }));
  ASSIGN_OR_RETURN(
      r.aliases,
      f.Objects<AliasRecord>("aliases", [](const Fields& a) -> absl::StatusOr<AliasRecord> {
        RETURN_IF_ERROR(a.OnlyKnown({"category", "key", "workspace", "similarity", "created_at"}));
        AliasRecord alias;
        ASSIGN_OR_RETURN(alias.identity, a.IdentityFields());
        ASSIGN_OR_RETURN(alias.similarity, a.Double("similarity"));
        ASSIGN_OR_RETURN(alias.created_at_unix_ms, a.Int("created_at"));
        return alias;
      }));
  ASSIGN_OR_RETURN(r.supersedes, f.Objects<LinkRecord>("supersedes", ReadLink));
  ASSIGN_OR_RETURN(r.superseded_by, f.Objects<LinkRecord>("superseded_by", ReadLink));
  for (Version& v : r.versions) v.identity = r.identity;
  return r;
}

}  // namespace strata::transfer
