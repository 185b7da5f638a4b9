#pragma once
// The versions a PostgreSQL store holds without keyword rows, and their catch-up. A single
// write's keyword rows are written just after its commit, in a transaction of their own
// (PgKeywordIndex::AddBeside; docs/decisions.md, "The keyword upkeep behind the write"), so a
// node that stops in between, or whose second transaction fails, leaves its version
// unindexed. CatchUp finds such versions by id after a cursor and indexes those whose grace
// is over (their writer may still be about to index them: util::Sightings, as the vector
// worker takes up another process's versions). Two nodes indexing one version write it once
// (AddBeside).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "text/fts_index.h"
#include "util/sightings.h"

namespace strata::text {

// How long a version's writer has to write its keyword rows before a catch-up does.
inline constexpr std::chrono::seconds kKeywordGrace{2};
// How often a serving node looks for versions without keyword rows (KeepKeywordsCaughtUp).
inline constexpr std::chrono::seconds kKeywordCatchUpEvery{1};

// Thread safety: none; one caller at a time.
class KeywordBacklog {
 public:
  KeywordBacklog() = default;

  // Scans up to kScanIds version ids after the cursor and indexes, oldest first, the versions
  // without keyword rows whose grace is over; the cursor moves up to the first still in its
  // grace. Returns how many it indexed. REQUIRES: PostgreSQL, no transaction open on `db`;
  // `index` is on `db`. Errors: as the statements (the cursor stays where it was).
  absl::StatusOr<int64_t> CatchUp(store::Db& db, FtsIndex& index,
                                  util::Sightings::Clock::time_point now);
  // The newest version id the last CatchUp read (0 before one).
  int64_t newest() const { return newest_; }

  // Version ids one scan looks at: the first scans of a large store walk it a window at a
  // time instead of all at once (~0.7 us an id: each is a probe of text_documents' key; a
  // node's scan a second sees the ~500-1,000 ids written since its last).
  static constexpr int64_t kScanIds = 5000;
  // Versions one scan indexes at most.
  static constexpr int64_t kMaxIndexed = 256;

 private:
  int64_t cursor_ = 0;  // Every version at or below it has keyword rows, or had.
  int64_t newest_ = 0;
  util::Sightings sightings_{kKeywordGrace};
};

// Blocks of keyword segments a round builds at most (PgKeywordIndex::BuildSegments): 8,192
// versions a second, past any rate of writes, so a store opened with many unbuilt catches up.
inline constexpr int kSegmentBlocksEachRound = 8;

// A serving node's catch-up, a thread's whole work: every `every` until `stop`, a
// KeywordBacklog's CatchUp on a connection of its own from `open`, so that a version left
// without keyword rows is indexed after the grace whether or not anyone writes, and no
// write's answer waits for a scan; then the keyword index's next segments; and once no
// version came for a round, the index's pending entries merged (PgKeywordIndex::
// MergePending), once until versions come again. A failure (opening the connection, a
// statement) is logged and tried again at the next round.
void KeepKeywordsCaughtUp(std::stop_token stop,
                          const std::function<absl::StatusOr<std::unique_ptr<store::Db>>()>& open,
                          std::chrono::milliseconds every);

}  // namespace strata::text
