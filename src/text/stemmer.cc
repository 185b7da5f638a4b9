#include "text/stemmer.h"

#include <libstemmer.h>

#include <array>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "util/sv.h"

namespace strata::text {
namespace {

constexpr std::array<std::string_view, kLanguageCount> kNames = {
    "english", "german", "french",    "spanish", "italian", "portuguese", "dutch",
    "swedish", "danish", "norwegian", "finnish", "russian", "greek"};

// An sb_stemmer keeps state between calls: one per thread and language, made on first use.
class Stemmer {
 public:
  explicit Stemmer(Language language)
      : stemmer_(sb_stemmer_new(kNames[static_cast<int>(language)].data(), "UTF_8")) {}
  ~Stemmer() { sb_stemmer_delete(stemmer_); }
  Stemmer(const Stemmer&) = delete;
  Stemmer& operator=(const Stemmer&) = delete;

  void Stem(std::string_view word, std::string& out) {
    // Null when the library lacks the language or memory ran out: the word is its own stem.
    const sb_symbol* stem =
        stemmer_ == nullptr
            ? nullptr
            : sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(word.data()),
                              static_cast<int>(word.size()));
    if (stem == nullptr) {
      out.assign(word);
    } else {
      out.assign(reinterpret_cast<const char*>(stem), sb_stemmer_length(stemmer_));
    }
  }

 private:
  sb_stemmer* stemmer_;  // Owned; null when it could not be made.
};

// A thread's stemmer of one language and the stems it made recently.
struct CachedStemmer {
  std::unique_ptr<Stemmer> stemmer;
  absl::flat_hash_map<std::string, std::string> stems;
};

}  // namespace

std::string_view LanguageName(Language language) { return kNames[static_cast<int>(language)]; }

const std::string& Stem(Language language, std::string_view word) {
  // Texts repeat their words: a thread's recent stems are kept (Snowball costs ~10 times a
  // lookup), and forgotten all at once when there are many, which bounds the memory (~10 MB a
  // thread, whichever languages fill it: a query stems each word in eleven).
  constexpr size_t kMaxCachedStems = 1 << 16;
  thread_local std::array<CachedStemmer, kLanguageCount> stemmers;
  thread_local size_t cached_stems = 0;
  CachedStemmer& cached = stemmers[static_cast<int>(language)];
  if (auto it = cached.stems.find(ToAbsl(word)); it != cached.stems.end()) return it->second;
  if (cached.stemmer == nullptr) cached.stemmer = std::make_unique<Stemmer>(language);
  if (cached_stems >= kMaxCachedStems) {
    for (CachedStemmer& c : stemmers) c.stems.clear();
    cached_stems = 0;
  }
  std::string stem;
  cached.stemmer->Stem(word, stem);
  ++cached_stems;
  return cached.stems.emplace(std::string(word), std::move(stem)).first->second;
}

}  // namespace strata::text
