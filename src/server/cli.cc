#include "server/cli.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "embed/embedder.h"
#include "embed/model_manifest.h"
#include "embed/model_store.h"
#include "embed/registry.h"
#include "http/server.h"
#include "mcp/dispatcher.h"
#include "server/doctor.h"
#include "server/parent_watch.h"
#include "server/progress.h"
#include "server/stdio_loop.h"
#include "strata/strata.h"
#include "tools/registry.h"
#include "util/time_parse.h"
#include "util/xdg.h"

namespace strata::server {
namespace {

using nlohmann::json;

struct CommandLine {
  std::string command = "serve";
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // --name value / --name=value
  bool json_output = false;
};

// What a command needs before it runs; Main provides it.
enum class Needs {
  kNothing,  // No store: encode, model.
  kDbPath,   // The database's path, its directory made: restore.
  // The store opened without an embedder: moving memories in and out needs no vectors (the
  // server or `embed` makes them later).
  kStoreWithoutVectors,
  kStore,         // The store; vectors are made only when a command asks.
  kServingStore,  // The store, embedding new memories in the background: serve.
};

// What Main hands a command.
struct Invocation {
  const CommandLine& cl;
  const std::string& db_path;
  Store* store;  // Null unless the command needs one; not owned.
  const tools::RegistryOptions& registry_options;
  const StdioOptions& stdio_options;
  pid_t parent;            // Read at start (ParentWatch).
  ServeHttpFn serve_http;  // Null when this binary does not serve HTTP.
};

struct Command {
  std::string_view name;
  std::string_view usage;  // Its lines of `strata --help`, under "usage:".
  Needs needs;
  int (*run)(const Invocation& in);
};

bool IsFlag(const std::string& name) {
  return name == "json" || name == "help" || name == "version" || name == "force" ||
         name == "allow-unconfirmed";
}

bool Parse(int argc, char** argv, CommandLine& out, std::string& error) {
  bool command_seen = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
      std::string name = arg.substr(2);
      std::string value;
      if (const size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (IsFlag(name)) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        error = absl::StrCat("--", name, " needs a value");
        return false;
      }
      if (name == "json") {
        out.json_output = true;
      } else {
        out.options[name] = value;
      }
    } else if (!command_seen && out.positional.empty()) {
      out.command = arg;
      command_seen = true;
    } else {
      out.positional.push_back(arg);
    }
  }
  return true;
}

std::string DefaultDbPath() {
  if (const char* env = std::getenv("STRATA_DB"); env && *env) return env;
  return (XdgBaseDir("XDG_DATA_HOME", ".local/share") / "strata" / "memory.db").string();
}

// Where a node of a PostgreSQL store saves its vector index.
std::string DefaultIndexDir() {
  return (XdgBaseDir("XDG_CACHE_HOME", ".cache") / "strata" / "index").string();
}

std::string Option(const CommandLine& cl, const std::string& name,
                   const std::string& fallback = "") {
  auto it = cl.options.find(name);
  return it == cl.options.end() ? fallback : it->second;
}

// --foo-bar value -> args["foo_bar"] = value, for the options a command takes.
void CopyOptions(const CommandLine& cl, std::initializer_list<const char*> names, json& args) {
  for (const char* name : names) {
    auto it = cl.options.find(name);
    if (it == cl.options.end()) continue;
    std::string key = name;
    for (char& c : key) {
      if (c == '-') c = '_';
    }
    if (key == "tags") {
      args[key] = absl::StrSplit(it->second, ',', absl::SkipEmpty());
    } else if (key == "limit") {
      args[key] = it->second;  // Numeric strings are accepted by the tools.
    } else {
      args[key] = it->second;
    }
  }
}

std::string Time(const json& v) { return v.is_number() ? FormatUnixMs(v.get<int64_t>()) : "open"; }

std::string Preview(const json& version, size_t max_chars) {
  const json& body = version["body"];
  std::string text;
  if (body.is_string()) {
    text = body.get<std::string>();
  } else if (body.is_object() && body.contains("text") && body["text"].is_string()) {
    text = body["text"].get<std::string>();
  } else {
    text = version["body_json"].get<std::string>();
  }
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "...";
  return text;
}

// `supersedes` of remember from --supersedes CATEGORY/KEY (split at the first '/') or
// --supersedes-category and --supersedes-key; false (with `error`) when malformed.
bool SupersedesOption(const CommandLine& cl, json& args, std::string& error) {
  const std::string both = Option(cl, "supersedes");
  const std::string category = Option(cl, "supersedes-category");
  const std::string key = Option(cl, "supersedes-key");
  if (both.empty() && category.empty() && key.empty()) return true;
  if (!both.empty()) {
    const size_t slash = both.find('/');
    if (!category.empty() || !key.empty() || slash == std::string::npos || slash == 0 ||
        slash + 1 == both.size()) {
      error = "--supersedes: give CATEGORY/KEY (or --supersedes-category and --supersedes-key)";
      return false;
    }
    args["supersedes"] = {{"category", both.substr(0, slash)}, {"key", both.substr(slash + 1)}};
    return true;
  }
  if (category.empty() || key.empty()) {
    error = "--supersedes-category and --supersedes-key: give both";
    return false;
  }
  args["supersedes"] = {{"category", category}, {"key", key}};
  return true;
}

