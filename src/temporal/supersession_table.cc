#include "temporal/supersession_table.h"

#include "util/status_macros.h"

namespace strata::temporal {

bool Superseded(std::span<const SupersessionRow> rows, int64_t recorded_at, int64_t tx,
                std::optional<int64_t> valid) {
  for (const SupersessionRow& row : rows) {
    // A version recorded after the correction is a new belief it does not touch.
    if (row.at_unix_ms < recorded_at || row.at_unix_ms > tx) continue;
    if (!valid || *valid >= row.valid_from_unix_ms) return true;
  }
  return false;
}

absl::Status SupersessionTable::Insert(const SupersessionRow& row) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("INSERT INTO supersessions (predecessor_id, successor_id, "
                                "at_unix_ms, valid_from_unix_ms) VALUES (?1, ?2, ?3, ?4)"));
  s.Bind(1, row.predecessor_id).Bind(2, row.successor_id);
  s.Bind(3, row.at_unix_ms).Bind(4, row.valid_from_unix_ms);
  return s.Run();
}

absl::StatusOr<std::vector<SupersessionRow>> SupersessionTable::Successors(int64_t memory_id) {
  return Load(
      "SELECT predecessor_id, successor_id, at_unix_ms, valid_from_unix_ms FROM supersessions "
      "WHERE predecessor_id = ?1 ORDER BY at_unix_ms, successor_id",
      memory_id);
}

absl::StatusOr<std::vector<SupersessionRow>> SupersessionTable::Predecessors(int64_t memory_id) {
  return Load(
      "SELECT predecessor_id, successor_id, at_unix_ms, valid_from_unix_ms FROM supersessions "
      "WHERE successor_id = ?1 ORDER BY at_unix_ms, predecessor_id",
      memory_id);
}

absl::StatusOr<int64_t> SupersessionTable::CountTouching(const Scope& scope) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT count(*) FROM supersessions s WHERE EXISTS (SELECT 1 FROM "
                                "memories m WHERE m.id IN (s.predecessor_id, s.successor_id) AND "
                                "(m.workspace = ?1 OR ?1 IS NULL) AND (m.category = ?2 "
                                "OR ?2 IS NULL))"));
  BindScope(s, scope);
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

absl::StatusOr<std::vector<SupersessionRow>> SupersessionTable::Load(const char* sql,
                                                                     int64_t memory_id) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql));
  s.Bind(1, memory_id);
  std::vector<SupersessionRow> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    rows.push_back({.predecessor_id = s.Int(0),
                    .successor_id = s.Int(1),
                    .at_unix_ms = s.Int(2),
                    .valid_from_unix_ms = s.Int(3)});
  }
  return rows;
}

}  // namespace strata::temporal
