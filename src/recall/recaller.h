#pragma once
// Recall: modes, filters, temporal scope and ranking over the keyword arm.

#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"

namespace strata::recall {

inline constexpr int kMaxLimit = 1000;
inline constexpr int kMaxOffset = 100000;

// Thread safety: as the Db it borrows.
class Recaller {
 public:
  explicit Recaller(store::Db* db) : db_(db) {}

  // Best matches first. An empty query (no words) lists matching memories newest first.
  // Errors: InvalidArgument for an unknown or unavailable mode, limit outside [1, 1000],
  // offset outside [0, 100000].
  absl::StatusOr<RecallResult> Recall(const RecallRequest& request);

 private:
  store::Db* db_;  // Not owned; outlives this.
};

}  // namespace strata::recall
