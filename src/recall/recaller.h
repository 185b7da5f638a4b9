#pragma once
// Recall: modes, filters, temporal scope and ranking over the keyword arm.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"
#include "text/term_stats.h"

namespace strata::recall {

inline constexpr int kMaxLimit = 1000;
inline constexpr int kMaxOffset = 100000;

// Thread safety: as the Db it borrows.
class Recaller {
 public:
  explicit Recaller(store::Db* db) : db_(db), term_stats_(db) {}

  // Best matches first. An empty query (no words) lists matching memories newest first.
  // Terms present in most of a large index are left out of the ranked search when rarer terms
  // remain (BM25 weighs them ~0); memories matching only those follow, newest first, when the
  // ranked ones are fewer than limit.
  // Errors: InvalidArgument for an unknown or unavailable mode, limit outside [1, 1000],
  // offset outside [0, 100000].
  absl::StatusOr<RecallResult> Recall(const RecallRequest& request);

 private:
  struct Hit {
    int64_t version_id;
    double score;
  };
  // Appends to `hits` the versions matching `match` (every version when empty) within the
  // request's scope and filters, until `hits` holds request.limit. Versions in `seen` are
  // passed over; the first `skip` new ones are only added to `seen`, the rest to both.
  // `ranked`: best BM25 first; else newest first.
  absl::Status Collect(const RecallRequest& request, const std::string& match, bool ranked,
                       int skip, std::vector<Hit>& hits, absl::flat_hash_set<int64_t>& seen);
  // One attempt of Collect. `fetch` > 0: only the `fetch` best-ranked matches are considered.
  absl::Status CollectOnce(const RecallRequest& request, const std::string& match, bool ranked,
                           int skip, int64_t fetch, std::vector<Hit>& hits,
                           absl::flat_hash_set<int64_t>& seen);

  store::Db* db_;  // Not owned; outlives this.
  text::TermStats term_stats_;
};

}  // namespace strata::recall
