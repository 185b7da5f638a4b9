#pragma once
// The near-duplicate index: band keys of current versions, and aliases (keys merged into
// another memory).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/version_table.h"
#include "text/body_text.h"

namespace strata::dedup {

// An identity merged into memory `memory_id` on write.
struct AliasRow {
  Identity identity;
  int64_t memory_id = 0;
  double similarity = 0;
  int64_t created_at_unix_ms = 0;
};

// The band keys of a stored version (its body, category and workspace): what the index holds
// for a memory while that version is current. A body that no longer parses (corruption)
// still yields its exact-content key.
std::vector<int64_t> StoredVersionKeys(const temporal::VersionRow& row);

// The band keys of `body` as the current version of a memory named `identity`.
std::vector<int64_t> BodyKeys(const text::ParsedBody& body, const Identity& identity);

// The band keys of current memories, and aliases. Band keys are kept in table dedup_keys,
// one row per memory (a write dirties one page, not one per key), and looked up in a BandMap
// loaded from it on first use. Before each lookup the map takes in what other connections
// wrote since: the keys of memories with versions newer than any it has seen, or all of them
// again after a Clear. It does not see their removals; the keys left behind only name
// candidates that the finder verifies and skips. Callers own transactions; a lookup belongs
// in the write transaction whose write it checks, so that nothing commits in between.
// Thread safety: as the Db it borrows.
class DedupIndex {
 public:
  // The map loads dedup_keys, and catches up with the versions since, in keyset pages of
  // this many rows: PostgreSQL's rows arrive a statement's whole at once.
  static constexpr int64_t kLoadPageRows = 8192;

  explicit DedupIndex(store::Db* db, int64_t load_page_rows = kLoadPageRows);
  ~DedupIndex();
  DedupIndex(DedupIndex&&) noexcept;
  DedupIndex& operator=(DedupIndex&&) noexcept;

  // Makes `keys` the memory's band keys (none: it has none).
  absl::Status Set(int64_t memory_id, const std::vector<int64_t>& keys);
  // Set for a memory that has no keys yet (one just created): without reading them first.
  absl::Status Add(int64_t memory_id, const std::vector<int64_t>& keys);
  absl::Status Remove(int64_t memory_id);
  // Distinct memories that may share at least one of `keys`, most shared keys first (ties
  // by id), at most `max`. May name a memory that no longer has them.
  absl::StatusOr<std::vector<int64_t>> Candidates(const std::vector<int64_t>& keys, size_t max);
  // Removes every memory's keys.
  absl::Status Clear();
  // Sends ahead the read that brings the map up to date (see the class comment), for the
  // next lookup to use: on PostgreSQL, in a transaction, it then shares the round trip of
  // the transaction's next statement that waits for an answer. Nothing when the map is not
  // loaded yet. REQUIRES: in the transaction of that lookup, with no write between.
  absl::Status SendCatchUp();
  // Drops a read sent ahead that no lookup used (the transaction ends without one).
  void DropCatchUp();

  // The memory an alias identity was merged into, if it is an alias.
  absl::StatusOr<std::optional<int64_t>> FindAlias(const Identity& identity);
  absl::Status PutAlias(const Identity& identity, int64_t memory_id, double similarity,
                        int64_t now_unix_ms);
  absl::Status RemoveAlias(const Identity& identity);
  // The aliases merged into `memory_id`, by (category, key, workspace).
  absl::StatusOr<std::vector<AliasRow>> AliasesOf(int64_t memory_id);
  // The aliases of the memories in `scope`.
  absl::StatusOr<int64_t> CountAliases(const temporal::Scope& scope);

  // The signature scheme the stored keys were made with ("" when unknown), and setting it.
  absl::StatusOr<std::string> StoredScheme();
  absl::Status SetStoredScheme(const std::string& scheme);

 private:
  absl::Status Write(int64_t memory_id, const std::vector<int64_t>& keys, bool replace);
  struct Loaded;
  // Moves the keys of a store from before schema version 8 (table dedup_bands) into dedup_keys.
  absl::Status EnsureUpgraded();
  absl::Status MoveBandRows();
  // The map, loaded or brought up to date with what other connections wrote.
  absl::StatusOr<Loaded*> Current();
  // The read of the generation and the versions written since the map last looked: the
  // one SendCatchUp sent, else prepared now.
  absl::StatusOr<store::Stmt> CatchUpRead();
  absl::StatusOr<std::vector<int64_t>> StoredKeys(int64_t memory_id);

  store::Db* db_;                   // Not owned; outlives this.
  int64_t load_page_rows_;
  std::unique_ptr<Loaded> loaded_;  // Null until first needed.
  std::optional<store::Stmt> sent_;  // CatchUpRead's, sent ahead by SendCatchUp.
  bool upgraded_ = false;
};

}  // namespace strata::dedup
