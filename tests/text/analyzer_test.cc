// Tests of text/analyzer.h: how text is cut into words, stemmed, and sorted into filler,
// negations and content terms (the embedder and the near-duplicate rule rely on all four).

#include "text/analyzer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace strata::text {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// ---------------------------------------------------------------------------------------------
// Words

TEST(Words, AreLowercaseRunsOfLettersAndDigitsInTextOrder) {
  EXPECT_THAT(Words("Hello, World! Again?"), ElementsAre("hello", "world", "again"));
  EXPECT_THAT(Words("  tabs\tand\nnewlines\r\n"), ElementsAre("tabs", "and", "newlines"));
  EXPECT_THAT(Words("MiXeD CaSe"), ElementsAre("mixed", "case"));
}

TEST(Words, KeepRepeats) { EXPECT_THAT(Words("go go Go"), ElementsAre("go", "go", "go")); }

TEST(Words, DigitsArePartOfWordsAndOtherAsciiSplitsThem) {
  EXPECT_THAT(Words("v2 release 2026"), ElementsAre("v2", "release", "2026"));
  EXPECT_THAT(Words("v2.19.1"), ElementsAre("v2", "19", "1"));
  EXPECT_THAT(Words("well-known don't a_b x/y"),
              ElementsAre("well", "known", "don", "t", "a", "b", "x", "y"));
}

TEST(Words, AreTheKeywordIndexsWordsUnstemmed) {
  EXPECT_THAT(Words("na\xc3\xafve caf\xc3\xa9"), ElementsAre("na\xc3\xafve", "caf\xc3\xa9"));
  // Every alphabet is case-folded: É is é.
  EXPECT_THAT(Words("\xc3\x89T\xc3\x89"), ElementsAre("\xc3\xa9t\xc3\xa9"));
  // An em dash is punctuation.
  EXPECT_THAT(Words("a\xe2\x80\x94"
                    "b"),
              ElementsAre("a", "b"));
  // 数据库 is the bigrams 数据 据库.
  EXPECT_THAT(Words("\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93 db"),
              ElementsAre("\xe6\x95\xb0\xe6\x8d\xae", "\xe6\x8d\xae\xe5\xba\x93", "db"));
}

TEST(Words, LongerThanTheLimitAreDropped) {
  const std::string longest(kMaxWordBytes, 'a');
  const std::string too_long(kMaxWordBytes + 1, 'b');
  EXPECT_EQ(kMaxWordBytes, 40u);
  EXPECT_THAT(Words(longest + " " + too_long + " end"), ElementsAre(longest, "end"));
  // The limit is in bytes: 20 two-byte characters are 40 bytes, 21 are 41.
  std::string twenty, twenty_one;
  for (int i = 0; i < 20; ++i) twenty += "\xc3\xa9";
  twenty_one = twenty + "\xc3\xa9";
  EXPECT_THAT(Words(twenty + " " + twenty_one), ElementsAre(twenty));
}

TEST(Words, TextWithoutWordsHasNone) {
  EXPECT_THAT(Words(""), IsEmpty());
  EXPECT_THAT(Words(" \t\n"), IsEmpty());
  EXPECT_THAT(Words("!?.,;:-- () [] {} \"'"), IsEmpty());
}

// ---------------------------------------------------------------------------------------------
// Stem

TEST(Stem, IsTheSnowballEnglishStem) {
  EXPECT_EQ(Stem("prefers"), "prefer");
  EXPECT_EQ(Stem("preferred"), "prefer");
  EXPECT_EQ(Stem("prefer"), "prefer");
  EXPECT_EQ(Stem("running"), "run");
  EXPECT_EQ(Stem("runs"), "run");
  EXPECT_EQ(Stem("services"), "servic");
  EXPECT_EQ(Stem("service"), "servic");
  EXPECT_EQ(Stem("databases"), "databas");
  EXPECT_EQ(Stem("engineer"), "engin");
  EXPECT_EQ(Stem("ponies"), "poni");
  EXPECT_EQ(Stem("connection"), "connect");
}

