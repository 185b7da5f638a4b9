#include "dedup/finder.h"

#include <algorithm>

#include "dedup/signature.h"
#include "text/body_text.h"
#include "util/status_macros.h"

namespace strata::dedup {

absl::StatusOr<Resemblance> DuplicateFinder::Find(const Identity& identity,
                                                  const text::ParsedBody& body,
                                                  const ContentUnits& units,
                                                  const std::vector<int64_t>& keys) {
  ASSIGN_OR_RETURN(std::vector<int64_t> candidates, index_->Candidates(keys, kMaxCandidates));
  ++checks_;
  candidates_verified_ += static_cast<int64_t>(candidates.size());
  ++histogram_[candidates.size()];
  Resemblance out;
  if (candidates.empty()) return out;

  const std::vector<uint32_t> trigrams = Trigrams(body.normal_json);
  const bool may_merge = units.value_units >= kMinMergeUnits;
  auto better = [](const Match& a, const Match& b) {
    return a.similarity > b.similarity || (a.similarity == b.similarity && a.memory_id < b.memory_id);
  };
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
    Match match{.memory_id = id,
                .identity = row->identity,
                .similarity = Jaccard(trigrams, Trigrams(other.normal_json))};
    if (match.similarity < threshold_) continue;
    if (may_merge && AddsNothing(units, Analyze(other))) {
      if (!out.merge || better(match, *out.merge)) out.merge = match;
    } else {
      out.similar.push_back(std::move(match));
    }
  }
  if (out.merge) {
    out.similar.clear();
    return out;
  }
  std::sort(out.similar.begin(), out.similar.end(), better);
  if (out.similar.size() > kMaxSimilar) out.similar.resize(kMaxSimilar);
  return out;
}

}  // namespace strata::dedup
