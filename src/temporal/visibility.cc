#include "temporal/visibility.h"

#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "temporal/timeline.h"
#include "temporal/version_table.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::temporal {
namespace {

// Without as_of, the current belief: every recorded event, including one stamped a
// millisecond ahead of the clock to keep transaction time strictly increasing.
int64_t BeliefAt(const ReadScope& scope) {
  return scope.as_of_unix_ms.value_or(std::numeric_limits<int64_t>::max());
}

}  // namespace

std::string Visibility::ScopeSql() const {
  std::string sql;
  if (walk_needed()) {
    // Necessary conditions for the bitemporal winner; the walk decides.
    absl::StrAppend(&sql,
                    " AND v.recorded_at_unix_ms <= :tx AND v.valid_from_unix_ms <= :valid"
                    " AND (v.valid_to_unix_ms IS NULL OR v.valid_to_unix_ms > :valid)");
  } else if (scope_.as_of_unix_ms) {
    absl::StrAppend(&sql,
                    " AND v.recorded_at_unix_ms <= :tx AND (v.superseded_at_unix_ms IS NULL "
                    "OR v.superseded_at_unix_ms > :tx)");
  } else {
    absl::StrAppend(&sql, " AND v.superseded_at_unix_ms IS NULL");
  }
  absl::StrAppend(&sql,
                  " AND NOT EXISTS (SELECT 1 FROM supersessions s WHERE s.predecessor_id = "
                  "v.memory_id AND s.at_unix_ms >= v.recorded_at_unix_ms",
                  scope_.as_of_unix_ms || walk_needed() ? " AND s.at_unix_ms <= :tx" : "",
                  walk_needed() ? " AND s.valid_from_unix_ms <= :valid" : "", ")");
  const RecallFilters& f = scope_.filters;
  if (f.category) absl::StrAppend(&sql, " AND m.category = :category");
  if (f.workspace) absl::StrAppend(&sql, " AND m.workspace = :workspace");
  if (f.type) absl::StrAppend(&sql, " AND v.type = :type");
  const bool sqlite = db_->dialect() == store::Dialect::kSqlite;
  for (size_t i = 0; i < f.tags.size(); ++i) {
    absl::StrAppend(&sql,
                    sqlite ? " AND EXISTS (SELECT 1 FROM json_each(v.tags_json) WHERE value = :tag"
                           : " AND CAST(v.tags_json AS jsonb) @> jsonb_build_array(CAST(:tag",
                    i, sqlite ? ")" : " AS TEXT))");
  }
  return sql;
}

std::string Visibility::MemoriesJoinSql() const {
  const RecallFilters& f = scope_.filters;
  return f.category || f.workspace ? " JOIN memories m ON m.id = v.memory_id" : "";
}

void Visibility::BindScope(store::Stmt& s) const {
  auto bind = [&s](const char* name, auto value) {
    if (const int index = s.ParameterIndex(name); index > 0) s.Bind(index, value);
  };
  bind(":tx", BeliefAt(scope_));
  if (scope_.valid_at_unix_ms) bind(":valid", *scope_.valid_at_unix_ms);
  const RecallFilters& f = scope_.filters;
  if (f.category) bind(":category", std::string_view(*f.category));
  if (f.workspace) bind(":workspace", std::string_view(*f.workspace));
  if (f.type) bind(":type", std::string_view(*f.type));
  for (size_t i = 0; i < f.tags.size(); ++i) {
    bind(absl::StrCat(":tag", i).c_str(), std::string_view(f.tags[i]));
  }
}

