// embed::bert's normalizer and pre-tokenizer: every code point against Hugging Face's
// (testdata/bert_codepoints.tsv, from tools/golden/bert_tokenizer/generate.mjs), then the rules
// one at a time, and UTF-8 decoding of bad input.

#include "embed/bert/normalizer.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::embed::bert {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr NormalizerOptions kUncased = {};
constexpr NormalizerOptions kCased = {.lowercase = false, .strip_accents = false};

std::string Hex(std::u32string_view text) {
  std::string out;
  char buffer[16];
  for (char32_t c : text) {
    std::snprintf(buffer, sizeof buffer, out.empty() ? "%x" : " %x", static_cast<unsigned>(c));
    out += buffer;
  }
  return out;
}

// The generator's CodePointLine, from ours.
std::string CodePointLine(char32_t c) {
  const std::u32string alone(1, c);
  const std::u32string cased = Normalize(alone, kCased);
  char split = 'n';
  if (cased == alone) split = "wsp"[PreTokenize(U"a" + alone + U"b").size() - 1];
  char cp[16];
  std::snprintf(cp, sizeof cp, "%x", static_cast<unsigned>(c));
  return std::string(cp) + "\t" + Hex(Normalize(alone, kUncased)) + "\t" + Hex(cased) + "\t" +
         split + "\n";
}

TEST(BertNormalizer, EveryCodePointAsHuggingFace) {
  std::ifstream in(STRATA_TESTS_DIR "/embed/testdata/bert_codepoints.tsv");
  ASSERT_TRUE(in) << "testdata/bert_codepoints.tsv is missing";
  std::vector<std::string> wrong;
  unsigned block = 0;
  unsigned expected = 0;
  int blocks = 0;
  while (in >> std::hex >> block >> expected) {
    uint32_t hash = 0x811c9dc5;
    for (char32_t c = block; c < block + 1024; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      for (char byte : CodePointLine(c)) {
        hash = (hash ^ static_cast<unsigned char>(byte)) * 16777619u;
      }
    }
    if (hash != expected) {
      char range[32];
      std::snprintf(range, sizeof range, "%x %x", block, block + 1023);
      wrong.push_back(range);
    }
    ++blocks;
  }
  EXPECT_EQ(blocks, 0x110000 / 1024);
  // To see a block: `node generate.mjs --dump FROM TO` against CodePointLine's output.
  EXPECT_THAT(wrong, IsEmpty()) << "blocks of code points normalized unlike Hugging Face";
}

TEST(BertNormalizer, DropsControlsAndMakesWhitespaceSpaces) {
  EXPECT_EQ(Normalize(U"a\tb\nc\rd\u3000e\u00a0f", kCased), U"a b c d e f");
  // NUL, U+FFFD, other controls (vertical tab and form feed too), format characters (soft
  // hyphen, zero-width space, BOM) and private use go; unassigned code points stay.
  EXPECT_EQ(Normalize(std::u32string(U"a\0b", 3) + U"\ufffd\u000b\u000c\u00ad\u200b\ufeff\ue000c",
                      kCased),
            U"abc");
  EXPECT_EQ(Normalize(U"a\u0378b", kCased), U"a\u0378b");
}

TEST(BertNormalizer, SpacesOutCjkIdeographsOnly) {
  EXPECT_EQ(Normalize(U"中文abc", kCased), U" 中  文 abc");
  EXPECT_EQ(Normalize(U"ひらがな", kCased), U"ひらがな");
  // Hugging Face's ranges skip U+2B820..U+2B91F.
  EXPECT_EQ(Normalize(U"\U0002B820\U0002B920", kCased), U"\U0002B820 \U0002B920 ");
  EXPECT_EQ(Normalize(U"中", {.tokenize_chinese_chars = false}), U"中");
}

TEST(BertNormalizer, StripsAccentsThenLowercases) {
  EXPECT_EQ(Normalize(U"Crème Brûlée", kUncased), U"creme brulee");
  EXPECT_EQ(Normalize(U"Crème", {.lowercase = true, .strip_accents = false}), U"crème");
  EXPECT_EQ(Normalize(U"Crème", {.lowercase = false, .strip_accents = true}), U"Creme");
  // No decomposition: kept.
  EXPECT_EQ(Normalize(U"Łódź ß", kUncased), U"łodz ß");
  // İ: NFD takes the dot off before lowercasing; without NFD it lowercases to two.
  EXPECT_EQ(Normalize(U"İ", kUncased), U"i");
  EXPECT_EQ(Normalize(U"İ", {.lowercase = true, .strip_accents = false}), U"i\u0307");
  // One character at a time: no final sigma.
  EXPECT_EQ(Normalize(U"ΟΔΟΣ", kUncased), U"οδοσ");
}

TEST(BertPreTokenizer, SplitsOnWhitespaceAndIsolatesPunctuation) {
  const std::u32string text = U"Hey friend!     How are you?!?";
  EXPECT_THAT(PreTokenize(text),
              ElementsAre(U"Hey", U"friend", U"!", U"How", U"are", U"you", U"?", U"!", U"?"));
  // ASCII symbols split though Unicode calls them symbols; other symbols do not.
  EXPECT_THAT(PreTokenize(U"a$b+c€d"), ElementsAre(U"a", U"$", U"b", U"+", U"c€d"));
  EXPECT_THAT(PreTokenize(U"«x»—y"), ElementsAre(U"«", U"x", U"»", U"—", U"y"));
  EXPECT_THAT(PreTokenize(U"   "), IsEmpty());
}

TEST(DecodeUtf8, ReplacesEachBadByte) {
  bool valid = true;
  EXPECT_EQ(DecodeUtf8("a\xff"
                       "b",
                       &valid),
            U"a\ufffdb");
  EXPECT_FALSE(valid);
  // A truncated sequence, an overlong '/', an encoded surrogate, a code point past U+10FFFF.
  EXPECT_EQ(DecodeUtf8("\xe4\xb8"), U"\ufffd\ufffd");
  EXPECT_EQ(DecodeUtf8("\xc0\xaf"), U"\ufffd\ufffd");
  EXPECT_EQ(DecodeUtf8("\xed\xa0\x80"), U"\ufffd\ufffd\ufffd");
  EXPECT_EQ(DecodeUtf8("\xf4\x90\x80\x80"), U"\ufffd\ufffd\ufffd\ufffd");
  EXPECT_EQ(DecodeUtf8("\xe4\xb8\xad", &valid), U"中");
  EXPECT_TRUE(valid);
  EXPECT_EQ(EncodeUtf8(U"中😀"), "\xe4\xb8\xad\xf0\x9f\x98\x80");
}

}  // namespace
}  // namespace strata::embed::bert
