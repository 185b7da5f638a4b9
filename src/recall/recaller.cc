#include "recall/recaller.h"

#include <algorithm>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "recall/fusion.h"
#include "temporal/timeline.h"
#include "temporal/version_table.h"
#include "text/fts_query.h"
#include "util/status_macros.h"
#include "util/sv.h"
#include "vector/codec.h"

namespace strata::recall {
namespace {

// Past this many, the ranked pass joins every match instead of the best few.
constexpr int64_t kMaxTopFetch = 100000;

// What a candidate query reads.
enum class Source {
  kAll,         // Every version.
  kKeyword,     // Versions matching :match.
  kKeywordTop,  // The :fetch best-ranked matches of :match, only those joined and filtered.
  kIds,         // The versions in the JSON array :ids, in its order.
  kVectors,     // Versions with a vector in :space; the second column is the vector.
};

// The request's temporal scope and filters, as conditions on v (versions) and m (memories).
std::string ScopeSql(const RecallRequest& request, bool walk_needed) {
  std::string sql;
  if (walk_needed) {
    // Necessary conditions for the bitemporal winner; the walk decides.
    absl::StrAppend(&sql,
                    " AND v.recorded_at_unix_ms <= :tx AND v.valid_from_unix_ms <= :valid"
                    " AND (v.valid_to_unix_ms IS NULL OR v.valid_to_unix_ms > :valid)");
  } else if (request.as_of_unix_ms) {
    absl::StrAppend(&sql,
                    " AND v.recorded_at_unix_ms <= :tx AND (v.superseded_at_unix_ms IS NULL "
                    "OR v.superseded_at_unix_ms > :tx)");
  } else {
    absl::StrAppend(&sql, " AND v.superseded_at_unix_ms IS NULL");
  }
  // A memory superseded by another (temporal/supersession_table.h) is not recalled, as
  // believed from the correction on, unless rewritten since; with valid_at, only from the
  // successor's valid_from on (before it, the predecessor was still true).
  absl::StrAppend(&sql,
                  " AND NOT EXISTS (SELECT 1 FROM supersessions s WHERE s.predecessor_id = "
                  "v.memory_id AND s.at_unix_ms >= v.recorded_at_unix_ms",
                  request.as_of_unix_ms || walk_needed ? " AND s.at_unix_ms <= :tx" : "",
                  walk_needed ? " AND s.valid_from_unix_ms <= :valid" : "", ")");
  const RecallFilters& f = request.filters;
  if (f.category) absl::StrAppend(&sql, " AND m.category = :category");
  if (f.workspace) absl::StrAppend(&sql, " AND m.workspace = :workspace");
  if (f.type) absl::StrAppend(&sql, " AND v.type = :type");
  for (size_t i = 0; i < f.tags.size(); ++i) {
    absl::StrAppend(&sql, " AND EXISTS (SELECT 1 FROM json_each(v.tags_json) WHERE value = :tag", i,
                    ")");
  }
  return sql;
}

// Builds the candidate query (columns: version id, score or vector, memory id) over `source`
// within the request's scope and filters; best BM25 first when ranked, else newest first.
// Parameters are bound by name (BindScope).
// kKeywordTop first keeps only the :fetch best matches, and only those are joined and
// filtered: at 1M memories joining every match of a query's rarer terms (~1,000 rows) took
// 17 ms where ranking them alone took 3 ms.
std::string CandidateSql(Source source, bool ranked, const RecallRequest& request,
                         bool walk_needed) {
  constexpr const char* bm25 = "strata_bm25(fts)";
  std::string sql;
  switch (source) {
    case Source::kKeywordTop:
      absl::StrAppend(
          &sql, "SELECT v.id, f.score AS score, v.memory_id, f.phrases FROM (SELECT rowid, ", bm25,
          " AS score, strata_phrases(fts) AS phrases FROM fts WHERE fts MATCH "
          ":match ORDER BY score DESC, rowid LIMIT :fetch) AS f JOIN versions v ON "
          "v.id = f.rowid JOIN memories m ON m.id = v.memory_id WHERE 1");
      break;
    case Source::kKeyword:
      absl::StrAppend(&sql, "SELECT v.id, ", ranked ? bm25 : "0.0", " AS score, v.memory_id",
                      ranked ? ", strata_phrases(fts)" : "",
                      " FROM fts JOIN versions v ON v.id = fts.rowid "
                      "JOIN memories m ON m.id = v.memory_id WHERE fts MATCH :match");
      break;
    case Source::kAll:
      absl::StrAppend(&sql,
                      "SELECT v.id, 0.0 AS score, v.memory_id FROM versions v "
                      "JOIN memories m ON m.id = v.memory_id WHERE 1");
      break;
    case Source::kIds:
      absl::StrAppend(&sql,
                      "SELECT v.id, c.key AS score, v.memory_id FROM json_each(:ids) AS c "
                      "JOIN versions v ON v.id = c.value JOIN memories m ON m.id = v.memory_id "
                      "WHERE 1");
      break;
    case Source::kVectors:
      absl::StrAppend(&sql,
                      "SELECT v.id, e.vec, v.memory_id FROM versions v "
                      "JOIN memories m ON m.id = v.memory_id JOIN embeddings e "
                      "ON e.version_id = v.id AND e.space_id = :space WHERE 1");
      break;
  }
  absl::StrAppend(&sql, ScopeSql(request, walk_needed));
  switch (source) {
    case Source::kIds:
      return absl::StrCat(sql, " ORDER BY c.key");
    case Source::kVectors:
      return sql;  // Every row is scored.
    case Source::kKeyword:
    case Source::kKeywordTop:
      // Unranked keyword matches come in the index's own (rowid) order, newest first, which
      // needs no sort over what may be most of the index.
      absl::StrAppend(&sql, ranked ? " ORDER BY score DESC, v.id" : " ORDER BY fts.rowid DESC");
      break;
    case Source::kAll:
      absl::StrAppend(&sql, " ORDER BY v.recorded_at_unix_ms DESC, v.id DESC");
      break;
  }
  // Without the walk every row is a result, so SQLite can keep just the top rows.
  if (!walk_needed) absl::StrAppend(&sql, " LIMIT :cap");
  return sql;
}

// Binds the parameters of ScopeSql that `s` has.
void BindScope(store::Stmt& s, const RecallRequest& request) {
  auto bind = [&s](const char* name, auto value) {
    if (const int index = s.ParameterIndex(name); index > 0) s.Bind(index, value);
  };
  // Without as_of, the current belief: every recorded event, including one stamped a
  // millisecond ahead of the clock to keep transaction time strictly increasing.
  bind(":tx", request.as_of_unix_ms.value_or(std::numeric_limits<int64_t>::max()));
  if (request.valid_at_unix_ms) bind(":valid", *request.valid_at_unix_ms);
  const RecallFilters& f = request.filters;
  if (f.category) bind(":category", std::string_view(*f.category));
  if (f.workspace) bind(":workspace", std::string_view(*f.workspace));
  if (f.type) bind(":type", std::string_view(*f.type));
  for (size_t i = 0; i < f.tags.size(); ++i) {
    bind(absl::StrCat(":tag", i).c_str(), std::string_view(f.tags[i]));
  }
}

absl::Status ValidateRequest(const RecallRequest& request, bool have_embedder) {
  if (request.limit < 1 || request.limit > kMaxRecallLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit: must be between 1 and ", kMaxRecallLimit, ", got ", request.limit));
  }
  if (request.offset < 0 || request.offset > kMaxRecallOffset) {
    return absl::InvalidArgumentError(
        absl::StrCat("offset: must be between 0 and ", kMaxRecallOffset, ", got ", request.offset));
  }
  if (request.filters.tags.size() > kMaxFilterTags) {
    return absl::InvalidArgumentError(absl::StrCat("tags: at most ", kMaxFilterTags,
                                                   " tags may be used as a filter, got ",
                                                   request.filters.tags.size()));
  }
  if (request.mode == "auto" || request.mode == "fts5") return absl::OkStatus();
  if (request.mode == "dense" || request.mode == "hybrid") {
    if (have_embedder) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("mode: \"", request.mode,
                     "\" needs an embedder, and this server runs with --embedder none; use "
                     "\"fts5\" or leave mode out"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("mode: must be one of \"auto\", \"fts5\", \"dense\", \"hybrid\", got \"",
                   request.mode.substr(0, 40), "\""));
}

// Every keyword match of a one-word query holds all its words: that is no sign of an exact
// match, and ranking all of them first would make hybrid the keyword arm.
constexpr size_t kMinTermsForExact = 2;
// How deep each arm of a hybrid recall goes before fusion.
constexpr int kHybridDepth = 50;
// Dense over-fetch: the index is asked for this many times what is wanted, growing by the
// same factor while scope and filters reject too many; past kMaxIndexFetch, an exact scan.
constexpr size_t kOverFetch = 4;
constexpr size_t kMinIndexFetch = 40;
constexpr size_t kMaxIndexFetch = 4096;
// How many more index candidates than still wanted are read in scope at a time.
constexpr size_t kScopeSlack = 8;

}  // namespace

absl::StatusOr<RecallResult> Recaller::Recall(const RecallRequest& request) {
  RETURN_IF_ERROR(ValidateRequest(request, vectors_ != nullptr));
  std::string mode = request.mode;
  if (mode == "auto") mode = vectors_ && vectors_->DenseReady() ? "hybrid" : "fts5";
  // A query without words has no meaning to embed: it lists memories, newest first.
  const text::ParsedQuery query = text::ParseQuery(request.query);
  if (query.terms.empty()) mode = "fts5";
  // 1-based ranks after the offset, for the arm that ran alone; none for a listing.
  auto ranks = [&request](size_t n, bool ranked) {
    std::vector<std::optional<int>> out(n);
    for (size_t i = 0; ranked && i < n; ++i) out[i] = request.offset + static_cast<int>(i) + 1;
    return out;
  };

  if (mode == "fts5") {
    ASSIGN_OR_RETURN(std::vector<Hit> hits, SparseArm(request, query, CommonTerms::kFill));
    return Render(hits, ranks(hits.size(), !query.terms.empty()), {}, mode);
  }
  if (mode == "dense") {
    ASSIGN_OR_RETURN(const std::vector<float> query_vector, vectors_->EmbedQuery(request.query));
    ASSIGN_OR_RETURN(std::vector<Hit> hits, DenseArm(request, query_vector, std::nullopt));
    return Render(hits, {}, ranks(hits.size(), true), mode);
  }

  // Hybrid: each arm ranks its best few from the top; fusion orders their union.
  RecallRequest arm = request;
  arm.offset = 0;
  arm.limit = std::min(kMaxRecallLimit, std::max(kHybridDepth, request.offset + request.limit));
  // The dense arm's embedding and index search (CPU only, no database) run on another thread
  // while this one runs the keyword arm.
  struct DenseStart {
    absl::StatusOr<std::vector<float>> query_vector;
    std::optional<std::vector<vector::Neighbor>> neighbors;
  };
  std::future<DenseStart> dense_start =
      std::async(std::launch::async, [this, &request, k = kOverFetch * arm.limit] {
        DenseStart start{.query_vector = vectors_->EmbedQuery(request.query)};
        if (start.query_vector.ok())
          start.neighbors = vectors_->SearchIndex(*start.query_vector, k);
        return start;
      });
  absl::StatusOr<std::vector<Hit>> sparse = SparseArm(arm, query, CommonTerms::kSkip);
  DenseStart started = dense_start.get();
  if (!sparse.ok()) return sparse.status();
  if (!started.query_vector.ok()) return started.query_vector.status();
  ASSIGN_OR_RETURN(std::vector<Hit> dense,
                   DenseArm(arm, *started.query_vector, std::move(started.neighbors)));

  auto arm_hits = [](const std::vector<Hit>& hits) {
    std::vector<ArmHit> out;
    out.reserve(hits.size());
    for (const Hit& h : hits) out.push_back({h.version_id, h.memory_id, h.exact});
    return out;
  };
  const std::vector<FusedHit> fused = FuseByRank(arm_hits(*sparse), arm_hits(dense));
  std::vector<Hit> hits;
  std::vector<std::optional<int>> sparse_ranks, dense_ranks;
  for (size_t i = request.offset; i < fused.size() && hits.size() < size_t(request.limit); ++i) {
    hits.push_back({fused[i].version_id, fused[i].score, fused[i].memory_id});
    sparse_ranks.push_back(fused[i].sparse_rank);
    dense_ranks.push_back(fused[i].dense_rank);
  }
  return Render(hits, sparse_ranks, dense_ranks, mode);
}

absl::StatusOr<RecallResult> Recaller::Render(const std::vector<Hit>& hits,
                                              const std::vector<std::optional<int>>& sparse_ranks,
                                              const std::vector<std::optional<int>>& dense_ranks,
                                              std::string mode) {
  temporal::VersionTable table(db_);
  RecallResult result{.mode = std::move(mode)};
  result.items.reserve(hits.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    ASSIGN_OR_RETURN(temporal::VersionRow row, table.LoadVersion(hits[i].version_id));
    RecallItem item{.version = std::move(row.version), .score = hits[i].score};
    if (i < sparse_ranks.size()) item.fts5_rank = sparse_ranks[i];
    if (i < dense_ranks.size()) item.dense_rank = dense_ranks[i];
    result.items.push_back(std::move(item));
  }
  return result;
}

absl::StatusOr<std::vector<Recaller::Hit>> Recaller::SparseArm(const RecallRequest& request,
                                                               const text::ParsedQuery& query,
                                                               CommonTerms common) {
  const bool ranked = !query.terms.empty();
  ASSIGN_OR_RETURN(const text::SplitTerms split, term_stats_.Split(query.terms));
  // Identifiers are kept whole; a pair of adjacent words only when both are selective: a
  // phrase reads its words' position lists, and a common word's is most of the index.
  std::vector<text::QueryPhrase> phrases;
  uint64_t identifier_bits = 0;
  if (ranked) {
    auto selective = [&split](const std::string& word) {
      return std::find(split.selective.begin(), split.selective.end(), word) !=
             split.selective.end();
    };
    for (const text::QueryPhrase& phrase : query.phrases) {
      const bool identifier = phrase.kind == text::QueryPhrase::Kind::kIdentifier;
      if (!identifier && !std::all_of(phrase.words.begin(), phrase.words.end(), selective)) {
        continue;
      }
      // An identifier of one term is that term: its own bit says it matched. A second phrase
      // for it would cost a second lookup and, for BM25, a second pass over its matches (at
      // 10K memories of Perseus Vault's corpus, 45% more instructions a keyword recall).
      if (identifier && !phrase.prefix) {
        const auto term = std::find(split.selective.begin(), split.selective.end(), phrase.text);
        if (term != split.selective.end()) {
          identifier_bits |= uint64_t{1} << (term - split.selective.begin());
          continue;
        }
      }
      if (identifier) identifier_bits |= uint64_t{1} << (split.selective.size() + phrases.size());
      phrases.push_back(phrase);
    }
  }
  std::vector<Hit> hits;
  absl::flat_hash_set<int64_t> seen;  // Versions already returned or skipped by offset.
  RETURN_IF_ERROR(Collect(request, text::MatchExpression(split.selective, phrases), ranked,
                          request.offset, hits, seen));
  // Exact: every selective term, or an identifier whole.
  const uint64_t term_bits = (uint64_t{1} << split.selective.size()) - 1;
  const bool all_terms_exact = split.selective.size() >= kMinTermsForExact;
  for (Hit& hit : hits) {
    hit.exact = ranked && ((all_terms_exact && (hit.phrases & term_bits) == term_bits) ||
                           (hit.phrases & identifier_bits));
  }
  if (common == CommonTerms::kFill && static_cast<int>(hits.size()) < request.limit &&
      !split.common.empty()) {
    const int skip = std::max(0, request.offset - static_cast<int>(seen.size()));
    RETURN_IF_ERROR(
        Collect(request, text::MatchExpression(split.common), /*ranked=*/false, skip, hits, seen));
  }
  return hits;
}

absl::StatusOr<std::vector<Recaller::Hit>> Recaller::DenseArm(
    const RecallRequest& request, const std::vector<float>& query_vector,
    std::optional<std::vector<vector::Neighbor>> neighbors) {
  const size_t want = static_cast<size_t>(request.offset) + request.limit;
  size_t k = std::max(kMinIndexFetch, kOverFetch * want);
  if (!neighbors) neighbors = vectors_->SearchIndex(query_vector, k);
  // Matches at or below the floor are no evidence (vector/similarity_floor.h).
  const double floor = vectors_->SimilarityFloor();
  auto no_evidence = [floor](const Hit& h) { return h.score <= floor; };
  std::vector<Hit> hits;
  while (neighbors) {
    hits.clear();
    RETURN_IF_ERROR(KeepInScope(request, *neighbors, want, hits));
    if (hits.size() >= want) break;
    // The index's candidates come closest first: once they reach the floor, more would only
    // be weaker, and an unrelated query must not cost an exact scan.
    if (!neighbors->empty() && neighbors->back().similarity <= floor) break;
    // Short: scope and filters rejected too many. Ask the index for more, unless it has given
    // all it can reach (an HNSW graph need not reach every node) or the scope is too
    // selective for it; then score every version in scope.
    k *= kOverFetch;
    if (neighbors->size() < k / kOverFetch || k > kMaxIndexFetch) {
      neighbors.reset();
      break;
    }
    neighbors = vectors_->SearchIndex(query_vector, k);
  }
  if (!neighbors) {
    ASSIGN_OR_RETURN(hits, ExactScan(request, query_vector, want));
  }
  std::erase_if(hits, no_evidence);
  hits.erase(hits.begin(), hits.begin() + std::min(hits.size(), size_t(request.offset)));
  return hits;
}

absl::Status Recaller::KeepInScope(const RecallRequest& request,
                                   const std::vector<vector::Neighbor>& candidates, size_t want,
                                   std::vector<Hit>& hits) {
  const std::string sql =
      CandidateSql(Source::kIds, false, request, request.valid_at_unix_ms.has_value());
  absl::flat_hash_set<int64_t> seen;
  // Closest first, a few more at a time than are still wanted: each candidate read costs a
  // row of versions and one of memories, and most candidates are in scope.
  for (size_t next = 0; next < candidates.size() && hits.size() < want;) {
    const size_t take = std::min(candidates.size() - next, want - hits.size() + kScopeSlack);
    std::string ids = "[";
    for (size_t i = next; i < next + take; ++i) {
      if (i > next) ids += ',';
      absl::StrAppend(&ids, candidates[i].label);
    }
    ids += ']';
    ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare(sql));  // Reset as it goes out of scope.
    s.Bind(s.ParameterIndex(":ids"), std::string_view(ids));
    if (const int cap = s.ParameterIndex(":cap"); cap > 0) {
      s.Bind(cap, static_cast<int64_t>(want - hits.size()));
    }
    BindScope(s, request);
    auto fill = [&candidates, next](store::Stmt& row, Hit& hit) {
      hit.score = candidates[next + static_cast<size_t>(row.Int(1))].similarity;
    };
    RETURN_IF_ERROR(Drain(request, s, fill, 0, want, hits, seen));
    next += take;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Recaller::Hit>> Recaller::ExactScan(
    const RecallRequest& request, const std::vector<float>& query_vector, size_t want) {
  const bool walk_needed = request.valid_at_unix_ms.has_value();
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(CandidateSql(Source::kVectors, false, request, walk_needed)));
  s.Bind(s.ParameterIndex(":space"), vectors_->space().id);
  BindScope(s, request);
  std::vector<float> v(query_vector.size());
  auto fill = [&](store::Stmt& row, Hit& hit) {
    // A vector that does not decode cannot be a match.
    hit.score = vector::Decode(row.Blob(1), v) ? vector::Dot(v, query_vector) : -2.0;
  };
  std::vector<Hit> hits;
  absl::flat_hash_set<int64_t> seen;
  RETURN_IF_ERROR(Drain(request, s, fill, 0, std::numeric_limits<size_t>::max(), hits, seen));
  const size_t keep = std::min(want, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + keep, hits.end(), [](const Hit& a, const Hit& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.version_id < b.version_id;
  });
  hits.resize(keep);
  return hits;
}

absl::Status Recaller::Collect(const RecallRequest& request, const std::string& match, bool ranked,
                               int skip, std::vector<Hit>& hits,
                               absl::flat_hash_set<int64_t>& seen) {
  const bool keyword = !match.empty();
  if (!(keyword && ranked)) return CollectOnce(request, match, ranked, skip, 0, hits, seen);
  // Rank the best few first; fetch more only when scope and filters reject too many.
  const size_t hits_before = hits.size();
  const absl::flat_hash_set<int64_t> seen_before = seen;
  int64_t fetch = int64_t{skip} + request.limit + static_cast<int64_t>(seen.size()) + 8;
  while (true) {
    const bool last = fetch > kMaxTopFetch;
    RETURN_IF_ERROR(CollectOnce(request, match, ranked, skip, last ? 0 : fetch, hits, seen));
    if (last || static_cast<int>(hits.size()) >= request.limit) return absl::OkStatus();
    hits.resize(hits_before);
    seen = seen_before;
    fetch *= 8;
  }
}

absl::Status Recaller::CollectOnce(const RecallRequest& request, const std::string& match,
                                   bool ranked, int skip, int64_t fetch, std::vector<Hit>& hits,
                                   absl::flat_hash_set<int64_t>& seen) {
  const bool keyword = !match.empty();
  const bool walk_needed = request.valid_at_unix_ms.has_value();
  const Source source = !keyword    ? Source::kAll
                        : fetch > 0 ? Source::kKeywordTop
                                    : Source::kKeyword;
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(CandidateSql(source, ranked && keyword, request, walk_needed)));
  if (keyword) s.Bind(s.ParameterIndex(":match"), std::string_view(match));
  if (fetch > 0) s.Bind(s.ParameterIndex(":fetch"), fetch);
  // Rows already seen may come again.
  if (const int cap = s.ParameterIndex(":cap"); cap > 0) {
    s.Bind(cap, int64_t{skip} + request.limit + static_cast<int64_t>(seen.size()));
  }
  BindScope(s, request);
  auto fill = [ranked, keyword](store::Stmt& row, Hit& hit) {
    hit.score = row.Double(1);
    if (ranked && keyword) hit.phrases = static_cast<uint64_t>(row.Int(3));
  };
  return Drain(request, s, fill, skip, static_cast<size_t>(request.limit), hits, seen);
}

template <typename Fill>
absl::Status Recaller::Drain(const RecallRequest& request, store::Stmt& s, Fill fill, int skip,
                             size_t want, std::vector<Hit>& hits,
                             absl::flat_hash_set<int64_t>& seen) {
  const bool walk_needed = request.valid_at_unix_ms.has_value();
  const int64_t tx = request.as_of_unix_ms.value_or(std::numeric_limits<int64_t>::max());
  temporal::VersionTable table(db_);
  // For the walk: each identity's winner at (tx, valid), computed once.
  absl::flat_hash_map<int64_t, std::optional<int64_t>> winner_by_memory;
  while (hits.size() < want) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    const int64_t version_id = s.Int(0);
    const int64_t memory_id = s.Int(2);
    if (seen.contains(version_id)) continue;
    if (walk_needed) {
      auto it = winner_by_memory.find(memory_id);
      if (it == winner_by_memory.end()) {
        ASSIGN_OR_RETURN(const temporal::Timeline timeline, table.LoadTimeline(memory_id));
        std::optional<int64_t> winner;
        if (auto i = temporal::TrueAt(timeline.times, timeline.retractions, tx,
                                      *request.valid_at_unix_ms)) {
          winner = timeline.rows[*i].version_id;
        }
        it = winner_by_memory.emplace(memory_id, winner).first;
      }
      if (it->second != version_id) continue;
    }
    seen.insert(version_id);
    if (skip > 0) {
      --skip;
      continue;
    }
    Hit& hit = hits.emplace_back(Hit{.version_id = version_id, .memory_id = memory_id});
    fill(s, hit);
  }
  return absl::OkStatus();
}

}  // namespace strata::recall
