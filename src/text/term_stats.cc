#include "text/term_stats.h"

#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "store/schema.h"
#include "text/fts5_records.h"
#include "text/fts_query.h"
#include "text/pg_keyword_index.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::text {
namespace {

constexpr size_t kMaxCachedTerms = 4096;
// The meta row Save keeps the common terms in: a line each, the index size when counted, a
// space, the term (query terms hold no ASCII space or line break: text/fts_query.h).
constexpr char kSavedName[] = "keyword_common_terms";
// At most this many saved (a store's common terms are a few dozen words).
constexpr size_t kMaxSavedTerms = 256;
// A saturated row's count exceeds every half IsCommon compares a bound with (rows / 2 up to
// 2 * kSampleRows rows, kSampleRows / 2 past them): it is never taken for a rare term's, by
// this build or an older one reading the same store (a count reserved ahead, kReservedDocuments,
// saturates at most 15 a node early). And past 2 * kSampleRows a term in at most half of the
// sample still has a bound: saturation costs large indexes no counts.
static_assert(kSaturatedDocuments > kSampleRows);

}  // namespace

absl::StatusOr<int64_t> TermStats::IndexedRows() {
  if (db_->dialect() == store::Dialect::kPostgres) return PgKeywordIndex(db_).IndexedRows();
  // FTS5 keeps its totals in the "averages" record, id 1 of its data table: first the row
  // count, then the token count of each column.
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT block FROM fts_data WHERE id = 1"));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return int64_t{0};
  size_t pos = 0;
  return static_cast<int64_t>(ReadVarint(s.Text(0), pos));
}

std::optional<bool> TermStats::Cached(const std::string& term, int64_t rows) const {
  const auto it = cache_.find(term);
  if (it != cache_.end() && std::llabs(rows - it->second.rows_at) * 10 <= it->second.rows_at) {
    return it->second.common;
  }
  return std::nullopt;
}

absl::StatusOr<bool> TermStats::IsCommon(const std::string& term, int64_t rows, int64_t bound) {
  // Common: in more than half of the index; in an index larger than 2 * kSampleRows, in more
  // than half of its newest kSampleRows version ids (dense but for purges, which only make a
  // term look rarer), which stand for the whole.
  // A term its bound tells rare costs no read (at 100K memories the newest id was read for
  // each such term first: two round trips a recall for nothing).
  const bool sampled = rows > 2 * kSampleRows;
  const int64_t half = sampled ? kSampleRows / 2 : rows / 2;
  bool common = false;
  if (bound > half) {
    int64_t after = std::numeric_limits<int64_t>::min();
    if (sampled) {
      ASSIGN_OR_RETURN(store::Stmt newest, db_->Prepare("SELECT max(id) FROM versions"));
      ASSIGN_OR_RETURN(const bool has_max, newest.Step());
      after = (has_max && !newest.IsNull(0) ? newest.Int(0) : 0) - kSampleRows;
    }
    if (db_->dialect() == store::Dialect::kPostgres) {
      ASSIGN_OR_RETURN(common, PgKeywordIndex(db_).MatchesMoreThan(term, after, half));
    } else {
      // Counting stops just past half, so a common term costs at most that.
      const std::string expression = MatchExpression({term});
      ASSIGN_OR_RETURN(store::Stmt s,
                       db_->Prepare("SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ?1 "
                                    "AND rowid > ?2 LIMIT ?3)"));
      s.Bind(1, expression).Bind(2, after).Bind(3, half + 1);
      ASSIGN_OR_RETURN(const bool row, s.Step());
      common = row && s.Int(0) > half;
    }
  }
  if (cache_.size() >= kMaxCachedTerms) cache_.clear();
  cache_[term] = Entry{.common = common, .rows_at = rows};
  if (saved_ && counted_.size() < kMaxCachedTerms) {
    const auto it = saved_->find(term);
    const bool changes = common ? it == saved_->end() || it->second != rows : it != saved_->end();
    if (changes) counted_[term] = cache_[term];
  }
  return common;
}

absl::StatusOr<TermStats::SavedTerms> TermStats::ReadSaved() {
  SavedTerms saved;
  ASSIGN_OR_RETURN(const std::optional<std::string> value, store::ReadMeta(*db_, kSavedName));
  if (!value) return saved;
  for (const absl::string_view line : absl::StrSplit(*value, '\n', absl::SkipEmpty())) {
    const size_t space = line.find(' ');
    int64_t rows_at = 0;
    // A line this build cannot read is left out: the term is counted again.
    if (space == absl::string_view::npos || space + 1 == line.size() ||
        !absl::SimpleAtoi(line.substr(0, space), &rows_at)) {
      continue;
    }
    saved.emplace(line.substr(space + 1), rows_at);
  }
  return saved;
}

absl::Status TermStats::Save() {
  if (counted_.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::BeginBeside(*db_));
  // Read again in the transaction: another process may have saved since.
  ASSIGN_OR_RETURN(const SavedTerms before, ReadSaved());
  SavedTerms saved = before;
  for (const auto& [term, entry] : counted_) {
    if (entry.common) {
      saved[term] = entry.rows_at;
    } else {
      saved.erase(term);
    }
  }
  std::string value;
  size_t kept = 0;
  for (auto it = saved.begin(); it != saved.end();) {
    if (kept++ == kMaxSavedTerms) {
      saved.erase(it++);
      continue;
    }
    absl::StrAppend(&value, it->second, " ", it->first, "\n");
    ++it;
  }
  // Unchanged when another process saved the same answers first.
  if (saved != before) RETURN_IF_ERROR(store::WriteMeta(*db_, kSavedName, value));
  RETURN_IF_ERROR(txn.Commit());
  saved_ = std::move(saved);
  counted_.clear();
  return absl::OkStatus();
}

absl::StatusOr<SplitTerms> TermStats::Split(const std::vector<std::string>& terms) {
  SplitTerms out;
  if (terms.size() < 2) {
    out.selective = terms;
    return out;
  }
  // On PostgreSQL, the index's size and every term's bound on its matches come in one
  // statement (a round trip each was a third of a ranking's), so that most rare terms need no
  // count. FTS5 keeps no such statistics.
  int64_t rows = 0;
  std::vector<int64_t> bounds(terms.size(), std::numeric_limits<int64_t>::max());
  if (db_->dialect() == store::Dialect::kPostgres) {
    ASSIGN_OR_RETURN(PgKeywordIndex::Statistics statistics,
                     PgKeywordIndex(db_).ReadStatistics(terms));
    rows = statistics.rows;
    bounds = std::move(statistics.bounds);
  } else {
    ASSIGN_OR_RETURN(rows, IndexedRows());
  }
  if (rows < kPruneMinRows) {
    out.selective = terms;
    return out;
  }
  if (!saved_) {
    ASSIGN_OR_RETURN(saved_, ReadSaved());
    for (const auto& [term, rows_at] : *saved_) {
      if (cache_.size() >= kMaxCachedTerms) break;
      cache_.try_emplace(term, Entry{.common = true, .rows_at = rows_at});
    }
  }
  for (size_t i = 0; i < terms.size(); ++i) {
    std::optional<bool> common = Cached(terms[i], rows);
    if (!common) {
      ASSIGN_OR_RETURN(common, IsCommon(terms[i], rows, bounds[i]));
    }
    (*common ? out.common : out.selective).push_back(terms[i]);
  }
  if (out.selective.empty()) std::swap(out.selective, out.common);
  return out;
}

}  // namespace strata::text
