#pragma once
// The near-duplicate index kept in SQLite: band keys of current versions, and aliases (keys
// merged into another memory).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/version_table.h"

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

// Rows of dedup_bands and aliases. Callers own transactions.
// Thread safety: as the Db it borrows.
class DedupIndex {
 public:
  explicit DedupIndex(store::Db* db) : db_(db) {}

  absl::Status Add(int64_t memory_id, const std::vector<int64_t>& keys);
  absl::Status Remove(int64_t memory_id, const std::vector<int64_t>& keys);
  // Distinct memories sharing at least one of `keys`, most shared keys first (ties by id),
  // at most `max`.
  absl::StatusOr<std::vector<int64_t>> Candidates(const std::vector<int64_t>& keys, size_t max);
  absl::Status Clear();

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
  store::Db* db_;  // Not owned; outlives this.
};

}  // namespace strata::dedup
