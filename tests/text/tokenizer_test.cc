// Tests of text/tokenizer.h and text/stemmer.h: words in every script, CJK bigrams, language
// detection, stems in the text's language, query alternatives, and hostile bytes.

#include "text/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "text/stemmer.h"

namespace strata::text {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

std::vector<std::string> WordsOf(std::string_view text) {
  std::vector<std::string> words;
  ForEachWord(text, [&](const Word& w) { words.emplace_back(w.text); });
  return words;
}

// The terms of a document, in order.
std::vector<std::string> DocumentTerms(std::string_view text) {
  std::vector<std::string> terms;
  Tokenize(text, TokenizeMode::kDocument, [&](const Token& t) {
    terms.emplace_back(t.term);
    return true;
  });
  return terms;
}

// The terms of a query, one list per position (the first and its colocated alternatives).
std::vector<std::vector<std::string>> QueryPositions(std::string_view text,
                                                     TokenizeMode mode = TokenizeMode::kQuery) {
  std::vector<std::vector<std::string>> positions;
  Tokenize(text, mode, [&](const Token& t) {
    if (!t.colocated) positions.emplace_back();
    positions.back().emplace_back(t.term);
    return true;
  });
  return positions;
}

// Whether some query alternative at each position meets the document's term there: what an
// FTS5 phrase of the query's tokens matches, for a document of exactly that phrase.
bool Meets(std::string_view query, std::string_view document) {
  const auto positions = QueryPositions(query);
  const auto terms = DocumentTerms(document);
  if (positions.empty()) return false;
  for (size_t start = 0; start + positions.size() <= terms.size(); ++start) {
    bool all = true;
    for (size_t i = 0; i < positions.size() && all; ++i) {
      const auto& alternatives = positions[i];
      all = std::find(alternatives.begin(), alternatives.end(), terms[start + i]) !=
            alternatives.end();
    }
    if (all) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Words

TEST(ForEachWord, AsciiIsLowercaseRunsOfLettersAndDigits) {
  EXPECT_THAT(WordsOf("Hello, World! v2.19.1 shard-12 a_b"),
              ElementsAre("hello", "world", "v2", "19", "1", "shard", "12", "a", "b"));
  EXPECT_THAT(WordsOf("MiXeD CaSe 2026abc"), ElementsAre("mixed", "case", "2026abc"));
}

TEST(ForEachWord, GivesByteOffsetsInTheText) {
  std::vector<std::pair<size_t, size_t>> spans;
  ForEachWord("  ab c\xc3\xa9 ", [&](const Word& w) { spans.emplace_back(w.begin, w.end); });
  EXPECT_THAT(spans, ElementsAre(std::pair<size_t, size_t>{2, 4}, std::pair<size_t, size_t>{5, 8}));
}

TEST(ForEachWord, FoldsCaseInEveryAlphabetAndComposes) {
  EXPECT_THAT(WordsOf("\xc3\x89T\xc3\x89 Stra\xc3\x9f" "e"), ElementsAre("\xc3\xa9t\xc3\xa9", "strasse"));
  // "е" + combining acute, decomposed, is the composed "é".
  EXPECT_THAT(WordsOf("Cafe\xcc\x81"), ElementsAre("caf\xc3\xa9"));
  // Cyrillic and Greek, final sigma included.
  EXPECT_THAT(WordsOf("\xd0\x91\xd0\x90\xd0\x97\xd0\x90 \xce\x9b\xce\x8c\xce\x93\xce\x9f\xce\xa3"),
              ElementsAre("\xd0\xb1\xd0\xb0\xd0\xb7\xd0\xb0", "\xce\xbb\xcf\x8c\xce\xb3\xce\xbf\xcf\x83"));
}

TEST(ForEachWord, PunctuationOfAnyScriptSeparates) {
  // Em dash, typographic quotes, ideographic comma and full stop, fullwidth question mark.
  EXPECT_THAT(WordsOf("a\xe2\x80\x94" "b \xe2\x80\x9cquoted\xe2\x80\x9d"), ElementsAre("a", "b", "quoted"));
  EXPECT_THAT(WordsOf("\xe6\x95\xb0\xe3\x80\x81\xe6\x8d\xae\xe3\x80\x82\xe5\xba\x93\xef\xbc\x9f"),
              ElementsAre("\xe6\x95\xb0", "\xe6\x8d\xae", "\xe5\xba\x93"));
}

TEST(ForEachWord, HanRunsAreOverlappingBigrams) {
  // 数据库 -> 数据 据库.
  EXPECT_THAT(WordsOf("\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93"),
              ElementsAre("\xe6\x95\xb0\xe6\x8d\xae", "\xe6\x8d\xae\xe5\xba\x93"));
  // One character is itself.
  EXPECT_THAT(WordsOf("\xe5\xba\x93"), ElementsAre("\xe5\xba\x93"));
}

TEST(ForEachWord, BigramOffsetsSpanBothCharacters) {
  std::vector<std::pair<size_t, size_t>> spans;
  std::vector<Script> scripts;
  ForEachWord("\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93", [&](const Word& w) {
    spans.emplace_back(w.begin, w.end);
    scripts.push_back(w.script);
  });
  EXPECT_THAT(spans, ElementsAre(std::pair<size_t, size_t>{0, 6}, std::pair<size_t, size_t>{3, 9}));
  EXPECT_THAT(scripts, ElementsAre(Script::kHan, Script::kHan));
}

TEST(ForEachWord, ScriptChangesSplitRuns) {
  // 数据库abc: Han, then Latin.
  EXPECT_THAT(WordsOf("\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93" "abc"),
              ElementsAre("\xe6\x95\xb0\xe6\x8d\xae", "\xe6\x8d\xae\xe5\xba\x93", "abc"));
  // 2024年: digits, then Han.
  EXPECT_THAT(WordsOf("2024\xe5\xb9\xb4"), ElementsAre("2024", "\xe5\xb9\xb4"));
  // 請求書はデータベースに: Han, Hiragana, Katakana (ー inside it), Hiragana.
  EXPECT_THAT(
      WordsOf("\xe8\xab\x8b\xe6\xb1\x82\xe6\x9b\xb8\xe3\x81\xaf\xe3\x83\x87\xe3\x83\xbc\xe3\x82\xbf"
              "\xe3\x83\x99\xe3\x83\xbc\xe3\x82\xb9\xe3\x81\xab"),
      ElementsAre("\xe8\xab\x8b\xe6\xb1\x82", "\xe6\xb1\x82\xe6\x9b\xb8", "\xe3\x81\xaf",
                  "\xe3\x83\x87\xe3\x83\xbc", "\xe3\x83\xbc\xe3\x82\xbf", "\xe3\x82\xbf\xe3\x83\x99",
                  "\xe3\x83\x99\xe3\x83\xbc", "\xe3\x83\xbc\xe3\x82\xb9", "\xe3\x81\xab"));
  // Latin then Cyrillic in one run.
  EXPECT_THAT(WordsOf("abc\xd0\xb4\xd0\xb0"), ElementsAre("abc", "\xd0\xb4\xd0\xb0"));
}

TEST(ForEachWord, HangulIsCutIntoBigramsParticlesIncluded) {
  // 데이터베이스에 -> 데이 이터 터베 베이 이스 스에.
  EXPECT_THAT(WordsOf("\xeb\x8d\xb0\xec\x9d\xb4\xed\x84\xb0\xeb\xb2\xa0\xec\x9d\xb4\xec\x8a\xa4"
                      "\xec\x97\x90"),
              ElementsAre("\xeb\x8d\xb0\xec\x9d\xb4", "\xec\x9d\xb4\xed\x84\xb0",
                          "\xed\x84\xb0\xeb\xb2\xa0", "\xeb\xb2\xa0\xec\x9d\xb4",
                          "\xec\x9d\xb4\xec\x8a\xa4", "\xec\x8a\xa4\xec\x97\x90"));
}

TEST(ForEachWord, MarksBelongToTheWordTheyAreIn) {
  // Devanagari: the vowel signs (Mc, Mn) are inside the word.
  EXPECT_THAT(WordsOf("\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\x82\xe0\xa4\xa6\xe0\xa5\x80 x"),
              ElementsAre("\xe0\xa4\xb9\xe0\xa4\xbf\xe0\xa4\x82\xe0\xa4\xa6\xe0\xa5\x80", "x"));
  // A mark with nothing before it is not a word.
  EXPECT_THAT(WordsOf(" \xcc\x81 "), IsEmpty());
}

TEST(ForEachWord, InvalidUtf8SeparatesAndNeverCrashes) {
  EXPECT_THAT(WordsOf("ab\xff" "cd"), ElementsAre("ab", "cd"));
  EXPECT_THAT(WordsOf("caf\xc3"), ElementsAre("caf"));
  EXPECT_THAT(WordsOf("\xed\xa0\x80x\xc0\x80y"), ElementsAre("x", "y"));
  EXPECT_THAT(WordsOf(""), IsEmpty());
  EXPECT_THAT(WordsOf(std::string("a\0b", 3)), ElementsAre("a", "b"));
}

TEST(ForEachWord, RandomBytesNeverCrashAndWordsAreValidUtf8) {
  std::mt19937 rng(17);
  for (int round = 0; round < 2000; ++round) {
    std::string text(rng() % 64, '\0');
    for (char& c : text) c = static_cast<char>(rng());
    for (const std::string& word : WordsOf(text)) {
      ASSERT_FALSE(word.empty());
      ASSERT_TRUE(WordsOf(word).size() >= 1);
    }
    for (TokenizeMode mode :
         {TokenizeMode::kDocument, TokenizeMode::kQuery, TokenizeMode::kPrefixQuery}) {
      Tokenize(text, mode, [&](const Token& t) {
        EXPECT_FALSE(t.term.empty());
        EXPECT_LE(t.begin, t.end);
        EXPECT_LE(t.end, text.size());
        return true;
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Languages

TEST(DetectLanguage, TellsTheLatinLanguagesByTheirFunctionWords) {
  EXPECT_EQ(DetectLanguage("The invoices are stored in the database"), Language::kEnglish);
  EXPECT_EQ(DetectLanguage("Die Rechnungen werden gespeichert"), Language::kGerman);
  EXPECT_EQ(DetectLanguage("Les factures sont enregistr\xc3\xa9" "es dans la base"),
            Language::kFrench);
  EXPECT_EQ(DetectLanguage("Las facturas se guardan en la base de datos"), Language::kSpanish);
  EXPECT_EQ(DetectLanguage("Le fatture sono salvate nella banca dati"), Language::kItalian);
  EXPECT_EQ(DetectLanguage("As faturas s\xc3\xa3o guardadas na base de dados"),
            Language::kPortuguese);
  EXPECT_EQ(DetectLanguage("De facturen worden opgeslagen in het systeem"), Language::kDutch);
  EXPECT_EQ(DetectLanguage("Fakturorna sparas i databasen och det \xc3\xa4r bra"),
            Language::kSwedish);
  EXPECT_EQ(DetectLanguage("Fakturaerne gemmes i databasen, og det er efter planen"),
            Language::kDanish);
  EXPECT_EQ(DetectLanguage("Fakturaene lagres i databasen, og det er etter planen"),
            Language::kNorwegian);
  EXPECT_EQ(DetectLanguage("Laskut tallennetaan tietokantaan ja se on valmis"),
            Language::kFinnish);
}

TEST(DetectLanguage, DefaultsToEnglish) {
  EXPECT_EQ(DetectLanguage(""), Language::kEnglish);
  EXPECT_EQ(DetectLanguage("service latency schema deploy"), Language::kEnglish);
  // Technical English with words other languages share stays English.
  EXPECT_EQ(DetectLanguage("requests per second via the proxy; die on error"),
            Language::kEnglish);
}

TEST(Stem, IsSnowballInTheLanguageAsked) {
  EXPECT_EQ(Stem(Language::kEnglish, "services"), "servic");
  EXPECT_EQ(Stem(Language::kGerman, "rechnungen"), "rechnung");
  EXPECT_EQ(Stem(Language::kRussian, "\xd0\xb4\xd0\xb0\xd0\xbd\xd0\xbd\xd1\x8b\xd1\x85"),
            "\xd0\xb4\xd0\xb0\xd0\xbd");
  EXPECT_EQ(LanguageName(Language::kNorwegian), "norwegian");
}

TEST(Stem, IsThreadSafe) {
  std::vector<std::thread> threads;
  std::vector<std::string> stems(4);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&stems, i] {
      for (int n = 0; n < 2000; ++n) stems[i] = Stem(Language::kGerman, "rechnungen");
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_THAT(stems, ElementsAre("rechnung", "rechnung", "rechnung", "rechnung"));
}

// ---------------------------------------------------------------------------------------------
// Document terms

TEST(Tokenize, EnglishIsStemmedWithSnowballEnglish) {
  EXPECT_THAT(DocumentTerms("The services are running"),
              ElementsAre("the", "servic", "are", "run"));
  // Words with digits are not stemmed.
  EXPECT_THAT(DocumentTerms("v2 caches 2020s"), ElementsAre("v2", "cach", "2020s"));
}

TEST(Tokenize, StemsInTheTextsLanguage) {
  EXPECT_THAT(DocumentTerms("Die Rechnungen werden gespeichert"),
              ElementsAre("die", "rechnung", "werd", "gespeichert"));
  // French: "factures" and "enregistrées" lose their endings, then "é" its accent; the
  // stem of "enregistrees" is colocated.
  EXPECT_THAT(DocumentTerms("les factures sont enregistr\xc3\xa9" "es"),
              ElementsAre("le", "factur", "sont", "enregistr", "enregistre"));
  EXPECT_THAT(DocumentTerms("las facturas se guardan"),
              ElementsAre("las", "factur", "se", "guard"));
  // Russian for Cyrillic words, whatever the text: "базы данных" (databases).
  EXPECT_THAT(DocumentTerms("\xd0\xb1\xd0\xb0\xd0\xb7\xd1\x8b \xd0\xb4\xd0\xb0\xd0\xbd\xd0\xbd"
                            "\xd1\x8b\xd1\x85"),
              ElementsAre("\xd0\xb1\xd0\xb0\xd0\xb7", "\xd0\xb4\xd0\xb0\xd0\xbd"));
}

TEST(Tokenize, DiacriticsGoAfterStemmingAndTheBareSpellingIsColocated) {
  std::vector<std::pair<std::string, bool>> tokens;
  Tokenize("br\xc3\xbbl\xc3\xa9" "e", TokenizeMode::kDocument, [&](const Token& t) {
    tokens.emplace_back(std::string(t.term), t.colocated);
    return true;
  });
  // Snowball English reads "brûlée" as having no suffix; "brulee" loses its final "e".
  EXPECT_THAT(tokens, ElementsAre(std::pair<std::string, bool>{"brulee", false},
                                  std::pair<std::string, bool>{"brule", true}));
}

TEST(Tokenize, QueriesMeetDocumentsWithOrWithoutDiacritics) {
  EXPECT_TRUE(Meets("brulee", "br\xc3\xbbl\xc3\xa9" "e"));
  EXPECT_TRUE(Meets("br\xc3\xbbl\xc3\xa9" "e", "brulee"));
  EXPECT_TRUE(Meets("creme", "cr\xc3\xa8me"));
  EXPECT_TRUE(Meets("Gr\xc3\xb6\xc3\x9f" "e", "Die Grosse der Datei wird gespeichert"));
}

TEST(Tokenize, OtherScriptsAreCaseFoldedNotStemmed) {
  EXPECT_THAT(DocumentTerms("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"), ElementsAre("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"));
}

TEST(Tokenize, StopsWhenTheCallbackSaysSo) {
  int calls = 0;
  EXPECT_FALSE(Tokenize("one two three", TokenizeMode::kDocument, [&](const Token&) {
    return ++calls < 2;
  }));
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(Tokenize("", TokenizeMode::kDocument, [](const Token&) { return false; }));
}

// ---------------------------------------------------------------------------------------------
// Query terms

TEST(Tokenize, QueryWordsGiveTheirStemInEveryLatinLanguageOnce) {
  const auto positions = QueryPositions("Rechnungen");
  ASSERT_EQ(positions.size(), 1u);
  // English and Italian keep the word; German, Spanish, Dutch... cut it to "rechnung".
  EXPECT_THAT(positions[0], UnorderedElementsAre("rechnungen", "rechnung"));
  // Cyrillic has one language.
  EXPECT_THAT(QueryPositions("\xd0\xb4\xd0\xb0\xd0\xbd\xd0\xbd\xd1\x8b\xd1\x85"),
              ElementsAre(ElementsAre("\xd0\xb4\xd0\xb0\xd0\xbd")));
}

TEST(Tokenize, PrefixQueriesAreNotStemmed) {
  EXPECT_THAT(QueryPositions("Servic\xc3\xa9s", TokenizeMode::kPrefixQuery),
              ElementsAre(ElementsAre("services")));
}

TEST(Tokenize, QueriesMeetWordFormsInTheDocumentsLanguage) {
  EXPECT_TRUE(Meets("Rechnung", "Die Rechnungen werden gespeichert"));
  EXPECT_TRUE(Meets("factura", "las facturas se guardan en la base"));
  EXPECT_TRUE(Meets("service", "the services are running"));
  EXPECT_TRUE(Meets("running", "the service runs"));
  EXPECT_FALSE(Meets("invoice", "Die Rechnungen werden gespeichert"));
}

TEST(Tokenize, QueryBigramsAreAPhraseOfTheDocuments) {
  // 数据库 in 我们决定使用数据库来存储发票.
  EXPECT_TRUE(Meets("\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93",
                    "\xe6\x88\x91\xe4\xbb\xac\xe5\x86\xb3\xe5\xae\x9a\xe4\xbd\xbf\xe7\x94\xa8"
                    "\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93\xe6\x9d\xa5\xe5\xad\x98\xe5\x82\xa8"
                    "\xe5\x8f\x91\xe7\xa5\xa8"));
  // 데이터베이스 in 데이터베이스에 (with its particle).
  EXPECT_TRUE(Meets("\xeb\x8d\xb0\xec\x9d\xb4\xed\x84\xb0\xeb\xb2\xa0\xec\x9d\xb4\xec\x8a\xa4",
                    "\xec\xb2\xad\xea\xb5\xac\xec\x84\x9c\xeb\x8a\x94 \xeb\x8d\xb0\xec\x9d\xb4"
                    "\xed\x84\xb0\xeb\xb2\xa0\xec\x9d\xb4\xec\x8a\xa4\xec\x97\x90 \xec\xa0\x80"
                    "\xec\x9e\xa5\xed\x95\xa9\xeb\x8b\x88\xeb\x8b\xa4"));
  // データベース in 請求書はデータベースに保存します.
  EXPECT_TRUE(Meets("\xe3\x83\x87\xe3\x83\xbc\xe3\x82\xbf\xe3\x83\x99\xe3\x83\xbc\xe3\x82\xb9",
                    "\xe8\xab\x8b\xe6\xb1\x82\xe6\x9b\xb8\xe3\x81\xaf\xe3\x83\x87\xe3\x83\xbc"
                    "\xe3\x82\xbf\xe3\x83\x99\xe3\x83\xbc\xe3\x82\xb9\xe3\x81\xab\xe4\xbf\x9d"
                    "\xe5\xad\x98\xe3\x81\x97\xe3\x81\xbe\xe3\x81\x99"));
  // 据库 is in it, 库数 is not.
  EXPECT_FALSE(Meets("\xe5\xba\x93\xe6\x95\xb0", "\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93"));
}

// ---------------------------------------------------------------------------------------------
// Korean particles

// 데이터베이스 (database), 서버 (server), 회의 (meeting), 고양이 (cat).
constexpr std::string_view kDatabase =
    "\xeb\x8d\xb0\xec\x9d\xb4\xed\x84\xb0\xeb\xb2\xa0\xec\x9d\xb4\xec\x8a\xa4";
constexpr std::string_view kServer = "\xec\x84\x9c\xeb\xb2\x84";
constexpr std::string_view kMeeting = "\xed\x9a\x8c\xec\x9d\x98";

std::string Cat(std::string_view a, std::string_view b) { return std::string(a) + std::string(b); }

TEST(WithoutKoreanParticle, CutsTheLongestParticleLeavingTwoSyllables) {
  EXPECT_EQ(WithoutKoreanParticle(Cat(kDatabase, "\xec\x97\x90")), kDatabase);  // 에
  EXPECT_EQ(WithoutKoreanParticle(Cat(kDatabase, "\xeb\xa5\xbc")), kDatabase);  // 를
  // 에서는 goes whole, not 는 alone.
  EXPECT_EQ(WithoutKoreanParticle(Cat(kServer, "\xec\x97\x90\xec\x84\x9c\xeb\x8a\x94")), kServer);
  EXPECT_EQ(WithoutKoreanParticle(Cat(kServer, "\xea\xb9\x8c\xec\xa7\x80")), kServer);  // 까지
  // 회의 ends in 의 (a particle) but would be one syllable without it.
  EXPECT_EQ(WithoutKoreanParticle(kMeeting), kMeeting);
  EXPECT_EQ(WithoutKoreanParticle(kDatabase), kDatabase);
  // Not Hangul syllables alone: whole.
  EXPECT_EQ(WithoutKoreanParticle("database"), "database");
  EXPECT_EQ(WithoutKoreanParticle(Cat("db", "\xec\x97\x90\xec\x84\x9c")),
            Cat("db", "\xec\x97\x90\xec\x84\x9c"));
  EXPECT_EQ(WithoutKoreanParticle(""), "");
}

}  // namespace
}  // namespace strata::text
