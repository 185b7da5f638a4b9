#include "dedup/finder.h"

#include "dedup/signature.h"
#include "text/body_text.h"
#include "util/status_macros.h"

namespace strata::dedup {

absl::StatusOr<std::optional<Match>> DuplicateFinder::Find(const Identity& identity,
                                                           const text::ParsedBody& body,
                                                           const std::vector<int64_t>& keys) {
  ASSIGN_OR_RETURN(std::vector<int64_t> candidates, index_.Candidates(keys, kMaxCandidates));
  ++checks_;
  candidates_verified_ += static_cast<int64_t>(candidates.size());
  ++histogram_[candidates.size()];
  if (candidates.empty()) return std::nullopt;

  const std::vector<uint32_t> trigrams = Trigrams(body.normal_json);
  std::optional<Match> best;
  for (int64_t id : candidates) {
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentityById(id));
    // Band keys are salted with the scope, but a hash collision must not merge across it.
    if (!row || !row->current_version_id || row->identity.category != identity.category ||
        row->identity.workspace != identity.workspace) {
      continue;
    }
    ASSIGN_OR_RETURN(temporal::VersionRow current, versions_.LoadVersion(*row->current_version_id));
    // Stored bodies were parsed when written; this cannot fail short of corruption.
    ASSIGN_OR_RETURN(const text::ParsedBody other, text::ParseBody(current.version.body_json));
    const double similarity = Jaccard(trigrams, Trigrams(other.normal_json));
    if (similarity < threshold_) continue;
    if (!best || similarity > best->similarity ||
        (similarity == best->similarity && id < best->memory_id)) {
      best = Match{.memory_id = id, .similarity = similarity};
    }
  }
  return best;
}

}  // namespace strata::dedup
