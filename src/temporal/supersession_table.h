#pragma once
// Explicit corrections: which memory superseded which, when, and from which valid instant.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"
#include "temporal/version_table.h"

namespace strata::temporal {

// `successor` superseded `predecessor` at `at` (transaction time). As believed from `at` on,
// the predecessor's versions recorded at or before `at` are true at no valid instant from
// `valid_from` (the successor's valid_from) on, and recall without valid_at skips them.
struct SupersessionRow {
  int64_t predecessor_id = 0;
  int64_t successor_id = 0;
  int64_t at_unix_ms = 0;
  int64_t valid_from_unix_ms = 0;
};

// Whether the version of a memory recorded at `recorded_at` is cut off, as believed at `tx`,
// by one of `rows` (the memory's rows as predecessor): at every valid instant when `valid`
// is absent, else at `valid`.
bool Superseded(std::span<const SupersessionRow> rows, int64_t recorded_at, int64_t tx,
                std::optional<int64_t> valid);

// Reads and writes the supersessions table (schema migration 6). Rows go with either memory
// when it is purged (ON DELETE CASCADE). Callers own transactions.
// Thread safety: as the Db it borrows.
class SupersessionTable {
 public:
  explicit SupersessionTable(store::Db* db) : db_(db) {}

  // REQUIRES: no row for (row.predecessor_id, row.at_unix_ms) yet.
  absl::Status Insert(const SupersessionRow& row);
  // The rows naming `memory_id` as predecessor, oldest first.
  absl::StatusOr<std::vector<SupersessionRow>> Successors(int64_t memory_id);
  // The rows naming `memory_id` as successor, oldest first.
  absl::StatusOr<std::vector<SupersessionRow>> Predecessors(int64_t memory_id);
  // The rows naming a memory of `scope` at either end.
  absl::StatusOr<int64_t> CountTouching(const Scope& scope);

 private:
  absl::StatusOr<std::vector<SupersessionRow>> Load(const char* sql, int64_t memory_id);

  store::Db* db_;  // Not owned; outlives this.
};

}  // namespace strata::temporal
