#include "server/doctor.h"

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "pg/connection.h"
#include "pg/schema.h"
#include "store/db.h"
#include "store/schema.h"
#include "strata/strata.h"
#include "text/fts5_extensions.h"

namespace strata::server {
namespace {

// A WAL this large means checkpoints are held back (a reader that never ends, a crashed
// checkpointer): store/checkpointer.h keeps it far smaller.
constexpr int64_t kLargeWalBytes = int64_t{256} << 20;
constexpr int kMaxIntegrityProblems = 10;

// Prints the lines and remembers whether one was an error.
class Report {
 public:
  void Ok(const std::string& check, const std::string& detail) { Line("ok     ", check, detail); }
  void Warning(const std::string& check, const std::string& detail) {
    Line("warning", check, detail);
  }
  void Error(const std::string& check, const std::string& detail) {
    Line("error  ", check, detail);
    failed_ = true;
  }
  int ExitCode() const { return failed_ ? 1 : 0; }

 private:
  void Line(const char* level, const std::string& check, const std::string& detail) {
    // One line: SQLite's and libpq's messages may hold newlines and tabs.
    std::string text = absl::StrReplaceAll(detail, {{"\n\t", " "}, {"\n", " "}, {"\t", " "}});
    std::cout << level << "  " << check << ": " << text << "\n" << std::flush;
  }
  bool failed_ = false;
};

std::string Bytes(int64_t n) {
  if (n >= (int64_t{1} << 20)) return absl::StrCat(n >> 20, " MiB");
  if (n >= (int64_t{1} << 10)) return absl::StrCat(n >> 10, " KiB");
  return absl::StrCat(n, " bytes");
}

// Modification time in seconds, 0 when absent.
int64_t MTime(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
}

// The saved vector index (vector/published_index.h: "<db>.hnsw" and its ".hnsw.meta").
void CheckIndexFile(const std::string& db_path, const EmbeddingStats& embeddings, Report& report) {
  const std::string index = db_path + ".hnsw";
  std::error_code ec;
  if (!std::filesystem::exists(index, ec)) {
    report.Ok("vector index file",
              embeddings.vectors == 0
                  ? "none (no vectors yet)"
                  : "none saved; built from the stored vectors when a server starts");
    return;
  }
  std::ifstream meta_in(index + ".meta");
  const nlohmann::json meta = nlohmann::json::parse(meta_in, nullptr, /*allow_exceptions=*/false);
  if (!meta.is_object() || !meta.contains("fingerprint") || !meta["fingerprint"].is_string()) {
    report.Warning("vector index file",
                   index + ".meta unreadable: the index is rebuilt when a server starts");
    return;
  }
  if (meta["fingerprint"].get<std::string>() != embeddings.embedder) {
    report.Warning("vector index file",
                   absl::StrCat("saved for embedder ", meta["fingerprint"].get<std::string>(),
                                ", not ", embeddings.embedder, ": rebuilt when a server starts"));
    return;
  }
  const bool older = MTime(index) < std::max(MTime(db_path), MTime(db_path + "-wal"));
  report.Ok("vector index file",
            absl::StrCat(Bytes(std::filesystem::file_size(index, ec)),
                         older ? ", older than the last write (a server catches it up at start)"
                               : ", up to date"));
}

int DoctorSqlite(const DoctorOptions& options) {
  Report report;
  const std::string& path = options.path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    report.Error("database", absl::StrCat(path, ": no such file"));
    return report.ExitCode();
  }
  if (absl::Status s = text::InstallFts5Extensions(); !s.ok()) {
    report.Error("database", std::string(s.message()));
    return report.ExitCode();
  }
  auto db = store::Db::Open(path, {.read_only = true});
  if (!db.ok()) {
    report.Error("database", std::string(db.status().message()));
    return report.ExitCode();
  }
  report.Ok("database", path);
  auto problems = (*db)->IntegrityProblems(kMaxIntegrityProblems);
  if (!problems.ok()) {
    report.Error("integrity", std::string(problems.status().message()));
  } else if (!problems->empty()) {
    report.Error("integrity",
                 absl::StrCat("PRAGMA integrity_check: ", absl::StrJoin(*problems, "; ")));
  } else {
    report.Ok("integrity", "PRAGMA integrity_check: ok");
  }
  auto version = store::SchemaVersion(**db);
  const int latest = store::LatestSchemaVersion();
  if (!version.ok()) {
    report.Error("schema", std::string(version.status().message()));
  } else if (*version > latest) {
    report.Error("schema", absl::StrCat("version ", *version, ", newer than this strata's ", latest,
                                        ": upgrade strata"));
  } else if (*version < latest) {
    report.Warning("schema", absl::StrCat("version ", *version, " of ", latest,
                                          ": migrated when strata next opens it"));
  } else {
    report.Ok("schema", absl::StrCat("version ", *version, " (this strata's)"));
  }
  db->reset();
  // The rest is read through the Store, which would migrate an older schema: only the current.
  if (!problems.ok() || !problems->empty() || !version.ok() || *version != latest) {
    return report.ExitCode();
  }
  auto store =
      Store::Open({.path = path, .embedder = options.embedder, .background_work = false});
  if (!store.ok()) {
    report.Error("open", std::string(store.status().message()));
    return report.ExitCode();
  }
  auto stats = (*store)->GetStats();
  if (!stats.ok()) {
    report.Error("stats", std::string(stats.status().message()));
    return report.ExitCode();
  }
  report.Ok("counts", absl::StrCat(stats->total_memories, " memories (", stats->active_memories,
                                   " current), ", stats->versions, " versions, ",
                                   stats->dedup.aliases, " aliases"));
  const std::string wal = absl::StrCat("database ", Bytes(stats->db_file_bytes), ", WAL ",
                                       Bytes(stats->wal_file_bytes));
  if (stats->wal_file_bytes > kLargeWalBytes) {
    report.Warning("wal", wal + ": checkpoints are held back (a long-running reader?)");
  } else {
    report.Ok("wal", wal);
  }
  if (stats->dedup.signatures_complete) {
    report.Ok("dedup signatures", "complete");
  } else {
    report.Warning("dedup signatures", "incomplete: run `strata rebuild-signatures`");
  }
  if (!stats->embeddings) {
    report.Ok("embeddings", "none (--embedder none)");
    return report.ExitCode();
  }
  const EmbeddingStats& e = *stats->embeddings;
  if (!e.last_error.empty()) {
    report.Warning("embedder", absl::StrCat(e.embedder, ": ", e.last_error));
  }
  if (e.pending > 0) {
    report.Warning("embedding backlog",
                   absl::StrCat(e.pending, " versions without a vector from ", e.embedder,
                                " (a server embeds them in the background; `strata embed` now)"));
  } else {
    report.Ok("embedding backlog", absl::StrCat("none: ", e.vectors, " vectors from ", e.embedder));
  }
  CheckIndexFile(path, e, report);
  return report.ExitCode();
}

int DoctorPostgres(const DoctorOptions& options) {
  Report report;
  auto conn = pg::Connection::Open(options.path);
  if (!conn.ok()) {
    report.Error("reachable", std::string(conn.status().message()));
    return report.ExitCode();
  }
  report.Ok("reachable", "connected");
  const int v = (*conn)->server_version();
  const std::string version = absl::StrCat("PostgreSQL ", v / 10000, ".", v % 10000);
  if (v < 150000) {
    report.Warning("server version", version + ": strata is tested on 15");
  } else {
    report.Ok("server version", version);
  }
  auto state = pg::ReadSchemaState(**conn);
  if (!state.ok()) {
    report.Error("schema", std::string(state.status().message()));
    return report.ExitCode();
  }
  if (state->current() > state->latest) {
    report.Error("schema", absl::StrCat("version ", state->current(), ", newer than this strata's ",
                                        state->latest, ": upgrade strata"));
    return report.ExitCode();
  }
  if (state->pending() > 0) {
    report.Warning("schema", absl::StrCat(state->applied.size(), " migrations applied, ",
                                          state->pending(), " pending (of ", state->latest, ")"));
  } else {
    report.Ok("schema", absl::StrCat("all ", state->latest, " migrations applied"));
  }
  if (state->current() != state->latest) return report.ExitCode();
  auto counts = pg::CountRows(**conn);
  if (!counts.ok()) {
    report.Error("counts", std::string(counts.status().message()));
    return report.ExitCode();
  }
  report.Ok("counts", absl::StrJoin(*counts, ", ", absl::PairFormatter(" ")));
  // A single write's keyword rows follow its commit (docs/decisions.md, "The keyword upkeep
  // behind the write"): a node stopped in between leaves its version without them.
  auto unindexed = (*conn)->QueryInt(
      "SELECT count(*) FROM versions v WHERE NOT EXISTS "
      "(SELECT 1 FROM text_documents d WHERE d.version_id = v.id)");
  if (!unindexed.ok()) {
    report.Error("keyword index", std::string(unindexed.status().message()));
  } else if (*unindexed > 0) {
    report.Warning("keyword index",
                   absl::StrCat(*unindexed, " versions without keyword rows (written just "
                                            "before a node stopped; any node's next writes "
                                            "index them after a 2 s grace)"));
  } else {
    report.Ok("keyword index", "every version indexed");
  }
  // A database larger than the server's buffers is read from the operating system's cache:
  // a recall's pages cost a system call and a copy each (README, "Many nodes on one
  // PostgreSQL").
  auto database = (*conn)->QueryInt("SELECT pg_database_size(current_database())");
  auto buffers = (*conn)->QueryInt("SELECT pg_size_bytes(current_setting('shared_buffers'))");
  if (!database.ok() || !buffers.ok()) {
    report.Error("memory", std::string((database.ok() ? buffers : database).status().message()));
  } else if (*database > *buffers) {
    report.Warning("memory", absl::StrCat("database ", Bytes(*database),
                                          ", larger than shared_buffers (", Bytes(*buffers),
                                          "): recalls read its pages from the operating "
                                          "system's cache; set shared_buffers to hold it"));
  } else {
    report.Ok("memory",
              absl::StrCat("database ", Bytes(*database), ", shared_buffers ", Bytes(*buffers)));
  }
  return report.ExitCode();
}

}  // namespace

int RunDoctor(const DoctorOptions& options) {
  return IsPostgresUri(options.path) ? DoctorPostgres(options) : DoctorSqlite(options);
}

}  // namespace strata::server