absl::Status Visibility::Visit(store::Stmt& s,
                               absl::FunctionRef<bool(const VisibleVersion&)> visit) {
  VersionTable table(db_);
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) return absl::OkStatus();
    const VisibleVersion version{.version_id = s.Int(0), .memory_id = s.Int(1)};
    if (walk_needed()) {
      auto it = winner_by_memory_.find(version.memory_id);
      if (it == winner_by_memory_.end()) {
        ASSIGN_OR_RETURN(const Timeline timeline, table.LoadTimeline(version.memory_id));
        std::optional<int64_t> winner;
        if (auto i = TrueAt(timeline.times, timeline.retractions, BeliefAt(scope_),
                            *scope_.valid_at_unix_ms)) {
          winner = timeline.rows[*i].version_id;
        }
        it = winner_by_memory_.emplace(version.memory_id, winner).first;
      }
      if (it->second != version.version_id) continue;
    }
    if (!visit(version)) return absl::OkStatus();
  }
}

absl::Status Visibility::Filter(std::span<const int64_t> version_ids,
                                absl::FunctionRef<bool(size_t, const VisibleVersion&)> visit) {
  std::vector<int64_t> unread;
  auto note = [&](int64_t id) {
    if (read_.try_emplace(id, std::nullopt).second) unread.push_back(id);
  };
  for (const int64_t id : version_ids) note(id);
  if (expected_ && !unread.empty()) {
    for (const int64_t id : std::exchange(expected_, nullptr)()) note(id);
  }
  if (!unread.empty()) {
    const char* ids = db_->dialect() == store::Dialect::kSqlite
                          ? "SELECT v.id, v.memory_id FROM json_each(:ids) AS c "
                            "JOIN versions v ON v.id = c.value"
                          : "SELECT v.id, v.memory_id FROM unnest(CAST(:ids AS bigint[])) AS "
                            "c(value) JOIN versions v ON v.id = c.value";
    // Planned once for any ids: each is a primary key lookup, however many there are.
    ASSIGN_OR_RETURN(store::Stmt s,
                     db_->Prepare(absl::StrCat(ids, MemoriesJoinSql(), " WHERE TRUE", ScopeSql()),
                                  store::Plan::kGeneric));
    s.Bind(s.ParameterIndex(":ids"), store::IdListOf(*db_, unread));
    BindScope(s);
    RETURN_IF_ERROR(Visit(s, [this](const VisibleVersion& v) {
      read_[v.version_id] = v.memory_id;
      return true;
    }));
  }
  for (size_t i = 0; i < version_ids.size(); ++i) {
    const std::optional<int64_t>& memory_id = read_.at(version_ids[i]);
    if (memory_id && !visit(i, {.version_id = version_ids[i], .memory_id = *memory_id})) break;
  }
  return absl::OkStatus();
}

absl::Status Visibility::Newest(size_t cap, absl::FunctionRef<bool(const VisibleVersion&)> visit) {
  std::string sql =
      absl::StrCat("SELECT v.id, v.memory_id FROM versions v", MemoriesJoinSql(), " WHERE TRUE",
                   ScopeSql(), " ORDER BY v.recorded_at_unix_ms DESC, v.id DESC");
  // Without the walk every row is visible, so the database can keep just the first rows.
  const bool capped = cap > 0 && !walk_needed();
  if (capped) absl::StrAppend(&sql, " LIMIT :cap");
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql));
  if (capped) s.Bind(s.ParameterIndex(":cap"), static_cast<int64_t>(cap));
  BindScope(s);
  return Visit(s, visit);
}

absl::Status Visibility::Join(std::string_view join, std::string_view columns,
                              absl::FunctionRef<void(store::Stmt&)> bind,
                              absl::FunctionRef<bool(store::Stmt&, const VisibleVersion&)> visit) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(absl::StrCat("SELECT v.id, v.memory_id, ", ToAbsl(columns),
                                             " FROM versions v JOIN memories m ON m.id = "
                                             "v.memory_id ",
                                             ToAbsl(join), " WHERE TRUE", ScopeSql())));
  bind(s);
  BindScope(s);
  return Visit(s, [&s, &visit](const VisibleVersion& v) { return visit(s, v); });
}

}  // namespace strata::temporal
