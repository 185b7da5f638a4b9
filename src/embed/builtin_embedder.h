#pragma once
// The built-in embedder: no model file, no network, deterministic. Signed feature hashing of
// Snowball-stemmed words, character n-grams and WordNet features (synsets, hypernyms,
// derivations, gloss words) into one unit vector. See docs/decisions.md for what each part
// measured on the labeled recall set.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/embedder.h"

namespace strata::embed {

// Feature weights relative to a word's own stem (1.0). Zero turns a part off.
struct BuiltinWeights {
  float ngram = 0.5f;    // All character n-grams of a word together.
  float lexicon = 0.6f;  // Multiplies each WordNet feature's own weight.
  float bigram = 0.0f;   // Adjacent stems.
  float gloss = 1.0f;    // Multiplies the lexicon's gloss-word features (synsets keep 1).
  // > 0: each word's lexicon features are scaled to this L2 norm (times `lexicon`), so a word
  // with many senses weighs no more than one with few.
  float lexnorm = 0.0f;
};

// `options`: dim (64..4096, default kBuiltinDefaultDim) and, for experiments, the weights
// ngram, lexicon and bigram as decimals. Errors: InvalidArgument naming the option.
absl::StatusOr<std::unique_ptr<Embedder>> MakeBuiltinEmbedder(
    const std::vector<std::pair<std::string, std::string>>& options);

inline constexpr int kBuiltinDefaultDim = 384;

}  // namespace strata::embed
