#pragma once
// Recall: modes, filters, temporal scope; the keyword arm, the dense arm and their fusion.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/visibility.h"
#include "text/fts_index.h"
#include "text/fts_query.h"
#include "text/term_stats.h"
#include "util/helper_thread.h"
#include "vector/vector_service.h"

namespace strata::recall {

// Thread safety: as the Db it borrows.
class Recaller {
 public:
  // `vectors` (not owned, may be null: no embedder) serves the dense arm.
  Recaller(store::Db* db, vector::VectorService* vectors)
      : db_(db), vectors_(vectors), term_stats_(db), index_(db) {}

  // Best matches first, in the request's mode:
  // - fts5: BM25. An empty query (no words) lists matching memories newest first. Terms
  //   present in most of a large index are left out of the ranked search when rarer terms
  //   remain (BM25 weighs them ~0); memories matching only those follow, newest first, when
  //   the ranked ones are fewer than limit.
  // - dense: cosine similarity of the embeddings, from the HNSW index with over-fetch past
  //   versions out of scope, or an exact scan when the index is not ready or the scope is
  //   too selective for it. Matches above the embedder's similarity floor, and none unless
  //   the best stands out from chance (vector::BestIsEvidence).
  // - hybrid: both arms at once (the dense search on a thread kept for it), fused by reciprocal
  //   rank (fusion.h).
  // - auto: hybrid when the vector index is ready and holds vectors (or, while it loads, the
  //   store is small enough to scan), else fts5.
  // Errors: InvalidArgument for an unknown or unavailable mode, a limit, offset or tag count
  // out of its bound (strata.h); the embedder's error for a query it cannot embed.
  absl::StatusOr<RecallResult> Recall(const RecallRequest& request);

  // Keeps what recall learned of the keyword index's common terms for the next process
  // (text::TermStats::Save). REQUIRES: no transaction open.
  absl::Status SaveTermStats() { return term_stats_.Save(); }

 private:
  struct Hit {
    int64_t version_id;
    double score = 0;
    int64_t memory_id = 0;
    // The keyword arm's: bit i is set when the match holds phrase i of its MATCH expression
    // (text::KeywordMatch's order: its terms, then its phrases).
    uint64_t phrases = 0;
    bool exact = false;  // An exact keyword match (Recall).
  };
  // Whether the keyword arm, short of hits from the query's selective terms, goes on with
  // matches of its common terms alone (newest first). Alone it does: those are what the
  // query's words find. As an arm of hybrid it does not: such matches carry no keyword
  // evidence (BM25 weighs a term in most of the index at ~0) and would take ranks from the
  // dense arm's in fusion; and listing them newest first reads the whole of those terms'
  // posting lists.
  enum class CommonTerms { kFill, kSkip };
  // The keyword arm over `query`'s terms and phrases (text::ParseQuery of request.query): up
  // to request.limit hits after request.offset, in `visibility` (request's scope); BM25-ranked,
  // or newest first when there are no terms.
  absl::StatusOr<std::vector<Hit>> SparseArm(const RecallRequest& request,
                                             const text::ParsedQuery& query, CommonTerms common,
                                             temporal::Visibility& visibility);
  // The dense arm: up to request.limit hits after request.offset, in `visibility`.
  // `neighbors`, when given, is a first index search already made for `query_vector`.
  absl::StatusOr<std::vector<Hit>> DenseArm(const RecallRequest& request,
                                            const std::vector<float>& query_vector,
                                            std::optional<std::vector<vector::Neighbor>> neighbors,
                                            temporal::Visibility& visibility);
  // A version an arm ranked: its score and, from the keyword arm, its phrase bits.
  struct Candidate {
    int64_t version_id;
    double score;
    uint64_t phrases = 0;
  };
  // Appends to `hits` the visible versions among `candidates` (best first), keeping their
  // order, until `hits` holds `want`; `skip` and `seen` as for Collect.
  absl::Status KeepInScope(temporal::Visibility& visibility, std::span<const Candidate> candidates,
                           int& skip, size_t want, std::vector<Hit>& hits,
                           absl::flat_hash_set<int64_t>& seen);
  // Takes `v` as a hit unless it is in `seen`; the first `skip` new ones (counted down) only
  // go into `seen`, the rest into both. False once `hits` holds `want`.
  static bool Take(const temporal::VisibleVersion& v, double score, uint64_t phrases, int& skip,
                   size_t want, std::vector<Hit>& hits, absl::flat_hash_set<int64_t>& seen);
  absl::StatusOr<RecallResult> Render(const std::vector<Hit>& hits,
                                      const std::vector<std::optional<int>>& sparse_ranks,
                                      const std::vector<std::optional<int>>& dense_ranks,
                                      RecallMode mode);
  // Appends to `hits` the visible versions matching `match` (every version when empty),
  // until `hits` holds `want`. Versions in `seen` are passed over; the first `skip` new ones
  // are only added to `seen`, the rest to both. `ranked`: best BM25 first; else newest first.
  absl::Status Collect(temporal::Visibility& visibility, const text::KeywordMatch& match,
                       bool ranked, int skip, size_t want, std::vector<Hit>& hits,
                       absl::flat_hash_set<int64_t>& seen);

  store::Db* db_;                   // Not owned; outlives this.
  vector::VectorService* vectors_;  // Not owned; may be null.
  text::TermStats term_stats_;
  // Kept across recalls for what it learns (on PostgreSQL, which terms have segments).
  text::FtsIndex index_;
  // Where a hybrid recall's dense search runs beside its keyword arm. Last: it ends, having
  // run what it was handed, before what its tasks use.
  util::HelperThread beside_;
};

}  // namespace strata::recall