// "category/key" of a link in the results of remember and history.
std::string LinkName(const json& link) {
  return link["category"].get<std::string>() + "/" + link["key"].get<std::string>();
}

void PrintRemembered(const json& r) {
  std::cout << r["action"].get<std::string>() << " " << r["category"].get<std::string>() << "/"
            << r["key"].get<std::string>() << " (id " << r["id"] << ", version " << r["version"]
            << ", recorded " << Time(r["recorded_at"]) << ")\n";
  if (r.contains("merged_into")) {
    std::printf("  merged into %s/%s: %.0f%% similar\n",
                r["merged_into"]["category"].get<std::string>().c_str(),
                r["merged_into"]["key"].get<std::string>().c_str(),
                r["similarity"].get<double>() * 100);
  }
  if (r.contains("similar")) {
    for (const json& m : r["similar"]) {
      std::printf("  similar to %s: %.0f%% (kept: it adds to it)\n", LinkName(m).c_str(),
                  m["similarity"].get<double>() * 100);
    }
  }
  if (r.contains("supersedes")) std::cout << "  supersedes " << LinkName(r["supersedes"]) << "\n";
}

void PrintRecalled(const json& r) {
  if (r["items"].empty()) std::cout << "no memories found\n";
  int n = 0;
  for (const json& item : r["items"]) {
    std::printf("%2d. %s/%s  (score %.3f, v%lld)\n    %s\n", ++n,
                item["category"].get<std::string>().c_str(), item["key"].get<std::string>().c_str(),
                item["score"].get<double>(), static_cast<long long>(item["version"].get<int64_t>()),
                Preview(item, 160).c_str());
  }
}

void PrintHistory(const json& r) {
  if (!r["found"].get<bool>()) {
    std::cout << "no memory " << r["category"].get<std::string>() << "/"
              << r["key"].get<std::string>() << "\n";
    return;
  }
  std::cout << r["category"].get<std::string>() << "/" << r["key"].get<std::string>() << ": "
            << r["total"] << " version(s), newest first\n";
  for (const json& v : r["versions"]) {
    std::cout << "  v" << v["version"] << "  believed " << Time(v["recorded_at"]) << " .. "
              << Time(v["superseded_at"]) << "\n      true " << Time(v["valid_from"]) << " .. "
              << Time(v["valid_to"]) << "\n      " << Preview(v, 160) << "\n";
  }
  for (const json& t : r["forgotten_at"]) std::cout << "  forgotten at " << Time(t) << "\n";
  for (const json& link : r["successors"]) {
    std::cout << "  superseded by " << LinkName(link) << " at " << Time(link["at"]) << "\n";
  }
  for (const json& link : r["predecessors"]) {
    std::cout << "  supersedes " << LinkName(link) << " since " << Time(link["at"]) << "\n";
  }
}

void PrintStats(const json& r) {
  std::cout << "memories: " << r["active_memories"] << " active, " << r["forgotten_memories"]
            << " forgotten; versions: " << r["versions"] << "\n";
  for (const auto& [category, count] : r["by_category"].items()) {
    std::cout << "  " << category << ": " << count << "\n";
  }
  const std::string path = r["path"].get<std::string>();
  if (IsPostgresUri(path)) {
    std::cout << "database: " << path << " (PostgreSQL, " << r["db_file_size_bytes"]
              << " bytes, schema v" << r["schema_version"] << ")\n";
    return;
  }
  std::cout << "database: " << path << " (" << r["db_file_size_bytes"] << " bytes, WAL "
            << r["wal_file_size_bytes"] << " bytes, schema v" << r["schema_version"]
            << ", durability " << r["durability"].get<std::string>() << ")\n";
}

// The tool of the command's name called with `args`, its result printed by `print` (or, with
// --json, as JSON).
int RunTool(const Invocation& in, const json& args, void (*print)(const json&)) {
  const std::string& c = in.cl.command;
  tools::ToolRegistry registry(in.store, in.registry_options);
  auto tool = registry.Find(c);
  absl::StatusOr<json> result = registry.Call(*tool, args);
  if (!result.ok()) {
    std::cerr << "strata " << c << ": " << result.status().message() << "\n";
    return 1;
  }
  if (in.cl.json_output) {
    std::cout << result->dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    print(*result);
  }
  return 0;
}

int RunRemember(const Invocation& in) {
  const CommandLine& cl = in.cl;
  json args = json::object();
  CopyOptions(cl,
              {"category", "key", "body-json", "type", "tags", "workspace", "valid-from",
               "valid-to", "source", "dedup"},
              args);
  if (cl.options.count("body")) args["body"] = Option(cl, "body");
  if (std::string error; !SupersedesOption(cl, args, error)) {
    std::cerr << "strata remember: " << error << "\n";
    return 2;
  }
  return RunTool(in, args, PrintRemembered);
}

int RunRecall(const Invocation& in) {
  const CommandLine& cl = in.cl;
  json args = json::object();
  std::string query;
  for (const std::string& word : cl.positional)
    absl::StrAppend(&query, query.empty() ? "" : " ", word);
  args["query"] = query;
  CopyOptions(cl, {"limit", "category", "type", "tags", "workspace", "as-of", "valid-at", "mode"},
              args);
  return RunTool(in, args, PrintRecalled);
}

