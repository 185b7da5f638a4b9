// The keyword index on both stores (text::FtsIndex, text::TermStats): indexing a version and
// a keyword recall's ranking, on a SQLite file and on PostgreSQL. Run under
// tests/pg/with_cluster (meson test -C build --benchmark keyword_engines), which passes the
// cluster in STRATA_TEST_PG_URI; without it the PostgreSQL cases are skipped. PostgreSQL's
// work is in the server's process: its real time is the one to read.

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pg/connection.h"
#include "pg/db.h"
#include "pg/schema.h"
#include "store/db.h"
#include "store/schema.h"
#include "text/fts5_extensions.h"
#include "text/fts_index.h"
#include "text/fts_query.h"
#include "text/term_stats.h"

namespace strata {
namespace {

enum class Engine { kSqlite, kPostgres };

// Version i's text: "entity i of cluster i % 977" among 30 to 110 made-up words, so that a
// query for one entity and one cluster has a rare term and a less rare one, and every version
// shares "entity", "of" and "cluster".
std::string VersionText(int i) {
  std::mt19937 random(static_cast<uint32_t>(i) * 2654435761u);
  static const char* const kParts[] = {"bo", "da", "fe", "gi", "hu", "ja", "ke", "lo", "mu"};
  std::string text = absl::StrCat("entity ", i, " of cluster ", i % 977, ":");
  for (int w = 30 + i % 81; w > 0; --w) {
    text += ' ';
    for (int p = 0; p < 3; ++p) text += kParts[random() % 9];
  }
  return text;
}

// A keyword index of `n` versions on `engine`, in a fresh SQLite file or PostgreSQL database.
struct Index {
  Index(Engine engine, int n) {
    if (engine == Engine::kSqlite) {
      dir = std::filesystem::temp_directory_path() /
            absl::StrCat("strata-keyword-bm-", ::getpid(), "-", n);
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
      if (!text::InstallFts5Extensions().ok()) return;
      auto sqlite = store::Db::Open((dir / "bm.db").string(), {});
      if (!sqlite.ok() || !store::Migrate(**sqlite).ok()) return;
      db = std::move(*sqlite);
    } else {
      const char* base = std::getenv("STRATA_TEST_PG_URI");
      if (base == nullptr || *base == '\0') return;
      auto admin = pg::Connection::Open(base);
      const std::string name = absl::StrCat("keyword_bm_", ::getpid(), "_", n, "_", ++created);
      if (!admin.ok() || !(*admin)->Exec(absl::StrCat("CREATE DATABASE ", name)).ok()) return;
      auto pg = pg::PgDb::Open(absl::StrCat(base, "&dbname=", name));
      if (!pg.ok() || !pg::Migrate((*pg)->connection()).ok()) return;
      db = std::move(*pg);
    }
    if (!Fill(n)) db.reset();
    // What autovacuum does to a store in use: a bulk load's transactions leave a thousand
    // dead versions of text_totals' rows each.
    if (db != nullptr && engine == Engine::kPostgres && !db->Exec("VACUUM ANALYZE").ok()) {
      db.reset();
    }
  }
  // Indexes versions 1..n, a thousand a transaction.
  bool Fill(int n) {
    text::FtsIndex index(db.get());
    for (int i = 0; i < n; i += 1000) {
      auto txn = store::Transaction::Begin(*db);
      if (!txn.ok()) return false;
      for (int v = i; v < std::min(n, i + 1000); ++v) {
        if (!index.Add(v + 1, VersionText(v), absl::StrCat("key-", v), "fact").ok()) return false;
      }
      if (!txn->Commit().ok()) return false;
    }
    return true;
  }
  ~Index() {
    db.reset();
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
  static inline int created = 0;
  std::filesystem::path dir;
  std::unique_ptr<store::Db> db;
};

void BM_KeywordAdd(benchmark::State& state, Engine engine) {
  Index index(engine, 1000);
  if (index.db == nullptr) return state.SkipWithError("no store (PostgreSQL: no cluster)");
  text::FtsIndex fts(index.db.get());
  int v = 1000;
  for (auto _ : state) {
    auto txn = store::Transaction::Begin(*index.db);
    if (!txn.ok() || !fts.Add(v + 1, VersionText(v), absl::StrCat("key-", v), "fact").ok() ||
        !txn->Commit().ok()) {
      return state.SkipWithError("cannot add");
    }
    ++v;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_KeywordAdd, sqlite, Engine::kSqlite)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_KeywordAdd, postgres, Engine::kPostgres)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// A keyword recall's use of the index: split the query's terms, rank the selective ones (the
// first page of 20), in one read snapshot.
void BM_KeywordRank(benchmark::State& state, Engine engine) {
  const int n = static_cast<int>(state.range(0));
  Index index(engine, n);
  if (index.db == nullptr) return state.SkipWithError("no store (PostgreSQL: no cluster)");
  text::TermStats stats(index.db.get());
  text::FtsIndex fts(index.db.get());
  std::mt19937 random(3);
  size_t matches = 0;
  for (auto _ : state) {
    const text::ParsedQuery query =
        text::ParseQuery(absl::StrCat("entity ", random() % n, " cluster ", random() % 977));
    auto snapshot = store::ReadSnapshot::Begin(*index.db);
    auto split = stats.Split(query.terms);
    if (!snapshot.ok() || !split.ok()) return state.SkipWithError("cannot split");
    auto ranked = fts.Rank({.terms = split->selective}, 0, 20);
    if (!ranked.ok()) return state.SkipWithError(std::string(ranked.status().message()).c_str());
    matches += ranked->size();
  }
  state.counters["matches"] = static_cast<double>(matches) / state.iterations();
}
BENCHMARK_CAPTURE(BM_KeywordRank, sqlite, Engine::kSqlite)
    ->Arg(1000)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_KeywordRank, postgres, Engine::kPostgres)
    ->Arg(1000)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
