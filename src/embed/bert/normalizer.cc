#include "embed/bert/normalizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <iterator>

namespace strata::embed::bert {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// The character classes the tokenizer asks about, as Hugging Face's tables answer.
enum class CharClass { kNone, kOther, kNonspacingMark, kPunctuation };
using enum CharClass;

struct ClassOverride {
  char32_t first;
  char32_t last;
  CharClass hf_class;
};

// Hugging Face's categories (the unicode_categories crate) are Unicode 8.0; utf8proc 2.8's are
// 15.0. Where they disagree on a class above, theirs wins: the marks, punctuation and format
// characters assigned since 8.0 are kNone to them (not dropped, split or stripped), and three
// characters that changed category since keep their old one (U+166D and U+111C9 punctuation,
// U+1734 a nonspacing mark). Found by putting every code point through both; the test does it
// again (against testdata/bert_codepoints.tsv), so another utf8proc that moves a character
// fails it. Sorted.
constexpr ClassOverride kHfClasses[] = {
    {0x61D, 0x61D, kNone},          {0x7FD, 0x7FD, kNone},
    {0x890, 0x891, kNone},          {0x898, 0x89F, kNone},
    {0x8CA, 0x8E2, kNone},          {0x9FD, 0x9FE, kNone},
    {0xA76, 0xA76, kNone},          {0xAFA, 0xAFF, kNone},
    {0xB55, 0xB55, kNone},          {0xC04, 0xC04, kNone},
    {0xC3C, 0xC3C, kNone},          {0xC77, 0xC77, kNone},
    {0xC84, 0xC84, kNone},          {0xD00, 0xD00, kNone},
    {0xD3B, 0xD3C, kNone},          {0xD81, 0xD81, kNone},
    {0xEBA, 0xEBA, kNone},          {0xECE, 0xECE, kNone},
    {0x166D, 0x166D, kPunctuation}, {0x1734, 0x1734, kNonspacingMark},
    {0x180F, 0x180F, kNone},        {0x1885, 0x1886, kNone},
    {0x1ABF, 0x1ACE, kNone},        {0x1B7D, 0x1B7E, kNone},
    {0x1DF6, 0x1DFB, kNone},        {0x2E43, 0x2E4F, kNone},
    {0x2E52, 0x2E5D, kNone},        {0xA82C, 0xA82C, kNone},
    {0xA8C5, 0xA8C5, kNone},        {0xA8FF, 0xA8FF, kNone},
    {0xA9BD, 0xA9BD, kNone},        {0x10D24, 0x10D27, kNone},
    {0x10EAB, 0x10EAD, kNone},      {0x10EFD, 0x10EFF, kNone},
    {0x10F46, 0x10F50, kNone},      {0x10F55, 0x10F59, kNone},
    {0x10F82, 0x10F89, kNone},      {0x11070, 0x11070, kNone},
    {0x11073, 0x11074, kNone},      {0x110C2, 0x110C2, kNone},
    {0x110CD, 0x110CD, kNone},      {0x111C9, 0x111C9, kPunctuation},
    {0x111CF, 0x111CF, kNone},      {0x1123E, 0x1123E, kNone},
    {0x11241, 0x11241, kNone},      {0x1133B, 0x1133B, kNone},
    {0x11438, 0x1143F, kNone},      {0x11442, 0x11444, kNone},
    {0x11446, 0x11446, kNone},      {0x1144B, 0x1144F, kNone},
    {0x1145A, 0x1145B, kNone},      {0x1145D, 0x1145E, kNone},
    {0x11660, 0x1166C, kNone},      {0x116B9, 0x116B9, kNone},
    {0x1182F, 0x11837, kNone},      {0x11839, 0x1183B, kNone},
    {0x1193B, 0x1193C, kNone},      {0x1193E, 0x1193E, kNone},
    {0x11943, 0x11946, kNone},      {0x119D4, 0x119D7, kNone},
    {0x119DA, 0x119DB, kNone},      {0x119E0, 0x119E0, kNone},
    {0x119E2, 0x119E2, kNone},      {0x11A01, 0x11A0A, kNone},
    {0x11A33, 0x11A38, kNone},      {0x11A3B, 0x11A47, kNone},
    {0x11A51, 0x11A56, kNone},      {0x11A59, 0x11A5B, kNone},
    {0x11A8A, 0x11A96, kNone},      {0x11A98, 0x11A9C, kNone},
    {0x11A9E, 0x11AA2, kNone},      {0x11B00, 0x11B09, kNone},
    {0x11C30, 0x11C36, kNone},      {0x11C38, 0x11C3D, kNone},
    {0x11C3F, 0x11C3F, kNone},      {0x11C41, 0x11C45, kNone},
    {0x11C70, 0x11C71, kNone},      {0x11C92, 0x11CA7, kNone},
    {0x11CAA, 0x11CB0, kNone},      {0x11CB2, 0x11CB3, kNone},
    {0x11CB5, 0x11CB6, kNone},      {0x11D31, 0x11D36, kNone},
    {0x11D3A, 0x11D3A, kNone},      {0x11D3C, 0x11D3D, kNone},
    {0x11D3F, 0x11D45, kNone},      {0x11D47, 0x11D47, kNone},
    {0x11D90, 0x11D91, kNone},      {0x11D95, 0x11D95, kNone},
    {0x11D97, 0x11D97, kNone},      {0x11EF3, 0x11EF4, kNone},
    {0x11EF7, 0x11EF8, kNone},      {0x11F00, 0x11F01, kNone},
    {0x11F36, 0x11F3A, kNone},      {0x11F40, 0x11F40, kNone},
    {0x11F42, 0x11F4F, kNone},      {0x11FFF, 0x11FFF, kNone},
    {0x12FF1, 0x12FF2, kNone},      {0x13430, 0x13440, kNone},
    {0x13447, 0x13455, kNone},      {0x16E97, 0x16E9A, kNone},
    {0x16F4F, 0x16F4F, kNone},      {0x16FE2, 0x16FE2, kNone},
    {0x16FE4, 0x16FE4, kNone},      {0x1CF00, 0x1CF2D, kNone},
    {0x1CF30, 0x1CF46, kNone},      {0x1E000, 0x1E006, kNone},
    {0x1E008, 0x1E018, kNone},      {0x1E01B, 0x1E021, kNone},
    {0x1E023, 0x1E024, kNone},      {0x1E026, 0x1E02A, kNone},
    {0x1E08F, 0x1E08F, kNone},      {0x1E130, 0x1E136, kNone},
    {0x1E2AE, 0x1E2AE, kNone},      {0x1E2EC, 0x1E2EF, kNone},
    {0x1E4EC, 0x1E4EF, kNone},      {0x1E944, 0x1E94A, kNone},
    {0x1E95E, 0x1E95F, kNone},
};

// Where Hugging Face's lowercase (Rust's, Unicode 16) maps a character that utf8proc (Unicode
// 15) leaves alone: `delta` is added to each code point of the range.
struct LowercaseOverride {
  char32_t first;
  char32_t last;
  int32_t delta;
};
constexpr LowercaseOverride kHfLowercase[] = {
    {0x1C89, 0x1C89, 1},      {0xA7CB, 0xA7CB, 0x264 - 0xA7CB},
    {0xA7CC, 0xA7CC, 1},      {0xA7CE, 0xA7CE, 1},
    {0xA7D2, 0xA7D2, 1},      {0xA7D4, 0xA7D4, 1},
    {0xA7DA, 0xA7DA, 1},      {0xA7DC, 0xA7DC, 0x19B - 0xA7DC},
    {0x10D50, 0x10D65, 0x20}, {0x16EA0, 0x16EB8, 0x1B},
};

// Hugging Face's NFD tables are older still: it does not decompose U+11938 (Dives Akuru
// vowel sign O, a decomposition since Unicode 13), a starter, so NFD may stop there.
constexpr char32_t kNotDecomposed = 0x11938;

CharClass ClassOf(char32_t c) {
  // Every override lies above U+0600, and ASCII is most of what the tokenizer sees.
  if (c >= 0x600) {
    const auto* it =
        std::upper_bound(std::begin(kHfClasses), std::end(kHfClasses), c,
                         [](char32_t value, const ClassOverride& o) { return value < o.first; });
    if (it != std::begin(kHfClasses) && c <= std::prev(it)->last) return std::prev(it)->hf_class;
  }
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
      return kOther;  // Not Cn: Hugging Face keeps unassigned code points.
    case UTF8PROC_CATEGORY_MN:
      return kNonspacingMark;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
      return kPunctuation;
    default:
      return kNone;
  }
}

