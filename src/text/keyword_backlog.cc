#include "text/keyword_backlog.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "temporal/version_table.h"
#include "text/body_text.h"
#include "text/pg_keyword_index.h"
#include "util/log.h"
#include "util/pause.h"
#include "util/status_macros.h"

namespace strata::text {
namespace {

struct Unindexed {
  int64_t version_id;
  std::string body_json, key, category;
};

// The versions with ids in (after, through] that have no keyword rows, oldest first. Their
// ids first, from the two primary keys alone (no version's body read for one that is
// indexed: 1.7 -> 0.8 ms for 1,000 ids at 40K, 27 -> 13 for 20,000). The keyword rows'
// bounds repeat the versions': with them PostgreSQL merges the two keys' ranges instead of
// looking each version up (1,000 ids at 100K: 1.1 -> 0.67 ms, pgbench).
absl::StatusOr<std::vector<Unindexed>> UnindexedVersions(store::Db& db, int64_t after,
                                                         int64_t through, int64_t limit) {
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db.Prepare("SELECT v.id, v.body_json, m.key, m.category FROM (SELECT id FROM versions "
                 "WHERE id > ?1 AND id <= ?2 AND NOT EXISTS (SELECT 1 FROM text_documents d "
                 "WHERE d.version_id = versions.id AND d.version_id > ?1 AND d.version_id <= ?2) "
                 "ORDER BY id LIMIT ?3) AS u "
                 "JOIN versions v ON v.id = u.id JOIN memories m ON m.id = v.memory_id "
                 "ORDER BY v.id"));
  s.Bind(1, after).Bind(2, through).Bind(3, limit);
  std::vector<Unindexed> out;
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back({.version_id = s.Int(0),
                   .body_json = std::string(s.Text(1)),
                   .key = std::string(s.Text(2)),
                   .category = std::string(s.Text(3))});
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> KeywordBacklog::CatchUp(store::Db& db, FtsIndex& index,
                                                util::Sightings::Clock::time_point now) {
  // Read before the scan: every version up to it is committed, and its grace starts now
  // unless an earlier sighting reached it.
  ASSIGN_OR_RETURN(const int64_t newest, temporal::VersionTable(&db).NewestVersionId());
  newest_ = newest;
  sightings_.Saw(newest, now);
  const int64_t through = std::min(newest, cursor_ + kScanIds);
  ASSIGN_OR_RETURN(const std::vector<Unindexed> unindexed,
                   UnindexedVersions(db, cursor_, through, kMaxIndexed));
  int64_t indexed = 0;
  for (const Unindexed& v : unindexed) {
    if (!sightings_.GraceOver(v.version_id, now)) {
      cursor_ = v.version_id - 1;
      return indexed;
    }
    // A body that no longer parses was stored by a build that read it otherwise: indexed as
    // having no text rather than never. A transaction each: one holds text_totals' rows from
    // its first version to COMMIT, and the writers' keyword rows wait for them meanwhile.
    const absl::StatusOr<ParsedBody> body = ParseBody(v.body_json);
    RETURN_IF_ERROR(index.AddBeside(v.version_id, body.ok() ? body->text : std::string(), v.key,
                                    v.category));
    cursor_ = v.version_id;
    ++indexed;
  }
  if (static_cast<int64_t>(unindexed.size()) < kMaxIndexed) {
    cursor_ = through;
    if (through == newest) sightings_.Clear();
  }
  return indexed;
}

void KeepKeywordsCaughtUp(std::stop_token stop,
                          const std::function<absl::StatusOr<std::unique_ptr<store::Db>>()>& open,
                          std::chrono::milliseconds every) {
  std::unique_ptr<store::Db> db;
  std::optional<FtsIndex> index;
  KeywordBacklog backlog;
  // The newest version id at the round before, and at the last merge of the pending entries.
  int64_t before = -1, merged_at = -1;
  while (util::PauseUnlessStopped(stop, every)) {
    if (!db) {
      absl::StatusOr<std::unique_ptr<store::Db>> opened = open();
      if (!opened.ok()) {
        Log(LogLevel::kWarning, absl::StrCat("the keyword catch-up cannot connect: ",
                                             opened.status().message()));
        continue;
      }
      db = *std::move(opened);
      index.emplace(db.get());
    }
    const absl::StatusOr<int64_t> caught =
        backlog.CatchUp(*db, *index, std::chrono::steady_clock::now());
    if (!caught.ok()) {
      Log(LogLevel::kWarning,
          absl::StrCat("catching up versions without keyword rows: ", caught.status().message()));
    }
    if (absl::StatusOr<int> built =
            PgKeywordIndex::BuildSegments(*db, SegmentOptions(), kSegmentBlocksEachRound);
        !built.ok()) {
      Log(LogLevel::kWarning,
          absl::StrCat("building the keyword index's segments: ", built.status().message()));
    }
    // Writes stopped: the entries they left aside in the index are merged now rather than
    // read by every keyword query until a write fills the list (and merges them, ~130 ms at
    // 100K memories at rest) or autovacuum does (docs/decisions.md, "The pending entries
    // merged once writes stop").
    const int64_t newest = backlog.newest();
    if (caught.ok() && *caught == 0 && newest == before && newest != merged_at) {
      merged_at = newest;
      if (absl::Status merged = PgKeywordIndex::MergePending(*db); !merged.ok()) {
        Log(LogLevel::kWarning,
            absl::StrCat("merging the keyword index's pending entries: ", merged.message()));
      }
    }
    before = newest;
  }
}

}  // namespace strata::text
