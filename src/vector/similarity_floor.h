#pragma once
// The dense arm's evidence threshold: how similar two texts about unrelated things come out
// under one embedder. A dense match below it says nothing about the query, so recall does not
// return it (docs/design.md, "Evidence or nothing").

#include "absl/status/statusor.h"
#include "embed/embedder.h"

namespace strata::vector {

// The cosine similarity that 95% of the pairs of a fixed set of 40 sentences on unrelated
// topics (cooking, tides, chess, tax law, ...) stay below, one embedded by `embedder` as a
// query and the other as a document. Embedders differ
// widely: hashed word features put unrelated texts near 0, sentence models near 0.1-0.3, so the
// floor is measured, not chosen. Deterministic for a fingerprint (the probe set is compiled in).
// Errors: the embedder's; Internal for vectors of the wrong size (embed::EmbedAll).
absl::StatusOr<float> MeasureSimilarityFloor(embed::Embedder& embedder);

}  // namespace strata::vector
