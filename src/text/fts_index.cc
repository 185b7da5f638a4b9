#include "text/fts_index.h"

#include "text/body_text.h"
#include "util/status_macros.h"

namespace strata::text {

absl::Status FtsIndex::Add(int64_t version_id, std::string_view text, std::string_view key,
                           std::string_view category) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("INSERT INTO fts (rowid, text, key, category) "
                                               "VALUES (?1, ?2, ?3, ?4)"));
  s.Bind(1, version_id).Bind(2, text).Bind(3, key).Bind(4, category);
  return s.Run();
}

absl::Status FtsIndex::Remove(int64_t version_id, std::string_view body_json, std::string_view key,
                              std::string_view category) {
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("INSERT INTO fts (fts, rowid, text, key, category) "
                                               "VALUES ('delete', ?1, ?2, ?3, ?4)"));
  s.Bind(1, version_id).Bind(2, BodyText(body_json)).Bind(3, key).Bind(4, category);
  return s.Run();
}

}  // namespace strata::text
