#include "recall/recaller.h"

#include <algorithm>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "recall/fusion.h"
#include "temporal/version_table.h"
#include "text/fts_index.h"
#include "text/fts_query.h"
#include "util/status_macros.h"
#include "util/sv.h"
#include "vector/exact_scan.h"

namespace strata {

const char* RecallModeName(RecallMode mode) {
  switch (mode) {
    case RecallMode::kAuto:
      return "auto";
    case RecallMode::kFts5:
      return "fts5";
    case RecallMode::kDense:
      return "dense";
    case RecallMode::kHybrid:
      return "hybrid";
  }
  return "unknown";
}

std::optional<RecallMode> RecallModeNamed(std::string_view name) {
  for (RecallMode mode : kRecallModes) {
    if (name == RecallModeName(mode)) return mode;
  }
  return std::nullopt;
}

namespace recall {
namespace {

temporal::ReadScope ReadScopeOf(const RecallRequest& request) {
  return {.as_of_unix_ms = request.as_of_unix_ms,
          .valid_at_unix_ms = request.valid_at_unix_ms,
          .filters = request.filters};
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
  if (request.mode == RecallMode::kDense || request.mode == RecallMode::kHybrid) {
    if (have_embedder) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("mode: \"", RecallModeName(request.mode),
                     "\" needs an embedder, and this server runs with --embedder none; use "
                     "\"fts5\" or leave mode out"));
  }
  return absl::OkStatus();
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
// How many index candidates are read in scope at a time while `still_wanted` are: a few more.
constexpr size_t ScopeRead(size_t still_wanted) { return still_wanted + 8; }

}  // namespace

absl::StatusOr<RecallResult> Recaller::Recall(const RecallRequest& request) {
  RETURN_IF_ERROR(ValidateRequest(request, vectors_ != nullptr));
  RecallMode mode = request.mode;
  if (mode == RecallMode::kAuto) {
    mode = vectors_ && vectors_->DenseReady() ? RecallMode::kHybrid : RecallMode::kFts5;
  }
  // A query without words has no meaning to embed: it lists memories, newest first.
  const text::ParsedQuery query = text::ParseQuery(request.query);
  if (query.terms.empty()) mode = RecallMode::kFts5;
  // 1-based ranks after the offset, for the arm that ran alone; none for a listing.
  auto ranks = [&request](size_t n, bool ranked) {
    std::vector<std::optional<int>> out(n);
    for (size_t i = 0; ranked && i < n; ++i) out[i] = request.offset + static_cast<int>(i) + 1;
    return out;
  };

  temporal::Visibility visibility(db_, ReadScopeOf(request));
  if (mode == RecallMode::kFts5) {
    ASSIGN_OR_RETURN(std::vector<Hit> hits,
                     SparseArm(request, query, CommonTerms::kFill, visibility));
    return Render(hits, ranks(hits.size(), !query.terms.empty()), {}, mode);
  }
  if (mode == RecallMode::kDense) {
    ASSIGN_OR_RETURN(const std::vector<float> query_vector, vectors_->EmbedQuery(request.query));
    ASSIGN_OR_RETURN(std::vector<Hit> hits,
                     DenseArm(request, query_vector, std::nullopt, visibility));
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
  std::future<DenseStart> dense_start = beside_.Run([this, &request, k = kOverFetch * arm.limit] {
    DenseStart start{.query_vector = vectors_->EmbedQuery(request.query)};
    if (start.query_vector.ok()) start.neighbors = vectors_->SearchIndex(*start.query_vector, k);
    return start;
  });
  // The search reads `request`: it ends before this returns, whichever way.
  const absl::Cleanup searched = [&dense_start] {
    if (dense_start.valid()) dense_start.wait();
  };
  // The dense arm's first candidates (as many as its first KeepInScope takes) are read in
  // scope with the keyword arm's first page: one read of visibility where two were.
  std::optional<DenseStart> started;
  const auto join = [&started, &dense_start]() -> DenseStart& {
    if (!started) started = dense_start.get();
    return *started;
  };
  visibility.Expect([&join, first_read = ScopeRead(size_t(arm.limit))] {
    std::vector<int64_t> ids;
    if (const auto& neighbors = join().neighbors) {
      for (const vector::Neighbor& n : *neighbors) {
        if (ids.size() == first_read) break;
        ids.push_back(n.label);
      }
    }
    return ids;
  });
  absl::StatusOr<std::vector<Hit>> sparse = SparseArm(arm, query, CommonTerms::kSkip, visibility);
  DenseStart& dense_started = join();
  if (!sparse.ok()) return sparse.status();
  if (!dense_started.query_vector.ok()) return dense_started.query_vector.status();
  ASSIGN_OR_RETURN(
      std::vector<Hit> dense,
      DenseArm(arm, *dense_started.query_vector, std::move(dense_started.neighbors), visibility));

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
                                              RecallMode mode) {
  std::vector<int64_t> ids;
  ids.reserve(hits.size());
  for (const Hit& hit : hits) ids.push_back(hit.version_id);
  ASSIGN_OR_RETURN(std::vector<temporal::VersionRow> rows,
                   temporal::VersionTable(db_).LoadVersionsById(ids));
  RecallResult result{.mode = mode};
  result.items.reserve(hits.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    RecallItem item{.version = std::move(rows[i].version), .score = hits[i].score};
    if (i < sparse_ranks.size()) item.fts5_rank = sparse_ranks[i];
    if (i < dense_ranks.size()) item.dense_rank = dense_ranks[i];
    result.items.push_back(std::move(item));
  }
  return result;
}

absl::StatusOr<std::vector<Recaller::Hit>> Recaller::SparseArm(const RecallRequest& request,
                                                               const text::ParsedQuery& query,
                                                               CommonTerms common,
                                                               temporal::Visibility& visibility) {
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
  const size_t want = static_cast<size_t>(request.limit);
  std::vector<Hit> hits;
  absl::flat_hash_set<int64_t> seen;  // Versions already returned or skipped by offset.
  RETURN_IF_ERROR(Collect(
      visibility, text::KeywordMatch{.terms = split.selective, .phrases = std::move(phrases)},
      ranked, request.offset, want, hits, seen));
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
    RETURN_IF_ERROR(Collect(visibility, text::KeywordMatch{.terms = split.common},
                            /*ranked=*/false, skip, want, hits, seen));
  }
  return hits;
}

absl::StatusOr<std::vector<Recaller::Hit>> Recaller::DenseArm(
    const RecallRequest& request, const std::vector<float>& query_vector,
    std::optional<std::vector<vector::Neighbor>> neighbors, temporal::Visibility& visibility) {
  const size_t want = static_cast<size_t>(request.offset) + request.limit;
  size_t k = std::max(kMinIndexFetch, kOverFetch * want);
  if (!neighbors) neighbors = vectors_->SearchIndex(query_vector, k);
  // Matches at or below the embedder's floor are no evidence (vector/similarity_floor.h); and
  // none is unless the best stands out from what this query scores by chance against the
  // store (vector/chance_level.h): the best of many unrelated memories scores high.
  const double floor = vectors_->SimilarityFloor();
  std::optional<vector::ChanceLevel> chance = vectors_->IndexChance(query_vector);
  auto stands_out = [&floor, &chance](double best) {
    return chance ? vector::BestIsEvidence(best, floor, *chance) : best > floor;
  };
  std::vector<Hit> hits;
  std::vector<Candidate> candidates;
  while (neighbors) {
    hits.clear();
    candidates.clear();
    for (const vector::Neighbor& n : *neighbors) candidates.push_back({n.label, n.similarity});
    absl::flat_hash_set<int64_t> seen;
    int skip = 0;
    RETURN_IF_ERROR(KeepInScope(visibility, candidates, skip, want, hits, seen));
    if (hits.size() >= want) break;
    // The index's candidates come closest first: once they reach the floor, more would only
    // be weaker; and when even the closest does not stand out, none in scope will. An
    // unrelated query must not cost an exact scan.
    if (!neighbors->empty() &&
        (neighbors->back().similarity <= floor || !stands_out(neighbors->front().similarity))) {
      break;
    }
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
    ASSIGN_OR_RETURN(vector::ScanResult scan,
                     vector::ExactScan(visibility, vectors_->space().id, query_vector, want));
    // What is in scope, scored whole: the chance level over exactly the versions the best
    // match was chosen among.
    chance = scan.chance;
    hits.clear();
    for (const vector::ScoredVersion& v : scan.best) {
      hits.push_back({.version_id = v.version_id, .score = v.similarity, .memory_id = v.memory_id});
    }
  }
  if (!hits.empty() && !stands_out(hits.front().score)) hits.clear();
  std::erase_if(hits, [floor](const Hit& h) { return h.score <= floor; });
  hits.erase(hits.begin(), hits.begin() + std::min(hits.size(), size_t(request.offset)));
  return hits;
}

absl::Status Recaller::KeepInScope(temporal::Visibility& visibility,
                                   std::span<const Candidate> candidates, int& skip, size_t want,
                                   std::vector<Hit>& hits, absl::flat_hash_set<int64_t>& seen) {
  // Best first, a few more at a time than are still wanted: each candidate read costs a row
  // of versions and one of memories, and most candidates are in scope.
  std::vector<int64_t> ids;
  for (size_t next = 0; next < candidates.size() && hits.size() < want;) {
    const size_t still_wanted = static_cast<size_t>(skip) + want - hits.size();
    const size_t take = std::min(candidates.size() - next, ScopeRead(still_wanted));
    ids.clear();
    for (size_t i = next; i < next + take; ++i) ids.push_back(candidates[i].version_id);
    RETURN_IF_ERROR(visibility.Filter(ids, [&](size_t i, const temporal::VisibleVersion& v) {
      const Candidate& c = candidates[next + i];
      return Take(v, c.score, c.phrases, skip, want, hits, seen);
    }));
    next += take;
  }
  return absl::OkStatus();
}

bool Recaller::Take(const temporal::VisibleVersion& v, double score, uint64_t phrases, int& skip,
                    size_t want, std::vector<Hit>& hits, absl::flat_hash_set<int64_t>& seen) {
  if (!seen.insert(v.version_id).second) return true;
  if (skip > 0) {
    --skip;
    return true;
  }
  hits.push_back(
      {.version_id = v.version_id, .score = score, .memory_id = v.memory_id, .phrases = phrases});
  return hits.size() < want;
}

absl::Status Recaller::Collect(temporal::Visibility& visibility, const text::KeywordMatch& match,
                               bool ranked, int skip, size_t want, std::vector<Hit>& hits,
                               absl::flat_hash_set<int64_t>& seen) {
  if (match.empty()) {  // A listing: every visible version, newest first.
    if (hits.size() >= want) return absl::OkStatus();
    return visibility.Newest(
        static_cast<size_t>(skip) + want + seen.size(),
        [&](const temporal::VisibleVersion& v) { return Take(v, 0.0, 0, skip, want, hits, seen); });
  }
  // Matches a page at a time, best BM25 first (the index ranks them alone) or newest first
  // (its own order); the next page only when scope and filters rejected too many. At 1M
  // memories joining every match of a query's rarer terms (~1,000 rows) to their versions
  // took 17 ms where ranking them alone took 3 ms.
  int64_t page_size = int64_t{skip} + static_cast<int64_t>(ScopeRead(want + seen.size()));
  int64_t ranked_before = 0;     // Ranked: matches already paged through.
  std::optional<int64_t> below;  // Newest first: the last page's oldest match.
  std::vector<Candidate> candidates;
  while (hits.size() < want) {
    candidates.clear();
    if (ranked) {
      ASSIGN_OR_RETURN(const std::vector<text::RankedMatch> page,
                       index_.Rank(match, ranked_before, page_size));
      for (const text::RankedMatch& m : page) {
        candidates.push_back({m.version_id, m.score, m.phrases});
      }
      ranked_before += page_size;
    } else {
      ASSIGN_OR_RETURN(const std::vector<int64_t> page,
                       index_.NewestMatches(match, below, page_size));
      for (int64_t id : page) candidates.push_back({id, 0.0});
      if (!page.empty()) below = page.back();
    }
    RETURN_IF_ERROR(KeepInScope(visibility, candidates, skip, want, hits, seen));
    if (static_cast<int64_t>(candidates.size()) < page_size) break;  // No more matches.
    page_size *= 8;
  }
  return absl::OkStatus();
}

}  // namespace recall
}  // namespace strata
