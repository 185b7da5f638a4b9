#pragma once
// The built-in embedder: no model file, no network, deterministic. Signed feature hashing of
// Snowball-stemmed words, character n-grams, WordNet features (synsets, hypernyms, derivations,
// gloss words) and the stems of MyThes thesaurus terms into one unit vector. See
// docs/embeddings.md for what each part measured on the labeled recall set.

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
  // The stems of a word's thesaurus terms, which match those stems in other texts
  // (multiplying each term's own weight); relation multipliers for similar, generic
  // (hypernym) and related terms (synonyms keep 1).
  float thesaurus = 0.5f;
  float thsimilar = 1.0f;
  float thgeneric = 1.0f;
  float threlated = 1.0f;
};

// `options`: dim (64..4096, default kBuiltinDefaultDim) and, for experiments, the weights above
// by name (decimals in [0, 10]) and seed (a whole number in [0, 10^6]: other hash functions, to
// tell a real difference from a lucky collision). Errors: InvalidArgument naming the option.
absl::StatusOr<std::unique_ptr<Embedder>> MakeBuiltinEmbedder(
    const std::vector<std::pair<std::string, std::string>>& options);

inline constexpr int kBuiltinDefaultDim = 384;

}  // namespace strata::embed
