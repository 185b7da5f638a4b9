#include "text/term_stats.h"

#include <cstdlib>

#include "text/fts5_records.h"
#include "text/fts_query.h"
#include "util/status_macros.h"

namespace strata::text {
namespace {

constexpr size_t kMaxCachedTerms = 4096;

}  // namespace

absl::StatusOr<int64_t> TermStats::IndexedRows() {
  // FTS5 keeps its totals in the "averages" record, id 1 of its data table: first the row
  // count, then the token count of each column.
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT block FROM fts_data WHERE id = 1"));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return int64_t{0};
  size_t pos = 0;
  return static_cast<int64_t>(ReadVarint(s.Text(0), pos));
}

absl::StatusOr<bool> TermStats::IsCommon(const std::string& term, int64_t rows) {
  auto it = cache_.find(term);
  if (it != cache_.end() && std::llabs(rows - it->second.rows_at) * 10 <= it->second.rows_at) {
    return it->second.common;
  }
  const std::string expression = MatchExpression({term});
  bool common = false;
  if (rows <= 2 * kSampleRows) {
    // Counting stops just past half of the index, so a common term costs at most that.
    ASSIGN_OR_RETURN(store::Stmt s,
                     db_->Prepare("SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ?1 "
                                  "LIMIT ?2)"));
    s.Bind(1, std::string_view(expression)).Bind(2, rows / 2 + 1);
    ASSIGN_OR_RETURN(bool row, s.Step());
    common = row && s.Int(0) * 2 > rows;
  } else {
    // The newest kSampleRows version ids (ids are dense but for purges, which only make a
    // term look rarer) stand for the whole index.
    ASSIGN_OR_RETURN(store::Stmt newest, db_->Prepare("SELECT max(id) FROM versions"));
    ASSIGN_OR_RETURN(bool has_max, newest.Step());
    const int64_t max_id = has_max ? newest.Int(0) : 0;
    ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT count(*) FROM fts WHERE fts MATCH ?1 "
                                                 "AND rowid > ?2"));
    s.Bind(1, std::string_view(expression)).Bind(2, max_id - kSampleRows);
    ASSIGN_OR_RETURN(bool row, s.Step());
    common = row && s.Int(0) * 2 > kSampleRows;
  }
  if (cache_.size() >= kMaxCachedTerms) cache_.clear();
  cache_[term] = Entry{.common = common, .rows_at = rows};
  return common;
}

absl::StatusOr<SplitTerms> TermStats::Split(const std::vector<std::string>& terms) {
  SplitTerms out;
  ASSIGN_OR_RETURN(const int64_t rows, IndexedRows());
  if (rows < kPruneMinRows || terms.size() < 2) {
    out.selective = terms;
    return out;
  }
  for (const std::string& term : terms) {
    ASSIGN_OR_RETURN(const bool common, IsCommon(term, rows));
    (common ? out.common : out.selective).push_back(term);
  }
  if (out.selective.empty()) std::swap(out.selective, out.common);
  return out;
}

}  // namespace strata::text