// Tab, newline and carriage return are control characters that count as whitespace.
bool IsCleanedWhitespace(char32_t c) {
  return c == '\t' || c == '\n' || c == '\r' || IsUnicodeWhitespace(c);
}

bool IsDropped(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  return c == 0 || c == kReplacement || ClassOf(c) == kOther;
}

// The CJK ideograph blocks Hugging Face pads with spaces; 0x2B920 (not 0x2B820) is theirs.
bool IsChineseChar(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// ASCII symbols such as '$', '+' and '^' split words too, though Unicode calls them S*.
bool IsPunctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126)) {
    return true;
  }
  return c >= 0x80 && ClassOf(c) == kPunctuation;
}

// Canonical decomposition with canonical ordering, of valid code points.
void AppendNfd(std::u32string_view text, std::u32string& out) {
  if (text.empty()) return;
  const std::string utf8 = EncodeUtf8(text);
  const size_t start = out.size();
  size_t capacity = text.size() + 8;
  for (;;) {
    out.resize(start + capacity);
    const utf8proc_ssize_t needed =
        utf8proc_decompose(reinterpret_cast<const utf8proc_uint8_t*>(utf8.data()),
                           static_cast<utf8proc_ssize_t>(utf8.size()),
                           reinterpret_cast<utf8proc_int32_t*>(out.data() + start),
                           static_cast<utf8proc_ssize_t>(capacity), UTF8PROC_DECOMPOSE);
    if (needed < 0) {  // Cannot happen for valid input; keep the text as it was.
      out.resize(start);
      out.append(text);
      return;
    }
    if (static_cast<size_t>(needed) <= capacity) {
      out.resize(start + static_cast<size_t>(needed));
      return;
    }
    capacity = static_cast<size_t>(needed);
  }
}