TEST(Stem, LeavesShortWordsNumbersAndUnknownBytesAlone) {
  EXPECT_EQ(Stem("go"), "go");
  EXPECT_EQ(Stem("she"), "she");
  EXPECT_EQ(Stem("2026"), "2026");
  EXPECT_EQ(Stem("v2"), "v2");
  EXPECT_EQ(Stem("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(Stem(""), "");
}

TEST(Stem, IsTheSameOnEveryThread) {
  const std::vector<std::string_view> words = {"prefers", "running", "services", "engineer"};
  std::vector<std::string> here;
  for (std::string_view w : words) here.push_back(Stem(w));
  std::vector<std::vector<std::string>> there(4);
  {
    std::vector<std::jthread> threads;
    for (auto& out : there) {
      threads.emplace_back([&out, &words] {
        for (int round = 0; round < 200; ++round) {
          out.clear();
          for (std::string_view w : words) out.push_back(Stem(w));
        }
      });
    }
  }
  for (const auto& out : there) EXPECT_EQ(out, here);
}

// ---------------------------------------------------------------------------------------------
// IsFillerWord and IsNegation

TEST(IsFillerWord, ArticlesAuxiliariesPrepositionsAndIntensifiersAre) {
  for (std::string_view word : {"the", "a", "an", "is", "are", "was", "of", "in", "to", "and",
                                "also", "really", "very", "just", "actually"}) {
    EXPECT_TRUE(IsFillerWord(word)) << word;
  }
}

TEST(IsFillerWord, NegationsPronounsAndContentWordsAreNot) {
  for (std::string_view word : {"not", "no", "never", "without", "she", "he", "they", "i", "we",
                                "you", "it", "her", "prefers", "go", "rust", "2026", "v2"}) {
    EXPECT_FALSE(IsFillerWord(word)) << word;
  }
}

TEST(IsFillerWord, TakesLowercaseWordsAsWordsGivesThem) {
  EXPECT_FALSE(IsFillerWord(""));
  EXPECT_FALSE(IsFillerWord("theory"));  // A word, not a prefix match.
}

TEST(IsNegation, NamesTheWordsThatReverseAStatement) {
  for (std::string_view word :
       {"no", "not", "never", "nor", "none", "nobody", "nothing", "without"}) {
    EXPECT_TRUE(IsNegation(word)) << word;
    EXPECT_FALSE(IsFillerWord(word)) << word;
  }
  for (std::string_view word : {"note", "know", "now", "the", "she", "yes", ""}) {
    EXPECT_FALSE(IsNegation(word)) << word;
  }
}

// ---------------------------------------------------------------------------------------------
// ContentTerms

TEST(ContentTerms, AreTheStemsOfTheNonFillerWordsInTextOrder) {
  EXPECT_THAT(ContentTerms("Maria leads the storage team and really prefers Go."),
              ElementsAre("maria", "lead", "storag", "team", "prefer", "go"));
}

TEST(ContentTerms, KeepRepeatsNegationsAndPronouns) {
  EXPECT_THAT(ContentTerms("She does not run; she runs nothing, never."),
              ElementsAre("she", "not", "run", "she", "run", "noth", "never"));
}

TEST(ContentTerms, OrderIsTextOrder) {
  EXPECT_THAT(ContentTerms("go beats rust"), ElementsAre("go", "beat", "rust"));
  EXPECT_THAT(ContentTerms("rust beats go"), ElementsAre("rust", "beat", "go"));
}

TEST(ContentTerms, OfFillerOnlyTextAreEmpty) {
  EXPECT_THAT(ContentTerms("the a an is of to and also really"), IsEmpty());
  EXPECT_THAT(ContentTerms(""), IsEmpty());
}

}  // namespace
}  // namespace strata::text
