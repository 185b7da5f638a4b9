#include "embed/builtin_embedder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "embed/lexicon/feature_ids.h"
#include "embed/lexicon/lexicon.h"
#include "text/analyzer.h"
#include "text/fts_query.h"
#include "text/word_lists.h"
#include "util/hash.h"
#include "util/sv.h"

namespace strata::embed {
namespace {

// The keyword arm's stop words and the embedder's own (text/word_lists.h).
bool IsStopWord(std::string_view word) {
  return text::IsStopWord(word) ||
         text::word_lists::Contains(text::word_lists::kEmbedderStopWords, word);
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Namespaces keep a stem, an n-gram and a lexicon id that happen to share bytes apart. A
// thesaurus term of the lexicon is a stem (feature_ids.h) and goes where stems go.
enum class Kind : uint64_t { kStem = 1, kNgram = 2, kLexicon = 3, kBigram = 4 };

// The code's version, then the compiled-in lexicon's checksum: a rebuild against other WordNet
// or thesaurus files changes the vectors, so it must change the space too. 3: text::Words cuts
// Han, kana and Hangul into bigrams and folds case in every script.
std::string BuiltinVersion() {
  return absl::StrCat("3.", absl::Hex(Lexicon::Get().checksum() & 0xffffffffu, absl::kZeroPad8));
}

class BuiltinEmbedder final : public Embedder {
 public:
  BuiltinEmbedder(int dim, BuiltinWeights weights, uint64_t seed, std::string options)
      : info_{.name = "builtin",
              .version = BuiltinVersion(),
              .dimension = dim,
              .options = std::move(options)},
        weights_(weights),
        seed_(seed) {}

  const EmbedderInfo& info() const override { return info_; }
  int batch_size() const override { return 256; }

  // Both roles alike: a model's prefixes are put on by WithRolePrefixes (registry.cc).
  absl::StatusOr<std::vector<float>> Embed(std::span<const std::string> texts, Role) override {
    std::vector<float> out(texts.size() * info_.dimension, 0.0f);
    for (size_t i = 0; i < texts.size(); ++i) {
      EmbedOne(texts[i], std::span<float>(out.data() + i * info_.dimension, info_.dimension));
    }
    return out;
  }

 private:
  void Add(Kind kind, uint64_t feature, float weight, std::span<float> v) const {
    const uint64_t h =
        Mix(feature * 0x9E3779B97F4A7C15ULL + (static_cast<uint64_t>(kind) | seed_ << 8));
    const size_t index = static_cast<size_t>(h % v.size());
    v[index] += (h >> 63) ? -weight : weight;
  }

  void EmbedOne(std::string_view text, std::span<float> v) const {
    // Repeated words count sublinearly: 1 + ln(tf).
    absl::flat_hash_map<std::string, int> counts;
    std::vector<std::string> order;  // Content words in text order (for bigrams).
    for (std::string& word : text::Words(text)) {
      if (IsStopWord(word)) continue;
      if (++counts[word] == 1) order.push_back(word);
    }
    const bool lexical = weights_.lexicon > 0 || weights_.thesaurus > 0;
    std::vector<LexFeature> lex;
    std::string previous_stem;
    for (const std::string& word : order) {
      const float tf = 1.0f + std::log(static_cast<float>(counts[word]));
      const std::string stem = text::Stem(word);
      Add(Kind::kStem, TermId(stem, TermRelation::kSame), tf, v);
      if (weights_.bigram > 0 && !previous_stem.empty()) {
        Add(Kind::kBigram, Fnv1a64(absl::StrCat(previous_stem, " ", stem)), tf * weights_.bigram,
            v);
      }
      previous_stem = stem;
      if (weights_.ngram > 0) AddNgrams(word, tf * weights_.ngram, v);
      if (lexical) {
        lex.clear();
        Lexicon::Get().Features(word, lex);
        AddLexical(lex, tf, v);
      }
    }
    double norm = 0;
    for (float x : v) norm += double{x} * x;
    if (norm == 0) return;
    const float scale = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : v) x *= scale;
  }

  // A word's lexicon features, `weight` being the word's own stem's: WordNet's in their own
  // namespace, thesaurus terms as the stems they are.
  void AddLexical(const std::vector<LexFeature>& lex, float weight, std::span<float> v) const {
    float lexicon_scale = weight * weights_.lexicon;
    if (weights_.lexnorm > 0 && lexicon_scale > 0) {
      double norm = 0;
      for (const LexFeature& f : lex) {
        if (!IsTermId(f.id)) norm += double{f.weight} * f.weight;
      }
      if (norm > 0) lexicon_scale *= weights_.lexnorm / static_cast<float>(std::sqrt(norm));
    }
    for (const LexFeature& f : lex) {
      if (IsTermId(f.id)) {
        const float w = weight * weights_.thesaurus * RelationWeight(TermRelationOf(f.id));
        if (w > 0) Add(Kind::kStem, TermKey(f.id), w * f.weight, v);
      } else if (lexicon_scale > 0) {
        const float w = IsGlossId(f.id) ? f.weight * weights_.gloss : f.weight;
        Add(Kind::kLexicon, f.id, lexicon_scale * w, v);
      }
    }
  }

  float RelationWeight(TermRelation relation) const {
    switch (relation) {
      case TermRelation::kSame:
        return 1.0f;
      case TermRelation::kSimilar:
        return weights_.thsimilar;
      case TermRelation::kGeneric:
        return weights_.thgeneric;
      case TermRelation::kRelated:
        return weights_.threlated;
    }
    return 0.0f;
  }

  // Character 3- to 5-grams of "<word>", sharing `weight` so a long word does not outweigh
  // its own stem.
  void AddNgrams(std::string_view word, float weight, std::span<float> v) const {
    const std::string padded = absl::StrCat("<", ToAbsl(word), ">");
    int count = 0;
    for (int n = 3; n <= 5; ++n) count += std::max(0, static_cast<int>(padded.size()) - n + 1);
    if (count == 0) return;
    const float each = weight / std::sqrt(static_cast<float>(count));
    for (int n = 3; n <= 5; ++n) {
      for (size_t i = 0; i + n <= padded.size(); ++i) {
        Add(Kind::kNgram, Fnv1a64(std::string_view(padded).substr(i, n)), each, v);
      }
    }
  }

  EmbedderInfo info_;
  BuiltinWeights weights_;
  uint64_t seed_;  // Which hash functions; 0 unless measuring how much hashing matters.
};

absl::StatusOr<double> ParseNumber(const std::string& key, const std::string& value, double lo,
                                   double hi) {
  double x = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), x);
  if (ec != std::errc() || end != value.data() + value.size() || !(x >= lo && x <= hi)) {
    return absl::InvalidArgumentError(absl::StrCat("embedder builtin: option ", key, "=", value,
                                                   ": expected a number in [", lo, ", ", hi, "]"));
  }
  return x;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Embedder>> MakeBuiltinEmbedder(
    const std::vector<std::pair<std::string, std::string>>& options) {
  int dim = kBuiltinDefaultDim;
  uint64_t seed = 0;
  BuiltinWeights weights;
  std::vector<std::string> recorded;  // Everything that changes vectors, sorted below.
  for (const auto& [key, value] : options) {
    if (key == "dim") {
      auto x = ParseNumber(key, value, 64, 4096);
      if (!x.ok()) return x.status();
      dim = static_cast<int>(*x);
      continue;  // The dimension is in the fingerprint already.
    }
    if (key == "seed") {
      auto x = ParseNumber(key, value, 0, 1e6);
      if (!x.ok()) return x.status();
      if (*x != std::floor(*x)) {
        return absl::InvalidArgumentError(
            absl::StrCat("embedder builtin: option seed=", value, ": expected a whole number"));
      }
      seed = static_cast<uint64_t>(*x);
      recorded.push_back(absl::StrCat(key, "=", value));
      continue;
    }
    float* weight = key == "ngram"       ? &weights.ngram
                    : key == "lexicon"   ? &weights.lexicon
                    : key == "bigram"    ? &weights.bigram
                    : key == "gloss"     ? &weights.gloss
                    : key == "lexnorm"   ? &weights.lexnorm
                    : key == "thesaurus" ? &weights.thesaurus
                    : key == "thsimilar" ? &weights.thsimilar
                    : key == "thgeneric" ? &weights.thgeneric
                    : key == "threlated" ? &weights.threlated
                                         : nullptr;
    if (weight == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "embedder builtin: unknown option \"", key,
          "\" (known: dim, seed, ngram, lexicon, bigram, gloss, lexnorm, thesaurus, thsimilar, "
          "thgeneric, threlated)"));
    }
    auto x = ParseNumber(key, value, 0, 10);
    if (!x.ok()) return x.status();
    *weight = static_cast<float>(*x);
    recorded.push_back(absl::StrCat(key, "=", value));
  }
  std::sort(recorded.begin(), recorded.end());
  return std::make_unique<BuiltinEmbedder>(dim, weights, seed, absl::StrJoin(recorded, ","));
}

}  // namespace strata::embed