std::u32string Nfd(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t piece = 0;
  for (size_t i = text.find(kNotDecomposed); i != std::u32string_view::npos;
       i = text.find(kNotDecomposed, piece)) {
    AppendNfd(text.substr(piece, i - piece), out);
    out.push_back(kNotDecomposed);
    piece = i + 1;
  }
  AppendNfd(text.substr(piece), out);
  return out;
}

// Full lowercase mapping (Rust's char::to_lowercase): U+0130 is the one character whose
// lowercase is two.
void AppendLowercase(char32_t c, std::u32string& out) {
  if (c < 0x80) {
    out.push_back(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    return;
  }
  if (c == 0x130) {
    out += U"i\u0307";
    return;
  }
  for (const LowercaseOverride& o : kHfLowercase) {
    if (c >= o.first && c <= o.last) {
      out.push_back(static_cast<char32_t>(static_cast<int32_t>(c) + o.delta));
      return;
    }
  }
  out.push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
}

}  // namespace

std::u32string DecodeUtf8(std::string_view text, bool* valid) {
  if (valid != nullptr) *valid = true;
  std::u32string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(text.size());
  while (left > 0) {
    utf8proc_int32_t c;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &c);
    if (n > 0) {
      out.push_back(static_cast<char32_t>(c));
      p += n;
      left -= n;
    } else {
      if (valid != nullptr) *valid = false;
      out.push_back(kReplacement);
      p += 1;
      left -= 1;
    }
  }
  return out;
}

void AppendUtf8(char32_t c, std::string& out) {
  utf8proc_uint8_t buffer[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), buffer);
  out.append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
}

std::string EncodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) AppendUtf8(c, out);
  return out;
}

bool IsUnicodeWhitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

std::u32string Normalize(std::u32string_view text, const NormalizerOptions& options) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    if (IsDropped(c)) continue;
    if (IsCleanedWhitespace(c)) {
      out.push_back(' ');
    } else if (options.tokenize_chinese_chars && IsChineseChar(c)) {
      out += {U' ', c, U' '};
    } else {
      out.push_back(c);
    }
  }
  if (options.strip_accents) {
    const std::u32string decomposed = Nfd(out);
    out.clear();
    for (char32_t c : decomposed) {
      if (c < 0x300 || ClassOf(c) != kNonspacingMark) out.push_back(c);
    }
  }
  if (options.lowercase) {
    std::u32string lowered;
    lowered.reserve(out.size());
    for (char32_t c : out) AppendLowercase(c, lowered);
    out = std::move(lowered);
  }
  return out;
}

std::vector<std::u32string_view> PreTokenize(std::u32string_view text) {
  std::vector<std::u32string_view> words;
  size_t word_start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool end = i == text.size();
    const bool space = !end && IsUnicodeWhitespace(text[i]);
    const bool punctuation = !end && !space && IsPunctuation(text[i]);
    if (!end && !space && !punctuation) continue;
    if (i > word_start) words.push_back(text.substr(word_start, i - word_start));
    if (punctuation) words.push_back(text.substr(i, 1));
    word_start = i + 1;
  }
  return words;
}

}  // namespace strata::embed::bert