int RunHistory(const Invocation& in) {
  const CommandLine& cl = in.cl;
  if (cl.positional.size() != 2) {
    std::cerr << "strata history: give CATEGORY and KEY\n";
    return 2;
  }
  json args = {{"category", cl.positional[0]}, {"key", cl.positional[1]}};
  CopyOptions(cl, {"workspace", "limit"}, args);
  return RunTool(in, args, PrintHistory);
}

int RunStats(const Invocation& in) { return RunTool(in, json::object(), PrintStats); }

int RunRebuildSignatures(const Invocation& in) {
  absl::StatusOr<int64_t> indexed = in.store->RebuildSignatures();
  if (!indexed.ok()) {
    std::cerr << "strata rebuild-signatures: " << indexed.status().message() << "\n";
    return 1;
  }
  std::cout << "indexed " << *indexed << " current memories\n";
  return 0;
}

// Parses a positive integer option; 0 when it is malformed.
int64_t PositiveOption(const CommandLine& cl, const std::string& name, int64_t fallback) {
  const std::string text = Option(cl, name);
  if (text.empty()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return end != text.c_str() && *end == '\0' && v > 0 ? v : 0;
}

int RunEmbed(const Invocation& in) {
  const CommandLine& cl = in.cl;
  Store& store = *in.store;
  EmbedRequest request{.limit = PositiveOption(cl, "limit", int64_t{1} << 40)};
  if (request.limit == 0) {
    std::cerr << "strata embed: --limit must be a positive integer\n";
    return 2;
  }
  if (const std::string category = Option(cl, "category"); !category.empty()) {
    request.category = category;
  }
  ProgressLine progress("embedded");
  absl::StatusOr<EmbedResult> r = store.Embed(
      request, {.progress = [&](int64_t done, int64_t total) { progress.Update(done, total); }});
  progress.Finish();
  if (!r.ok()) {
    std::cerr << "strata embed: " << r.status().message() << "\n";
    return 1;
  }
  std::cout << "embedded " << r->embedded << ", failed " << r->failed << ", remaining "
            << r->remaining << "\n";
  if (!r->error.empty()) std::cerr << "strata embed: " << r->error << "\n";
  return r->failed > 0 ? 1 : 0;
}

int RunCheckIndex(const Invocation& in) {
  const CommandLine& cl = in.cl;
  Store& store = *in.store;
  const int64_t queries = PositiveOption(cl, "queries", 100);
  if (queries == 0 || queries > 100000) {
    std::cerr << "strata check-index: --queries must be an integer in [1, 100000]\n";
    return 2;
  }
  // The index loads or builds in the background; wait for it (progress on stderr).
  while (true) {
    absl::StatusOr<Stats> stats = store.GetStats();
    if (!stats.ok() || !stats->embeddings) break;
    if (stats->embeddings->index_state == "ready") break;
    std::cerr << "waiting for the vector index (" << stats->embeddings->index_state << ")\n";
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  absl::StatusOr<IndexCheck> check = store.CheckIndex(static_cast<int>(queries), 10);
  if (!check.ok()) {
    std::cerr << "strata check-index: " << check.status().message() << "\n";
    return 1;
  }
  std::cout << "recall@10 " << check->recall << " over " << queries << " queries ("
            << check->epsilon_recall
            << " of the results within 1% of the exact 10th nearest's distance)\n";
  return 0;
}

int RunExport(const Invocation& in) {
  const CommandLine& cl = in.cl;
  Store& store = *in.store;
  ExportOptions options;
  if (cl.options.count("workspace")) options.workspace = Option(cl, "workspace");
  if (cl.options.count("category")) options.category = Option(cl, "category");
  if (const std::string as_of = Option(cl, "as-of"); !as_of.empty()) {
    absl::StatusOr<int64_t> t = ParseTimeText(as_of, "--as-of");
    if (!t.ok()) {
      std::cerr << "strata export: " << t.status().message() << "\n";
      return 2;
    }
    options.as_of_unix_ms = *t;
  }
  ProgressLine progress("exported");
  options.progress = [&progress](int64_t done, int64_t total) { progress.Update(done, total); };
  const std::string out_path = Option(cl, "out", "-");
  std::ofstream file;
  if (out_path != "-") {
    file.open(out_path, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "strata export: cannot write " << out_path << "\n";
      return 1;
    }
  }
  std::ostream& out = out_path == "-" ? std::cout : file;
  absl::StatusOr<ExportSummary> summary = store.Export(options, out);
  progress.Finish();
  if (summary.ok() && file.is_open()) {
    file.close();
    if (!file) summary = absl::UnavailableError(absl::StrCat("cannot write ", out_path));
  }
  if (!summary.ok()) {
    std::cerr << "strata export: " << summary.status().message() << "\n";
    // A partial export is no export.
    if (out_path != "-") {
      std::error_code ec;
      std::filesystem::remove(out_path, ec);
    }
    return 1;
  }
  std::cerr << "exported " << summary->memories << " memories, " << summary->versions
            << " versions\n";
  return 0;
}

std::string ImportCounts(const ImportSummary& s) {
  return absl::StrCat("read ", s.read, ", created ", s.created, ", unchanged ", s.unchanged,
                      ", updated ", s.updated, ", failed ", s.failed);
}

// The format to read `path` as: --from, else what the file looks like ("-" is a strata
// export); nullopt (with the message printed) when neither says.
std::optional<ImportFormat> ImportFormatOf(const CommandLine& cl, const std::string& path) {
  if (const std::string from = Option(cl, "from"); !from.empty()) {
    std::optional<ImportFormat> format = ImportFormatNamed(from);
    if (!format) {
      std::cerr << "strata import: --from must be strata, server-memory, markdown, csv or jsonl, "
                   "got \""
                << from << "\"\n";
    }
    return format;
  }
  if (path == "-") return ImportFormat::kStrata;
  absl::StatusOr<ImportFormat> detected = DetectImportFormat(path);
  if (!detected.ok()) {
    std::cerr << "strata import: " << detected.status().message() << "\n";
    return std::nullopt;
  }
  return *detected;
}

int RunImport(const Invocation& in) {
  const CommandLine& cl = in.cl;
  Store& store = *in.store;
  if (cl.positional.size() != 1) {
    std::cerr << "strata import: give one FILE (or - for stdin)\n";
    return 2;
  }
  const std::string on_error = Option(cl, "on-error", "stop");
  if (on_error != "stop" && on_error != "skip") {
    std::cerr << "strata import: --on-error must be stop or skip, got \"" << on_error << "\"\n";
    return 2;
  }
  const std::string& path = cl.positional[0];
  const std::optional<ImportFormat> format = ImportFormatOf(cl, path);
  if (!format) return 2;
  if (*format != ImportFormat::kStrata && path == "-") {
    std::cerr << "strata import: " << ImportFormatDescription(*format)
              << " is read from a FILE, not stdin\n";
    return 2;
  }
  if (*format == ImportFormat::kStrata &&
      (cl.options.count("category") || cl.options.count("workspace"))) {
    std::cerr << "strata import: a strata export keeps its own categories and workspaces; "
                 "--category and --workspace are for the other formats\n";
    return 2;
  }
  if (path != "-")
    std::cerr << "importing " << path << " as " << ImportFormatDescription(*format) << "\n";
  ProgressLine progress("imported");
  const ImportOptions options{
      .stop_on_error = on_error == "stop",
      .on_error =
          [&progress](const SourceLine& at, const absl::Status& error) {
            progress.Finish();
            std::cerr << "strata import: "
                      << (at.file.empty() ? absl::StrCat("line ", at.line)
                                          : absl::StrCat(at.file, ":", at.line))
                      << ": " << error.message() << "\n";
          },
      .progress = [&progress](const ImportSummary& s) { progress.Update(s.read, s.expected); }};
  absl::StatusOr<ImportSummary> summary;
  if (*format == ImportFormat::kStrata) {
    std::ifstream file;
    if (path != "-") {
      file.open(path, std::ios::binary);
      if (!file) {
        std::cerr << "strata import: cannot read " << path << "\n";
        return 1;
      }
    }
    summary = store.Import(path == "-" ? std::cin : file, options);
  } else {
    ForeignImport what{.format = *format, .path = path, .workspace = Option(cl, "workspace")};
    if (cl.options.count("category")) what.default_category = Option(cl, "category");
    summary = store.ImportForeign(what, options);
  }
  progress.Finish();
  if (!summary.ok()) {
    std::cerr << "strata import: " << summary.status().message() << "\n";
    return 1;
  }
  std::cerr << "import "
            << (summary->stopped ? "stopped at the first bad record (its batch "
                                   "was not written): "
                                 : "done: ")
            << ImportCounts(*summary) << "\n";
  return summary->failed > 0 ? 1 : 0;
}

int RunBackup(const Invocation& in) {
  const CommandLine& cl = in.cl;
  Store& store = *in.store;
  if (cl.positional.size() != 1) {
    std::cerr << "strata backup: give the PATH to write\n";
    return 2;
  }
  if (absl::Status s = store.Backup(cl.positional[0], cl.options.count("force") > 0); !s.ok()) {
    std::cerr << "strata backup: " << s.message() << "\n";
    return 1;
  }
  std::cout << "backed up to " << cl.positional[0] << "\n";
  return 0;
}

int RunRestore(const Invocation& in) {
  const CommandLine& cl = in.cl;
  const std::string& db_path = in.db_path;
  if (cl.positional.size() != 1) {
    std::cerr << "strata restore: give the backup's PATH\n";
    return 2;
  }
  if (IsPostgresUri(db_path)) {
    std::cerr << "strata restore: replaces a SQLite file; bring a backup into a PostgreSQL "
                 "store with `strata import` (from an export) or pg_restore\n";
    return 2;
  }
  if (absl::Status s = RestoreBackup(cl.positional[0], db_path); !s.ok()) {
    std::cerr << "strata restore: " << s.message() << "\n";
    return 1;
  }
  std::cout << "restored " << db_path << " from " << cl.positional[0] << "\n";
  return 0;
}

// `strata encode`: the embedder alone, for checking a model or comparing vectors by hand.
int RunEncode(const Invocation& in) {
  const CommandLine& cl = in.cl;
  if (cl.positional.empty()) {
    std::cerr << "strata encode: give at least one TEXT\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<embed::Embedder>> embedder =
      embed::MakeEmbedder(Option(cl, "embedder", embed::kDefaultEmbedderSpec));
  if (!embedder.ok()) {
    std::cerr << "strata encode: " << embedder.status().message() << "\n";
    return 1;
  }
  if (*embedder == nullptr) {
    std::cerr << "strata encode: embedder none gives no vectors\n";
    return 1;
  }
  const std::string role = Option(cl, "role", "document");
  if (role != "document" && role != "query") {
    std::cerr << "strata encode: --role must be document or query, got \"" << role << "\"\n";
    return 2;
  }
  const embed::EmbedderInfo& info = (*embedder)->info();
  const size_t dim = static_cast<size_t>(info.dimension);
  const absl::StatusOr<std::vector<float>> out = embed::EmbedAll(
      **embedder, cl.positional, role == "query" ? embed::Role::kQuery : embed::Role::kDocument);
  if (!out.ok()) {
    std::cerr << "strata encode: " << out.status().message() << "\n";
    return 1;
  }
  json vectors = json::array();
  for (size_t i = 0; i < cl.positional.size(); ++i) {
    vectors.push_back(std::vector<float>(out->begin() + i * dim, out->begin() + (i + 1) * dim));
  }
  const nlohmann::ordered_json line = {
      {"embedder", info.Fingerprint()}, {"dim", info.dimension}, {"vectors", std::move(vectors)}};
  std::cout << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  return 0;
}

// The model hub's base URL. Empty until the maintainer who confirms the manifest's cards
// compiles it in with them (docs/decisions.md); meanwhile $STRATA_MODEL_ENDPOINT names it.
constexpr char kDefaultModelEndpoint[] = "";
constexpr int kDefaultModelTimeoutSeconds = 30;

void PrintInstall(const embed::ModelCard& card, const embed::InstallReport& report) {
  std::cout << "installed " << card.name << " in " << report.dir.string() << "\n";
  if (card.confirmed) return;
  // What a maintainer records to confirm the card.
  std::cout << "files as installed (unconfirmed: check them against the hub):\n";
  for (const embed::ModelFile& file : report.files) {
    std::cout << "  " << file.path << "  " << file.size << "  " << file.sha256 << "\n";
  }
}

void WarnUnconfirmed(const embed::ModelCard& card) {
  std::cerr << "strata model: WARNING: the manifest entry for " << card.name
            << " is UNCONFIRMED: its revision is not pinned and no size or SHA-256 is recorded, "
               "so nothing checks that these bytes are the model's\n";
}

// `strata model list|fetch NAME|import NAME DIR|verify NAME`.
int RunModel(const Invocation& in) {
  const CommandLine& cl = in.cl;
  const std::string what = cl.positional.empty() ? "" : cl.positional[0];
  const size_t operands = what == "list" ? 1 : what == "import" ? 3 : 2;
  if ((what != "list" && what != "fetch" && what != "import" && what != "verify") ||
      cl.positional.size() != operands) {
    std::cerr << "strata model: give list, fetch NAME, import NAME DIR or verify NAME\n";
    return 2;
  }
  absl::StatusOr<std::vector<embed::ModelCard>> cards = embed::LoadManifest();
  if (!cards.ok()) {
    std::cerr << "strata model: " << cards.status().message() << "\n";
    return 1;
  }
  const std::filesystem::path cache_dir = embed::ModelCacheDir();
  if (what == "list") {
    for (const embed::ModelCard& card : *cards) {
      const bool installed = embed::InstalledModelDir(cache_dir, card.name).ok();
      std::cout << card.name << "  dim " << card.dimension << ", " << card.pooling << " pooling, "
                << card.repository << "@" << card.revision << ", "
                << (card.confirmed ? "confirmed" : "UNCONFIRMED (no checked hashes)") << ", "
                << (installed ? "installed" : "not installed") << "\n";
      if (!card.query_prefix.empty()) {
        std::cout << "  query prefix \"" << card.query_prefix << "\"\n";
      }
      if (!card.document_prefix.empty()) {
        std::cout << "  document prefix \"" << card.document_prefix << "\"\n";
      }
    }
    std::cout << "cache: " << cache_dir.string() << "\n";
    return 0;
  }
  const embed::ModelCard* card = embed::FindModel(*cards, cl.positional[1]);
  if (card == nullptr) {
    std::cerr << "strata model: no model \"" << cl.positional[1]
              << "\" in the manifest (strata model list names them)\n";
    return 2;
  }
  const bool allow_unconfirmed = cl.options.count("allow-unconfirmed") > 0;
  if (!card->confirmed && allow_unconfirmed && what != "verify") WarnUnconfirmed(*card);
  absl::StatusOr<embed::InstallReport> installed;
  if (what == "fetch") {
    embed::FetchOptions options{
        .endpoint = kDefaultModelEndpoint,
        .cache_dir = cache_dir,
        .stall_timeout_seconds = kDefaultModelTimeoutSeconds,
        .allow_unconfirmed = allow_unconfirmed,
        .log = [](std::string_view line) { std::cerr << "strata model: " << line << "\n"; }};
    if (const char* endpoint = std::getenv("STRATA_MODEL_ENDPOINT"); endpoint && *endpoint) {
      options.endpoint = endpoint;
    }
    if (options.endpoint.empty()) {
      std::cerr << "strata model fetch: set STRATA_MODEL_ENDPOINT to the model hub's base URL "
                   "(none is compiled in yet), or download the files by hand and use "
                   "strata model import NAME DIR\n";
      return 2;
    }
    if (const char* timeout = std::getenv("STRATA_MODEL_TIMEOUT"); timeout && *timeout) {
      options.stall_timeout_seconds = std::max(1, std::atoi(timeout));
    }
    installed = embed::FetchModel(*card, options);
  } else if (what == "import") {
    installed = embed::ImportModel(*card, cl.positional[2], cache_dir, allow_unconfirmed);
  } else {
    absl::StatusOr<embed::VerifyReport> verified = embed::VerifyModel(*card, cache_dir);
    if (!verified.ok()) {
      std::cerr << "strata model verify: " << verified.status().message() << "\n";
      return 1;
    }
    std::cout << card->name << " in " << verified->dir.string() << ": files "
              << (card->confirmed ? "match the manifest" : "present (unconfirmed: not checked)")
              << ", dimension " << verified->dimension << ", ";
    if (verified->known_answer_cosine) {
      std::cout << "known-answer cosine " << *verified->known_answer_cosine << "\n";
    } else {
      std::cout << "no known-answer vector recorded\n";
    }
    return 0;
  }
  if (!installed.ok()) {
    std::cerr << "strata model " << what << ": " << installed.status().message() << "\n";
    return 1;
  }
  PrintInstall(*card, *installed);
  return 0;
}

// Opens the store its own way, creating and migrating nothing.
int RunDoctorCommand(const Invocation& in) {
  return RunDoctor({.path = in.db_path,
                    .embedder = Option(in.cl, "embedder", "builtin")});
}

int RunServe(const Invocation& in) {
  tools::ToolRegistry registry(in.store, in.registry_options);
  const std::string address = Option(in.cl, "http");
  const http::JwtSettings jwt{.jwks_file = Option(in.cl, "auth-jwks"),
                              .issuer = Option(in.cl, "auth-issuer"),
                              .audience = Option(in.cl, "auth-audience")};
  if (address.empty() &&
      (!Option(in.cl, "auth-token-file").empty() || !Option(in.cl, "allow-origin").empty() ||
       !jwt.jwks_file.empty() || !jwt.issuer.empty() || !jwt.audience.empty())) {
    std::cerr << "strata: --auth-token-file, --auth-jwks, --auth-issuer, --auth-audience and "
                 "--allow-origin go with serve --http\n";
    return 2;
  }
  if ((!jwt.jwks_file.empty() || !jwt.issuer.empty() || !jwt.audience.empty()) &&
      (jwt.jwks_file.empty() || jwt.issuer.empty() || jwt.audience.empty())) {
    std::cerr << "strata: JWT access tokens need all three of --auth-jwks FILE, --auth-issuer "
                 "URL and --auth-audience URL\n";
    return 2;
  }
  if (!address.empty()) {
    return in.serve_http(registry, {.address = address,
                                    .token_file = Option(in.cl, "auth-token-file"),
                                    .jwt = jwt,
                                    .allowed_origins = absl::StrSplit(Option(in.cl, "allow-origin"),
                                                                      ',', absl::SkipEmpty()),
                                    .max_body_bytes = in.stdio_options.max_line_bytes,
                                    .db_path = in.db_path});
  }
  InstallSignalHandlers();
  // A host that dies without closing our stdin still ends the server.
  absl::StatusOr<std::unique_ptr<ParentWatch>> parent_watch = ParentWatch::Start(in.parent);
  if (!parent_watch.ok()) {
    std::cerr << "strata: not watching the parent process: " << parent_watch.status().message()
              << "\n";
  }
  mcp::Dispatcher dispatcher(&registry, mcp::DispatcherOptions{});
  std::cerr << "strata " << kVersion << ": serving MCP on stdio, database "
            << RedactedStorePath(in.db_path) << "\n";
  return ServeStdio(dispatcher, STDIN_FILENO, STDOUT_FILENO, in.stdio_options);
}

// The commands, in the order `strata --help` lists them: usage, validation and dispatch all
// read this table.
// clang-format off
constexpr Command kCommands[] = {
    {"serve",
      "  strata [serve] [options]          speak MCP on stdin/stdout (what an agent host runs)\n"
      "  strata serve --http HOST:PORT [--auth-token-file FILE] [--allow-origin ORIGIN,...]\n"
      "               [--auth-jwks FILE --auth-issuer URL --auth-audience URL]\n"
      "                                    speak MCP over HTTP at http://HOST:PORT/mcp (README\n"
      "                                    \"MCP over HTTP\"); loopback only without tokens\n",
     Needs::kServingStore, RunServe},
    {"remember",
      "  strata remember --category C --key K (--body TEXT | --body-json JSON)\n"
      "                  [--type T] [--tags a,b] [--workspace W] [--valid-from T] [--valid-to T]\n"
      "                  [--supersedes CATEGORY/KEY | --supersedes-category C --supersedes-key K]\n",
     Needs::kStore, RunRemember},
    {"recall",
      "  strata recall [QUERY] [--limit N] [--category C] [--type T] [--tags a,b]\n"
      "                [--workspace W] [--as-of T] [--valid-at T]\n",
     Needs::kStore, RunRecall},
    {"history",
      "  strata history CATEGORY KEY [--workspace W] [--limit N]\n",
     Needs::kStore, RunHistory},
    {"stats",
      "  strata stats\n",
     Needs::kStore, RunStats},
    {"rebuild-signatures",
      "  strata rebuild-signatures         recompute near-duplicate signatures (after an upgrade)\n",
     Needs::kStore, RunRebuildSignatures},
    {"embed",
      "  strata embed [--category C] [--limit N]\n"
      "                                    give vectors now to memories without one (progress on\n"
      "                                    stderr; the server also does this in the background)\n",
     Needs::kStore, RunEmbed},
    {"encode",
      "  strata encode [--embedder SPEC] [--role document|query] TEXT...\n"
      "                                    print the vectors the embedder gives each TEXT (as a\n"
      "                                    stored memory, the default, or as a query), as one\n"
      "                                    JSON line {\"embedder\", \"dim\", \"vectors\"}; no database\n",
     Needs::kNothing, RunEncode},
    {"model",
      "  strata model list                 the models strata knows, whether each is installed\n"
      "  strata model fetch NAME [--allow-unconfirmed]\n"
      "                                    download a model from the hub ($STRATA_MODEL_ENDPOINT)\n"
      "                                    into $XDG_CACHE_HOME/strata/models/NAME, resumable and\n"
      "                                    checked against the manifest's sizes and SHA-256 digests\n"
      "  strata model import NAME DIR [--allow-unconfirmed]\n"
      "                                    check and install a model's files downloaded by hand\n"
      "  strata model verify NAME          check an installed model's files and its vector for a\n"
      "                                    fixed input against the manifest\n",
     Needs::kNothing, RunModel},
    {"check-index",
      "  strata check-index [--queries N]  the vector index's recall@10 against an exact scan\n",
     Needs::kStore, RunCheckIndex},
    {"export",
      "  strata export [--out FILE|-] [--workspace W] [--category C] [--as-of T]\n"
      "                                    write every memory, all versions and both time axes, as\n"
      "                                    JSONL (default: to stdout), or the store as believed at T;\n"
      "                                    see README \"Export and import\"\n",
     Needs::kStoreWithoutVectors, RunExport},
    {"import",
      "  strata import FILE|- [--from KIND] [--on-error stop|skip] [--category C] [--workspace W]\n"
      "                                    restore an export, or bring in another memory's file:\n"
      "                                    KIND strata, server-memory, markdown (a file or folder),\n"
      "                                    csv or jsonl, detected when not given; a record already\n"
      "                                    there is unchanged; a bad one is reported by line and\n"
      "                                    stops the import (stop, the default) or is skipped\n",
     Needs::kStoreWithoutVectors, RunImport},
    {"doctor",
      "  strata doctor                     check the store: a SQLite file (integrity, schema,\n"
      "                                    counts, WAL, signatures, embedding backlog, vector\n"
      "                                    index file) or a PostgreSQL database (reachable,\n"
      "                                    schema, counts); a line per check, exit 1 on an error\n",
     Needs::kNothing, RunDoctorCommand},
    {"backup",
      "  strata backup PATH [--force]      a consistent copy of the database while servers write\n",
     Needs::kStoreWithoutVectors, RunBackup},
    {"restore",
      "  strata restore PATH               replace the --db file with a backup; refused while a\n"
      "                                    server has it open\n",
     Needs::kDbPath, RunRestore},
};
// clang-format on

constexpr char kUsageHead[] = R"(strata: a memory store for AI agents (MCP over stdio)

usage:
)";
constexpr char kUsageTail[] = R"(  strata --version | --help

options:
  --db PATH              the database file (default: $STRATA_DB, else
                         $XDG_DATA_HOME/strata/memory.db, else ~/.local/share/strata/memory.db)
  --store PATH|URI       the store: a SQLite file as --db, or a PostgreSQL database
                         (postgresql://USER@HOST/DB?...), which many strata nodes can serve
  --index-dir DIR        where a PostgreSQL store's node saves its vector index (default
                         $XDG_CACHE_HOME/strata/index, else ~/.cache/strata/index)
  --durability MODE      normal (default): an acknowledged write survives a crash of strata;
                         full: it also survives power loss
  --compat perseus-vault list tools under their Perseus Vault names
  --tool-prefix P        list canonical tools as P<name>
  --max-line-bytes N     longest accepted MCP message (default 8388608)
  --dedup-threshold X    merge a new memory that adds nothing into one whose text is at
                         least this similar (character-trigram Jaccard, default 0.70)
  --embedder SPEC        who turns text into vectors for dense and hybrid recall: builtin
                         (default; no model, no network), openai:url=U,model=M,dim=N,
                         ollama:url=U,model=M,dim=N, bert:dir=PATH (a sentence-
                         transformers BERT directory, run natively; its Linear
                         layers in int8 where the CPU has SIMD for it, int8=0 for
                         fp32), bert:model=NAME (one installed by
                         strata model), or none (keyword recall only);
                         every one but none also takes query_prefix=TEXT and
                         document_prefix=TEXT (bert:model=NAME: its manifest's prefixes)
  --json                 print the tool's JSON result instead of text
Times (T) are unix milliseconds or ISO-8601, e.g. 2026-03-01 or 2026-03-01T12:00:00Z.
)";

// `strata --help`: the head, each command's lines, the options.
std::string Usage() {
  std::string usage = kUsageHead;
  for (const Command& command : kCommands) usage += command.usage;
  return usage + kUsageTail;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

}  // namespace

// Replaces this process with strata-http from the directory of this binary, given `argv`.
// Returns only when that fails, with the exit code.
int ExecHttpServer(char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path server = self.parent_path() / "strata-http";
  if (!ec) execv(server.c_str(), argv);
  std::cerr << "strata: serve --http runs " << server.string()
            << ", which could not be started: " << std::strerror(errno) << "\n";
  return 1;
}

int Main(int argc, char** argv, ServeHttpFn serve_http) {
  // Read first: the parent may die while the store opens (see ParentWatch::Start).
  const pid_t parent = getppid();
  CommandLine cl;
  std::string error;
  if (!Parse(argc, argv, cl, error)) {
    std::cerr << "strata: " << error << "\n";
    return 2;
  }
  if (cl.options.count("version")) {
    std::cout << "strata " << kVersion << "\n";
    return 0;
  }
  if (cl.options.count("help") || cl.command == "help") {
    std::cout << Usage();
    return 0;
  }
  const Command* command = FindCommand(cl.command);
  if (command == nullptr) {
    std::cerr << "strata: unknown command \"" << cl.command << "\"\n\n" << Usage();
    return 2;
  }
  if (command->run == RunServe && serve_http == nullptr && !Option(cl, "http").empty()) {
    return ExecHttpServer(argv);
  }
  if (cl.options.count("db") && cl.options.count("store")) {
    std::cerr << "strata: give --db PATH or --store PATH|URI, not both\n";
    return 2;
  }
  StoreOptions store_options{.path = Option(cl, "store", Option(cl, "db", DefaultDbPath())),
                             .index_dir = Option(cl, "index-dir", DefaultIndexDir()),
                             .embedder = Option(cl, "embedder", "builtin"),
                             .background_work = command->needs == Needs::kServingStore};
  const std::string durability = Option(cl, "durability", "normal");
  if (durability == "full") {
    store_options.durability = Durability::kFull;
  } else if (durability != "normal") {
    std::cerr << "strata: --durability must be normal or full, got \"" << durability << "\"\n";
    return 2;
  }
  tools::RegistryOptions registry_options{.prefix = Option(cl, "tool-prefix")};
  if (const std::string compat = Option(cl, "compat"); compat == "perseus-vault") {
    registry_options.list_perseus_names = true;
  } else if (!compat.empty()) {
    std::cerr << "strata: --compat must be perseus-vault, got \"" << compat << "\"\n";
    return 2;
  }
  if (const std::string threshold = Option(cl, "dedup-threshold"); !threshold.empty()) {
    char* end = nullptr;
    const double v = std::strtod(threshold.c_str(), &end);
    if (end == threshold.c_str() || *end != '\0' || !(v > 0 && v <= 1)) {
      std::cerr << "strata: --dedup-threshold must be a number in (0, 1], got \"" << threshold
                << "\"\n";
      return 2;
    }
    store_options.dedup_threshold = v;
  }
  StdioOptions stdio_options;
  if (const std::string max = Option(cl, "max-line-bytes"); !max.empty()) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(max.c_str(), &end, 10);
    if (end == max.c_str() || *end != '\0' || v < 1024) {
      std::cerr << "strata: --max-line-bytes must be an integer >= 1024, got \"" << max << "\"\n";
      return 2;
    }
    stdio_options.max_line_bytes = v;
  }
  for (const auto& [name, value] : cl.options) {
    // A table (clang-format would list it a name a line).
    // clang-format off
    static const char* const kKnown[] = {
        "db", "durability", "compat", "tool-prefix", "max-line-bytes", "dedup-threshold",
        "embedder", "queries", "http", "auth-token-file", "allow-origin", "auth-jwks",
        "auth-issuer", "auth-audience",
        "category", "key", "workspace", "body", "body-json", "type", "tags", "source",
        "valid-from", "valid-to", "dedup", "supersedes", "supersedes-category", "supersedes-key",
        "limit", "as-of", "valid-at", "mode", "out", "on-error", "force", "from",
        "allow-unconfirmed", "role", "store", "index-dir"};
    // clang-format on
    if (std::find(std::begin(kKnown), std::end(kKnown), name) == std::end(kKnown)) {
      std::cerr << "strata: unknown option --" << name << "\n\n" << Usage();
      return 2;
    }
  }

  Invocation in{.cl = cl,
                .db_path = store_options.path,
                .store = nullptr,
                .registry_options = registry_options,
                .stdio_options = stdio_options,
                .parent = parent,
                .serve_http = serve_http};
  if (command->needs == Needs::kNothing) return command->run(in);
  const std::filesystem::path db_path(store_options.path);
  if (!IsPostgresUri(store_options.path) && db_path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(db_path.parent_path(), ec);
  }
  if (command->needs == Needs::kDbPath) return command->run(in);
  if (command->needs == Needs::kStoreWithoutVectors) store_options.embedder = "none";
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(store_options);
  if (!store.ok()) {
    std::cerr << "strata: " << store.status().message() << "\n";
    return 1;
  }
  in.store = store->get();
  return command->run(in);
}

}  // namespace strata::server
