#include "text/tokenizer.h"

#include <utf8proc.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "util/sv.h"

namespace strata::text {
namespace {

// ---------------------------------------------------------------------------------------------
// Characters

// Bits, so that a run's classes OR together: a run of them is a word, kLetter | kDigit mixed.
enum AsciiClass : uint8_t { kSeparator = 0, kLetter = 1, kDigit = 2 };

constexpr std::array<AsciiClass, 128> MakeAsciiClasses() {
  std::array<AsciiClass, 128> classes{};
  for (int c = 'A'; c <= 'Z'; ++c) classes[c] = kLetter;
  for (int c = 'a'; c <= 'z'; ++c) classes[c] = kLetter;
  for (int c = '0'; c <= '9'; ++c) classes[c] = kDigit;
  return classes;
}
constexpr std::array<AsciiClass, 128> kAsciiClasses = MakeAsciiClasses();

// The script of a letter (L* or Co), by block: Unicode's Script property is not in utf8proc,
// and the blocks that matter here are few.
Script ScriptOfLetter(int32_t c) {
  if (c < 0x370) return Script::kLatin;
  if (c < 0x400) return Script::kGreek;
  if (c < 0x530) return Script::kCyrillic;
  if (c < 0x1100) return Script::kOther;
  if (c < 0x1200) return Script::kHangul;  // Jamo
  if (c >= 0x1C80 && c < 0x1C90) return Script::kCyrillic;
  if (c >= 0x1D00 && c < 0x1DC0) return Script::kLatin;  // Phonetic extensions
  if (c >= 0x1E00 && c < 0x1F00) return Script::kLatin;
  if (c >= 0x1F00 && c < 0x2000) return Script::kGreek;
  if (c >= 0x2C60 && c < 0x2C80) return Script::kLatin;
  if (c >= 0x2DE0 && c < 0x2E00) return Script::kCyrillic;
  if (c >= 0x2E80 && c < 0x2FE0) return Script::kHan;  // Radicals
  if (c >= 0x3005 && c <= 0x3007) return Script::kHan;  // 々 〆 〇
  if (c >= 0x3021 && c < 0x302A) return Script::kHan;   // Hangzhou numerals
  if (c >= 0x3038 && c < 0x303C) return Script::kHan;
  if (c >= 0x3040 && c < 0x30A0) return Script::kHiragana;
  if (c >= 0x30A0 && c < 0x3100) return Script::kKatakana;
  if (c >= 0x3130 && c < 0x3190) return Script::kHangul;  // Compatibility jamo
  if (c >= 0x31F0 && c < 0x3200) return Script::kKatakana;
  if (c >= 0x3400 && c < 0x4DC0) return Script::kHan;
  if (c >= 0x4E00 && c < 0xA000) return Script::kHan;
  if (c >= 0xA640 && c < 0xA6A0) return Script::kCyrillic;
  if (c >= 0xA720 && c < 0xA800) return Script::kLatin;
  if (c >= 0xA960 && c < 0xA980) return Script::kHangul;
  if (c >= 0xAB30 && c < 0xAB70) return Script::kLatin;
  if (c >= 0xAC00 && c < 0xD800) return Script::kHangul;  // Syllables, jamo extended B
  if (c >= 0xF900 && c < 0xFB00) return Script::kHan;     // Compatibility ideographs
  if (c >= 0xFF21 && c < 0xFF5B) return Script::kLatin;   // Fullwidth
  if (c >= 0xFF66 && c < 0xFFA0) return Script::kKatakana;  // Halfwidth
  if (c >= 0xFFA0 && c < 0xFFDD) return Script::kHangul;    // Halfwidth
  if (c >= 0x20000 && c < 0x40000) return Script::kHan;     // Extensions B and later
  return Script::kOther;
}

// The Katakana-Hiragana prolonged sound mark (ー and halfwidth ｰ) lengthens a vowel of
// either kana: it belongs to the run it is in.
bool IsProlongedSoundMark(int32_t c) { return c == 0x30FC || c == 0xFF70; }

enum class CharKind { kSeparator, kLetter, kDigit, kMark };

CharKind KindOf(int32_t c) {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_CO:
      return CharKind::kLetter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharKind::kDigit;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
      return CharKind::kMark;
    default:
      return CharKind::kSeparator;
  }
}

bool IsAscii(std::string_view s) {
  unsigned char any = 0;  // No early exit: the loop vectorizes, and most texts are ASCII.
  for (char c : s) any |= static_cast<unsigned char>(c);
  return any < 0x80;
}

// `s` through utf8proc with `options` into `out`; `s` itself when utf8proc refuses it (it
// cannot: the words it is given were decoded as valid UTF-8).
void Map(std::string_view s, int options, std::string& out) {
  utf8proc_uint8_t* mapped = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                   static_cast<utf8proc_ssize_t>(s.size()), &mapped,
                   static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (n < 0) {
    out.assign(s);
  } else {
    out.assign(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
  }
  std::free(mapped);
}

// Diacritics go after stemming (Snowball's rules read them: French "é" is a vowel) and only
// from the stemmed scripts: the vowel signs of Devanagari or Thai are marks too, and letters.
void StripDiacritics(std::string_view s, std::string& out) {
  if (IsAscii(s)) {
    out.assign(s);
    return;
  }
  Map(s, UTF8PROC_COMPOSE | UTF8PROC_STRIPMARK, out);
}

// The terms a stemmed word gives in one language: the stem without diacritics, then, for a
// word written with them, the stem of the word without them. Appended to `terms` unless
// already there.
class TermSet {
 public:
  void Add(Language language, std::string_view word, bool ascii) {
    const std::string& stem = Stem(language, word);
    if (ascii && IsAscii(stem)) {
      Insert(stem);
      return;
    }
    StripDiacritics(stem, buffer_);
    Insert(buffer_);
    if (ascii) return;
    StripDiacritics(word, bare_);
    if (bare_ == word) return;
    StripDiacritics(Stem(language, bare_), buffer_);
    Insert(buffer_);
  }
  void Clear() { size_ = 0; }
  size_t size() const { return size_; }
  std::string_view operator[](size_t i) const { return terms_[i]; }

 private:
  void Insert(std::string_view term) {
    if (term.empty()) return;  // Snowball never stems a word to nothing, but FTS5 needs a term.
    for (size_t i = 0; i < size_; ++i) {
      if (terms_[i] == term) return;
    }
    if (size_ == terms_.size()) terms_.emplace_back();
    terms_[size_++].assign(term);
  }

  std::vector<std::string> terms_;  // The first size_ are this word's; the rest are spare.
  size_t size_ = 0;
  std::string buffer_;
  std::string bare_;
};

// ---------------------------------------------------------------------------------------------
// Segmentation

// Bit l: a function word of Language l (the Latin ones).
using LanguageMask = uint16_t;
static_assert(kLatinLanguageCount <= 16);

// What Tokenize needs of an ASCII word, found with one lookup (most words of most texts are
// ASCII words a thread has met before): for telling the language, and its English term.
struct AsciiWordFacts {
  LanguageMask function_word = 0;
  std::string english;
};

struct WordRecord {
  uint32_t offset;  // Of its text in Scratch::arena.
  uint32_t size;
  size_t begin;
  size_t end;
  Script script;
  bool ascii;
  bool has_digit;
  const AsciiWordFacts* facts = nullptr;  // Tokenize's, for an ASCII word it stems.
};

// What one call cuts a text into. A thread reuses one (a text's words are ~100 bytes each way
// and a write tokenizes three texts); a nested call, were there one, gets its own.
struct Scratch {
  std::string arena;
  std::vector<WordRecord> words;
  std::string folded;
  TermSet terms;
  // Kept across calls, cleared between them when large: records point into it.
  absl::node_hash_map<std::string, AsciiWordFacts> ascii_words;
  bool in_use = false;

  std::string_view Text(const WordRecord& w) const { return {arena.data() + w.offset, w.size}; }
};

class ScratchLease {
 public:
  ScratchLease() {
    thread_local Scratch shared;
    if (shared.in_use) {
      own_ = std::make_unique<Scratch>();
      scratch_ = own_.get();
    } else {
      scratch_ = &shared;
    }
    scratch_->in_use = true;
    scratch_->arena.clear();
    scratch_->words.clear();
  }
  ~ScratchLease() {
    // A huge text does not keep its buffers for the life of the thread.
    constexpr size_t kKeptBytes = size_t{1} << 20;
    if (scratch_->arena.capacity() > kKeptBytes) std::string().swap(scratch_->arena);
    if (scratch_->words.capacity() * sizeof(WordRecord) > kKeptBytes) {
      std::vector<WordRecord>().swap(scratch_->words);
    }
    scratch_->in_use = false;
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  Scratch& operator*() const { return *scratch_; }
  Scratch* operator->() const { return scratch_; }

 private:
  std::unique_ptr<Scratch> own_;
  Scratch* scratch_;  // own_, or the thread's.
};

// Cuts a text into Scratch::words. One pass; ASCII bytes take a table lookup each.
class Segmenter {
 public:
  Segmenter(std::string_view text, Scratch& scratch) : text_(text), s_(scratch) {}

  void Run() {
    if (IsAscii(text_)) {
      RunAscii();
      return;
    }
    size_t i = 0;
    while (i < text_.size()) {
      const auto byte = static_cast<unsigned char>(text_[i]);
      if (byte < 0x80) {
        if (kAsciiClasses[byte] == kSeparator) {
          Flush();
          ++i;
        } else {
          i = AddAsciiRun(i);
        }
        continue;
      }
      int32_t c = 0;
      const utf8proc_ssize_t n =
          utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text_.data() + i),
                           static_cast<utf8proc_ssize_t>(text_.size() - i), &c);
      if (n <= 0) {  // Not UTF-8: the byte separates words.
        Flush();
        ++i;
        continue;
      }
      const size_t end = i + static_cast<size_t>(n);
      switch (KindOf(c)) {
        case CharKind::kLetter:
          AddLetter(c, i, end);
          break;
        case CharKind::kDigit:
          AddToWord(i, end, Script::kNone, /*ascii=*/false, /*digit=*/true);
          CopyBytes(i, end);
          break;
        case CharKind::kMark:
          AddMark(i, end);
          break;
        case CharKind::kSeparator:
          Flush();
          break;
      }
      i = end;
    }
    Flush();
  }

 private:
  // An ASCII text's words are its lowercased copy's runs of letters and digits, at the same
  // offsets: no word is copied on its own.
  void RunAscii() {
    std::string& lower = s_.arena;  // Empty: the lease cleared it.
    lower.assign(text_);
    for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    const size_t n = lower.size();
    size_t i = 0;
    while (true) {
      while (i < n && kAsciiClasses[static_cast<unsigned char>(lower[i])] == kSeparator) ++i;
      if (i == n) return;
      const size_t begin = i;
      unsigned classes = 0;
      for (; i < n; ++i) {
        const AsciiClass ascii = kAsciiClasses[static_cast<unsigned char>(lower[i])];
        if (ascii == kSeparator) break;
        classes |= ascii;
      }
      s_.words.push_back(WordRecord{.offset = static_cast<uint32_t>(begin),
                                    .size = static_cast<uint32_t>(i - begin),
                                    .begin = begin,
                                    .end = i,
                                    .script = (classes & kLetter) ? Script::kLatin : Script::kNone,
                                    .ascii = true,
                                    .has_digit = (classes & kDigit) != 0});
    }
  }

  // The run of ASCII letters and digits at `begin`, in one step: most text is made of them.
  // Returns where it ends.
  size_t AddAsciiRun(size_t begin) {
    size_t end = begin;
    unsigned classes = 0;
    while (end < text_.size()) {
      const auto byte = static_cast<unsigned char>(text_[end]);
      if (byte >= 0x80) break;
      const AsciiClass ascii = kAsciiClasses[byte];
      if (ascii == kSeparator) break;
      classes |= ascii;
      ++end;
    }
    AddToWord(begin, end, (classes & kLetter) ? Script::kLatin : Script::kNone, /*ascii=*/true,
              (classes & kDigit) != 0);
    const size_t at = s_.arena.size();
    s_.arena.append(text_.substr(begin, end - begin));
    for (size_t k = at; k < s_.arena.size(); ++k) {
      const char c = s_.arena[k];
      s_.arena[k] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    return end;
  }

  // A character of a bigram run, with the marks after it.
  struct Char {
    size_t begin;
    size_t end;
    bool marked;
  };

  void AddLetter(int32_t c, size_t begin, size_t end) {
    Script script = ScriptOfLetter(c);
    if (IsProlongedSoundMark(c) && !chars_.empty()) script = run_script_;
    if (!IsBigramScript(script)) {
      AddToWord(begin, end, script, /*ascii=*/false, /*digit=*/false);
      CopyBytes(begin, end);
      return;
    }
    if (in_word_ || run_script_ != script) Flush();
    run_script_ = script;
    chars_.push_back({begin, end, false});
  }

  void AddMark(size_t begin, size_t end) {
    if (!chars_.empty()) {
      chars_.back().end = end;
      chars_.back().marked = true;
    } else if (in_word_) {
      word_.ascii = false;
      word_.end = end;
      s_.arena.append(text_.substr(begin, end - begin));
    } else {
      Flush();  // A mark with nothing to mark.
    }
  }

  // Extends the word in progress with [begin, end) (or starts one); the caller appends the
  // bytes. A digit joins any word; a letter of another script than the word's ends it first.
  void AddToWord(size_t begin, size_t end, Script script, bool ascii, bool digit) {
    if (!chars_.empty()) Flush();
    if (in_word_ && script != Script::kNone && word_.script != Script::kNone &&
        script != word_.script) {
      Flush();
    }
    if (!in_word_) {
      in_word_ = true;
      word_ = WordRecord{.offset = static_cast<uint32_t>(s_.arena.size()),
                         .size = 0,
                         .begin = begin,
                         .end = end,
                         .script = script,
                         .ascii = true,
                         .has_digit = false};
    }
    if (word_.script == Script::kNone) word_.script = script;
    word_.ascii &= ascii;
    word_.has_digit |= digit;
    word_.end = end;
  }

  void CopyBytes(size_t begin, size_t end) { s_.arena.append(text_.substr(begin, end - begin)); }

  void Flush() {
    if (in_word_) {
      in_word_ = false;
      word_.size = static_cast<uint32_t>(s_.arena.size() - word_.offset);
      if (!word_.ascii) {
        // Case folding is full (ß is ss, ς is σ) and composes what came decomposed, so that
        // both spellings of "é" stem alike.
        Map(s_.Text(word_), UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD, s_.folded);
        s_.arena.resize(word_.offset);
        s_.arena.append(s_.folded);
        word_.size = static_cast<uint32_t>(s_.folded.size());
        word_.ascii = IsAscii(s_.folded);
      }
      s_.words.push_back(word_);
    }
    if (!chars_.empty()) {
      if (chars_.size() == 1) {
        AddBigram(chars_[0], chars_[0]);
      } else {
        for (size_t k = 0; k + 1 < chars_.size(); ++k) AddBigram(chars_[k], chars_[k + 1]);
      }
      chars_.clear();
    }
    run_script_ = Script::kNone;
  }

  void AddBigram(const Char& first, const Char& last) {
    WordRecord w{.offset = static_cast<uint32_t>(s_.arena.size()),
                 .size = 0,
                 .begin = first.begin,
                 .end = last.end,
                 .script = run_script_,
                 .ascii = false,
                 .has_digit = false};
    const std::string_view bytes = text_.substr(first.begin, last.end - first.begin);
    if (first.marked || last.marked) {
      Map(bytes, UTF8PROC_COMPOSE, s_.folded);  // か + ゙ is が
      s_.arena.append(s_.folded);
    } else {
      s_.arena.append(bytes);
    }
    w.size = static_cast<uint32_t>(s_.arena.size() - w.offset);
    s_.words.push_back(w);
  }

  std::string_view text_;
  Scratch& s_;
  bool in_word_ = false;
  WordRecord word_{};
  Script run_script_ = Script::kNone;  // Of chars_.
  absl::InlinedVector<Char, 16> chars_;  // The bigram run in progress.
};

// ---------------------------------------------------------------------------------------------
// Language

// Very common function words of each Latin-script language, case-folded. A word that is also
// common in English text ("in", "per", "die"... "die" is kept: English prose rarely has it)
// or that is a lone letter ("e", "y") is left out of the others, since English is the default
// and technical English is what a store mostly holds.
constexpr std::string_view kEnglishWords[] = {
    "the",   "and",   "of",   "to",   "a",     "an",   "in",    "is",    "it",    "that",
    "this",  "for",   "on",   "with", "as",    "are",  "was",   "were",  "be",    "been",
    "by",    "at",    "from", "or",   "not",   "but",  "have",  "has",   "had",   "will",
    "would", "can",   "should", "could", "we", "you",  "they",  "he",    "she",   "his",
    "her",   "its",   "our",  "their", "there", "which", "who", "what",  "when",  "where",
    "how",   "all",   "any",  "if",   "so",    "no",   "do",    "does",  "did",   "then",
    "than",  "into",  "about", "after", "also", "per", "via",   "over",  "only",  "more",
    "these", "those", "them", "us",   "my",    "your", "i",     "me",    "up",    "out"};
constexpr std::string_view kGermanWords[] = {
    "der",   "die",    "das",   "und",   "ist",  "nicht", "ein",   "eine",  "einen", "einem",
    "einer", "dem",    "den",   "des",   "mit",  "sich",  "auf",   "für",   "werden", "wird",
    "wurde", "wurden", "sind",  "auch",  "von",  "vom",   "zu",    "zum",   "zur",   "im",
    "wir",   "ich",    "sie",   "es",    "nach", "bei",   "oder",  "aber",  "wenn",  "dass",
    "daß",   "noch",   "nur",   "über",  "kein", "keine", "wie",   "hat",   "haben", "aus",
    "kann",  "können", "mehr",  "sehr",  "schon", "bis",  "diese", "dieser", "uns",  "ihr"};
constexpr std::string_view kFrenchWords[] = {
    "le",    "la",    "les",   "des",  "une",  "et",    "est",   "sont",   "du",   "au",
    "aux",   "avec",  "pour",  "dans", "sur",  "par",   "ne",    "pas",    "que",  "qui",
    "nous",  "vous",  "ils",   "elle", "il",   "ce",    "cette", "ces",    "mais", "ou",
    "où",    "être",  "été",   "très", "aussi", "plus", "leur",  "je",     "à",    "un",
    "de",    "en",    "lui",   "ont",  "avons", "peut", "tout",  "comme",  "fait", "sans"};
constexpr std::string_view kSpanishWords[] = {
    "el",    "la",    "los",   "las",  "del",   "es",    "son",    "que",   "en",     "por",
    "con",   "para",  "una",   "un",   "se",    "lo",    "su",     "sus",   "más",    "pero",
    "como",  "está",  "están", "este", "esta",  "esto",  "ser",    "fue",   "muy",    "también",
    "sobre", "entre", "cuando", "hay", "nos",   "de",    "al",     "puede", "todos",  "donde"};
constexpr std::string_view kItalianWords[] = {
    "il",    "lo",    "la",    "gli",   "le",    "di",    "che",   "è",     "del",   "della",
    "dei",   "delle", "con",   "una",   "un",    "sono",  "da",    "nel",   "nella", "alla",
    "al",    "anche", "ma",    "più",   "questo", "questa", "essere", "ha",  "hanno", "si",
    "ci",    "degli", "sul",   "dal",   "quando", "perché", "stato", "molto", "loro", "tutti"};
constexpr std::string_view kPortugueseWords[] = {
    "os",   "do",    "da",    "dos",   "das",   "de",   "é",     "que",   "em",    "um",
    "uma",  "para",  "com",   "não",   "na",    "nos",  "por",   "se",    "mais",  "mas",
    "ao",   "aos",   "são",   "está",  "foi",   "ser",  "também", "muito", "seu",  "sua",
    "isso", "este",  "esta",  "pelo",  "pela",  "quando", "já",  "há",    "nas",   "onde"};
constexpr std::string_view kDutchWords[] = {
    "de",   "het",   "een",   "en",    "van",   "dat",   "die",   "niet",  "op",    "te",
    "zijn", "voor",  "met",   "ook",   "aan",   "er",    "maar",  "om",    "bij",   "als",
    "wordt", "worden", "naar", "dit",  "wij",   "ze",    "nog",   "geen",  "uit",   "deze",
    "wel",  "heeft", "hebben", "kunnen", "zo",  "dan",   "wat",   "ik",    "hij",   "zich"};
constexpr std::string_view kSwedishWords[] = {
    "och",   "att",   "det",   "som",   "en",    "är",    "av",    "för",   "på",    "med",
    "den",   "har",   "inte",  "om",    "ett",   "de",    "jag",   "så",    "från",  "eller",
    "också", "efter", "när",   "detta", "sig",   "hur",   "vad",   "kan",   "ska",   "vara",
    "blir",  "blev",  "vid",   "sina",  "sin",   "mycket", "alla", "skulle", "dem",  "oss"};
constexpr std::string_view kDanishWords[] = {
    "og",    "det",   "som",   "en",    "er",    "af",    "på",    "med",   "til",   "den",
    "har",   "ikke",  "om",    "et",    "de",    "jeg",   "der",   "så",    "fra",   "eller",
    "også",  "efter", "når",   "dette", "sig",   "hvordan", "hvad", "kan",  "skal",  "mig",
    "meget", "nu",    "blev",  "bliver", "være", "vil",   "hvor",  "havde", "os",    "dem"};
constexpr std::string_view kNorwegianWords[] = {
    "og",    "det",   "som",   "en",    "er",    "av",    "på",    "med",   "til",   "den",
    "har",   "ikke",  "om",    "et",    "de",    "jeg",   "der",   "så",    "fra",   "eller",
    "også",  "etter", "når",   "dette", "seg",   "hvordan", "hva", "kan",   "skal",  "meg",
    "veldig", "nå",   "ble",   "blir",  "være",  "vil",   "hvor",  "hadde", "oss",   "dem"};
constexpr std::string_view kFinnishWords[] = {
    "ja",    "ei",    "se",    "että",  "oli",   "ovat",  "tai",   "kun",   "mutta", "myös",
    "joka",  "jotka", "tämä",  "siitä", "sen",   "hän",   "ne",    "niin",  "kuin",  "mitä",
    "olla",  "ole",   "voi",   "vain",  "jo",    "nyt",   "mikä",  "sitä",  "tämän", "jos",
    "olisi", "ollut", "olen",  "kanssa", "sekä", "eli",   "mukaan", "siis", "koska", "vielä"};

struct LanguageWords {
  Language language;
  const std::string_view* words;
  size_t count;
};
template <size_t N>
constexpr LanguageWords Of(Language language, const std::string_view (&words)[N]) {
  return {language, words, N};
}
constexpr LanguageWords kLanguageWords[] = {
    Of(Language::kEnglish, kEnglishWords),     Of(Language::kGerman, kGermanWords),
    Of(Language::kFrench, kFrenchWords),       Of(Language::kSpanish, kSpanishWords),
    Of(Language::kItalian, kItalianWords),     Of(Language::kPortuguese, kPortugueseWords),
    Of(Language::kDutch, kDutchWords),         Of(Language::kSwedish, kSwedishWords),
    Of(Language::kDanish, kDanishWords),       Of(Language::kNorwegian, kNorwegianWords),
    Of(Language::kFinnish, kFinnishWords),
};
static_assert(std::size(kLanguageWords) == kLatinLanguageCount);

// The longest function word above ("también", "hvordan" are 8 and 7 bytes): longer words are
// not looked up.
constexpr size_t kMaxFunctionWordBytes = 8;
// A text's language is told from its first words; more would cost without changing it.
constexpr size_t kMaxDetectionWords = 512;

const absl::flat_hash_map<std::string_view, LanguageMask>& FunctionWords() {
  static const auto* const kMap = [] {
    auto* map = new absl::flat_hash_map<std::string_view, LanguageMask>;
    for (const LanguageWords& list : kLanguageWords) {
      for (size_t i = 0; i < list.count; ++i) {
        (*map)[list.words[i]] |= LanguageMask{1} << static_cast<int>(list.language);
      }
    }
    return map;
  }();
  return *kMap;
}

Language DetectFromWords(const Scratch& s) {
  const auto& function_words = FunctionWords();
  std::array<int, kLatinLanguageCount> counts{};
  size_t seen = 0;
  for (const WordRecord& w : s.words) {
    if (w.script != Script::kLatin) continue;
    if (++seen > kMaxDetectionWords) break;
    LanguageMask mask = 0;
    if (w.facts != nullptr) {
      mask = w.facts->function_word;
    } else if (w.size <= kMaxFunctionWordBytes && !w.has_digit) {
      const auto it = function_words.find(s.Text(w));
      if (it != function_words.end()) mask = it->second;
    }
    if (mask == 0) continue;
    for (int l = 0; l < kLatinLanguageCount; ++l) counts[l] += (mask >> l) & 1;
  }
  // English wins ties: it is the default, and what keyword recall was built on.
  int best = 0;
  for (int l = 1; l < kLatinLanguageCount; ++l) {
    if (counts[l] > counts[best]) best = l;
  }
  return static_cast<Language>(best);
}

// ---------------------------------------------------------------------------------------------
// Terms

// Beyond this a word is an identifier or noise (a hash, base64), not something to stem.
constexpr size_t kMaxStemmedBytes = 64;

bool IsStemmed(const WordRecord& w) {
  return (w.script == Script::kLatin || w.script == Script::kGreek ||
          w.script == Script::kCyrillic) &&
         !w.has_digit && w.size <= kMaxStemmedBytes;
}

const AsciiWordFacts& FactsOf(Scratch& s, std::string_view word) {
  if (auto it = s.ascii_words.find(ToAbsl(word)); it != s.ascii_words.end()) return it->second;
  AsciiWordFacts facts;
  if (word.size() <= kMaxFunctionWordBytes) {
    const auto& function_words = FunctionWords();
    if (const auto it = function_words.find(word); it != function_words.end()) {
      facts.function_word = it->second;
    }
  }
  StripDiacritics(Stem(Language::kEnglish, word), facts.english);
  return s.ascii_words.emplace(std::string(word), std::move(facts)).first->second;
}

// ---------------------------------------------------------------------------------------------
// Korean particles

// The commonest Korean particles (조사), case and topic markers and the postpositions a noun
// takes: longest first, so that "에서는" goes whole and "에서" before "서". Forms that are also
// common word endings are left out when a query rarely ends in them ("하고", "라고").
constexpr std::string_view kKoreanParticles[] = {
    // Three syllables: a particle and the topic or additive marker after it.
    "에서는", "에서도", "에게는", "에게서", "으로는", "으로도", "까지는", "부터는", "이라도",
    // Two.
    "에서", "에게", "으로", "부터", "까지", "처럼", "보다", "이나", "이랑", "께서", "한테", "마저",
    "조차", "밖에", "에는", "에도", "와는", "과는",
    // One.
    "은", "는", "이", "가", "을", "를", "에", "의", "로", "와", "과", "도", "만", "나", "랑", "께"};

constexpr size_t kHangulSyllableBytes = 3;  // U+AC00..U+D7A3 in UTF-8.
constexpr size_t kMinKoreanStemSyllables = 2;

bool IsHangulSyllables(std::string_view word) {
  if (word.empty() || word.size() % kHangulSyllableBytes != 0) return false;
  for (size_t i = 0; i < word.size(); i += kHangulSyllableBytes) {
    int32_t c = 0;
    const utf8proc_ssize_t n =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(word.data() + i),
                         static_cast<utf8proc_ssize_t>(word.size() - i), &c);
    if (n != static_cast<utf8proc_ssize_t>(kHangulSyllableBytes) || c < 0xAC00 || c > 0xD7A3) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string_view WithoutKoreanParticle(std::string_view word) {
  if (word.size() <= kMinKoreanStemSyllables * kHangulSyllableBytes || !IsHangulSyllables(word)) {
    return word;
  }
  for (std::string_view particle : kKoreanParticles) {
    if (word.size() >= particle.size() + kMinKoreanStemSyllables * kHangulSyllableBytes &&
        word.ends_with(particle)) {
      return word.substr(0, word.size() - particle.size());
    }
  }
  return word;
}

void ForEachWord(std::string_view text, absl::FunctionRef<void(const Word&)> fn) {
  ScratchLease scratch;
  Segmenter(text, *scratch).Run();
  for (const WordRecord& w : scratch->words) {
    fn(Word{.text = scratch->Text(w), .begin = w.begin, .end = w.end, .script = w.script});
  }
}

Language DetectLanguage(std::string_view text) {
  ScratchLease scratch;
  Segmenter(text, *scratch).Run();
  return DetectFromWords(*scratch);
}

bool Tokenize(std::string_view text, TokenizeMode mode,
              absl::FunctionRef<bool(const Token&)> fn) {
  ScratchLease scratch;
  // Cleared before the records of this call point into it; ~100 bytes a word.
  constexpr size_t kMaxCachedWords = 1 << 16;
  if (scratch->ascii_words.size() >= kMaxCachedWords) scratch->ascii_words.clear();
  Segmenter(text, *scratch).Run();
  const bool document = mode == TokenizeMode::kDocument;
  if (document) {
    for (WordRecord& w : scratch->words) {
      if (w.ascii && w.script == Script::kLatin && IsStemmed(w)) {
        w.facts = &FactsOf(*scratch, scratch->Text(w));
      }
    }
  }
  const Language latin = document ? DetectFromWords(*scratch) : Language::kEnglish;
  TermSet& terms = scratch->terms;
  std::string& plain = scratch->folded;
  for (const WordRecord& w : scratch->words) {
    const std::string_view word = scratch->Text(w);
    Token token{.begin = w.begin, .end = w.end};
    if (!IsStemmed(w) || mode == TokenizeMode::kPrefixQuery) {
      if (w.script == Script::kLatin || w.script == Script::kGreek ||
          w.script == Script::kCyrillic) {
        StripDiacritics(word, plain);
        token.term = plain;
      } else {
        token.term = word;
      }
      if (!fn(token)) return false;
      continue;
    }
    if (w.facts != nullptr && latin == Language::kEnglish && !w.facts->english.empty()) {
      token.term = w.facts->english;
      if (!fn(token)) return false;
      continue;
    }
    terms.Clear();
    if (w.script == Script::kCyrillic) {
      terms.Add(Language::kRussian, word, w.ascii);
    } else if (w.script == Script::kGreek) {
      terms.Add(Language::kGreek, word, w.ascii);
    } else if (mode == TokenizeMode::kDocument) {
      terms.Add(latin, word, w.ascii);
    } else {
      for (int l = 0; l < kLatinLanguageCount; ++l) {
        terms.Add(static_cast<Language>(l), word, w.ascii);
      }
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      token.term = terms[i];
      token.colocated = i > 0;
      if (!fn(token)) return false;
    }
  }
  return true;
}

}  // namespace strata::text
