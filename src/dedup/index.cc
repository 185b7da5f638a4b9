#include "dedup/index.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "dedup/content.h"
#include "dedup/signature.h"
#include "text/body_text.h"
#include "util/status_macros.h"

namespace strata::dedup {
namespace {

// "?2, ?3, ..., ?(n+1)": the keys' placeholders after ?1.
std::string Placeholders(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) absl::StrAppend(&out, i ? ", ?" : "?", i + 2);
  return out;
}

}  // namespace

std::vector<int64_t> StoredVersionKeys(const temporal::VersionRow& row) {
  absl::StatusOr<text::ParsedBody> body = text::ParseBody(row.version.body_json);
  const Identity& id = row.version.identity;
  return BandKeys(body.ok() ? Analyze(*body) : ContentUnits{}, row.body_hash,
                  ScopeHash(id.category, id.workspace));
}

absl::Status DedupIndex::Add(int64_t memory_id, const std::vector<int64_t>& keys) {
  if (keys.empty()) return absl::OkStatus();
  std::string sql = "INSERT OR IGNORE INTO dedup_bands (band_key, memory_id) VALUES ";
  for (size_t i = 0; i < keys.size(); ++i)
    absl::StrAppend(&sql, i ? ", " : "", "(?", i + 2, ", ?1)");
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql));
  s.Bind(1, memory_id);
  for (size_t i = 0; i < keys.size(); ++i) s.Bind(static_cast<int>(i + 2), keys[i]);
  return s.Run();
}

absl::Status DedupIndex::Remove(int64_t memory_id, const std::vector<int64_t>& keys) {
  if (keys.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(absl::StrCat("DELETE FROM dedup_bands WHERE memory_id = ?1 AND "
                                             "band_key IN (",
                                             Placeholders(keys.size()), ")")));
  s.Bind(1, memory_id);
  for (size_t i = 0; i < keys.size(); ++i) s.Bind(static_cast<int>(i + 2), keys[i]);
  return s.Run();
}

absl::StatusOr<std::vector<int64_t>> DedupIndex::Candidates(const std::vector<int64_t>& keys,
                                                            size_t max) {
  std::vector<int64_t> out;
  if (keys.empty()) return out;
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(absl::StrCat(
                                      "SELECT memory_id FROM dedup_bands WHERE band_key IN (",
                                      Placeholders(keys.size()), ")")));
  for (size_t i = 0; i < keys.size(); ++i) s.Bind(static_cast<int>(i + 2), keys[i]);
  absl::flat_hash_map<int64_t, int> hits;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    ++hits[s.Int(0)];
  }
  std::vector<std::pair<int, int64_t>> ranked;
  ranked.reserve(hits.size());
  for (const auto& [id, count] : hits) ranked.emplace_back(-count, id);
  std::sort(ranked.begin(), ranked.end());
  for (size_t i = 0; i < ranked.size() && i < max; ++i) out.push_back(ranked[i].second);
  return out;
}

absl::Status DedupIndex::Clear() { return db_->Exec("DELETE FROM dedup_bands"); }

absl::StatusOr<std::optional<int64_t>> DedupIndex::FindAlias(const Identity& identity) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT memory_id FROM aliases WHERE category = ?1 AND key = ?2 "
                                "AND workspace = ?3"));
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::nullopt;
  return s.Int(0);
}

absl::Status DedupIndex::PutAlias(const Identity& identity, int64_t memory_id, double similarity,
                                  int64_t now_unix_ms) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("INSERT OR REPLACE INTO aliases (category, key, workspace, "
                                "memory_id, similarity, created_at_unix_ms) "
                                "VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  s.Bind(4, memory_id).Bind(5, similarity).Bind(6, now_unix_ms);
  return s.Run();
}

absl::Status DedupIndex::RemoveAlias(const Identity& identity) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("DELETE FROM aliases WHERE category = ?1 AND "
                                               "key = ?2 AND workspace = ?3"));
  s.Bind(1, identity.category).Bind(2, identity.key).Bind(3, identity.workspace);
  return s.Run();
}

absl::StatusOr<std::vector<AliasRow>> DedupIndex::AliasesOf(int64_t memory_id) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT category, key, workspace, similarity, created_at_unix_ms "
                                "FROM aliases WHERE memory_id = ?1 ORDER BY category, key, "
                                "workspace"));
  s.Bind(1, memory_id);
  std::vector<AliasRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({.identity = {.category = std::string(s.Text(0)),
                                .key = std::string(s.Text(1)),
                                .workspace = std::string(s.Text(2))},
                   .memory_id = memory_id,
                   .similarity = s.Double(3),
                   .created_at_unix_ms = s.Int(4)});
  }
  return out;
}

absl::StatusOr<int64_t> DedupIndex::CountAliases(const temporal::Scope& scope) {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT count(*) FROM aliases a JOIN memories m ON m.id = "
                                "a.memory_id WHERE (?1 IS NULL OR m.workspace = ?1) AND "
                                "(?2 IS NULL OR m.category = ?2)"));
  temporal::BindScope(s, scope);
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

absl::StatusOr<std::string> DedupIndex::StoredScheme() {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT value FROM meta WHERE name = 'dedup_scheme'"));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::string();
  return std::string(s.Text(0));
}

absl::Status DedupIndex::SetStoredScheme(const std::string& scheme) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("INSERT OR REPLACE INTO meta (name, value) "
                                               "VALUES ('dedup_scheme', ?1)"));
  s.Bind(1, scheme);
  return s.Run();
}

}  // namespace strata::dedup
