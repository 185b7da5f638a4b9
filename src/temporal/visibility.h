#pragma once
// Which versions a read sees: the one place that knows, in SQL and in the walk.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "store/db.h"
#include "strata/strata.h"

namespace strata::temporal {

// A read's time scope and filters.
// - Neither time: the current belief, superseded memories left out.
// - as_of: what was believed at that instant (recorded by then, not yet superseded then).
// - valid_at: the version true in the world at that instant, as believed at as_of (now when
//   absent): per identity the bitemporal winner (timeline.h TrueAt), one version at most.
// A memory superseded by another (supersession_table.h) is not visible as believed from the
// correction on, unless rewritten since; with valid_at, only from the successor's valid_from
// on (before it, the predecessor was still true).
struct ReadScope {
  std::optional<int64_t> as_of_unix_ms;
  std::optional<int64_t> valid_at_unix_ms;
  RecallFilters filters;
};

// A visible version.
struct VisibleVersion {
  int64_t version_id;
  int64_t memory_id;
};

// Thread safety: as the Db it borrows; one read (one snapshot) at a time. Keeps what it
// found of each version and each identity's valid_at winner, so make one per read.
class Visibility {
 public:
  Visibility(store::Db* db, ReadScope scope) : db_(db), scope_(std::move(scope)) {}

  // Calls `visit(i, v)` for each visible version v among `version_ids` (v.version_id ==
  // version_ids[i]), in their order, until `visit` returns false. Ids of no version are
  // not visible. Reads only the ids no Filter has read before, with what `Expect` gave.
  absl::Status Filter(std::span<const int64_t> version_ids,
                      absl::FunctionRef<bool(size_t, const VisibleVersion&)> visit);

  // Ids a later Filter will ask about, given by `ids` when the next Filter reads (a
  // recall's other arm, still searching): read in the same statement, one round trip.
  void Expect(absl::AnyInvocable<std::vector<int64_t>()> ids) { expected_ = std::move(ids); }

  // Calls `visit` for each visible version, newest recorded first (ties: newest id first),
  // until it returns false. `cap` > 0: `visit` will return false within the first `cap`
  // versions, which lets the database keep only those instead of sorting all.
  absl::Status Newest(size_t cap, absl::FunctionRef<bool(const VisibleVersion&)> visit);

  // Calls `visit(row, v)` for each visible version v joined by `join` (SQL joining a table
  // of its owner's to v, the versions row; `columns` its columns from the third on, read
  // from `row`), in no particular order, until `visit` returns false. `bind` binds the
  // parameters `join` names.
  absl::Status Join(std::string_view join, std::string_view columns,
                    absl::FunctionRef<void(store::Stmt&)> bind,
                    absl::FunctionRef<bool(store::Stmt&, const VisibleVersion&)> visit);

  const ReadScope& scope() const { return scope_; }

 private:
  // The scope's conditions on v (versions) and m (memories), and their parameters.
  std::string ScopeSql() const;
  // The join of v to m, when ScopeSql reads m (a category or workspace filter); else none:
  // every version has its memory (a foreign key), and a recall's candidates each cost a
  // lookup of it for nothing.
  std::string MemoriesJoinSql() const;
  void BindScope(store::Stmt& s) const;
  // Steps `s` (columns: version id, memory id, then anything), visiting what the walk keeps.
  absl::Status Visit(store::Stmt& s, absl::FunctionRef<bool(const VisibleVersion&)> visit);
  bool walk_needed() const { return scope_.valid_at_unix_ms.has_value(); }

  store::Db* db_;  // Not owned; outlives this.
  const ReadScope scope_;
  // For the walk: each identity's winner at (as_of, valid_at), computed once.
  absl::flat_hash_map<int64_t, std::optional<int64_t>> winner_by_memory_;
  // What Filter read: a version's memory id when visible, nullopt when not.
  absl::flat_hash_map<int64_t, std::optional<int64_t>> read_;
  absl::AnyInvocable<std::vector<int64_t>()> expected_;
};

}  // namespace strata::temporal
