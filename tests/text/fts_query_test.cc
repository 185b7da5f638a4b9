#include "text/fts_query.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "store/schema.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/body_text.h"
#include "text/fts5_extensions.h"
#include "text/fts_index.h"

namespace strata::text {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// --- ParseQuery: terms ------------------------------------------------------------------------

TEST(ParseQueryTerms, LowercasesAsciiLetters) {
  EXPECT_THAT(ParseQuery("Rust SQLite").terms, ElementsAre("rust", "sqlite"));
}

TEST(ParseQueryTerms, KeepsDigitsInsideTerms) {
  EXPECT_THAT(ParseQuery("opus 4.8 v2 2026").terms, ElementsAre("opus", "4", "8", "v2", "2026"));
}

TEST(ParseQueryTerms, SplitsOnPunctuationAndWhitespace) {
  EXPECT_THAT(ParseQuery("foo-bar,baz.qux_quux\tx/y\n(z)").terms,
              ElementsAre("foo", "bar", "baz", "qux", "quux", "x", "y", "z"));
}

TEST(ParseQueryTerms, SplitsOnFts5Syntax) {
  EXPECT_THAT(
      ParseQuery("key:foo \"bar\" baz* ^qux (a OR b) NEAR(c d, 2) -e +f {key text}").terms,
      ElementsAre("key", "foo", "bar", "baz", "qux", "b", "near", "c", "d", "2", "e", "f", "text"));
}

TEST(ParseQueryTerms, RemovesDuplicatesIgnoringCase) {
  EXPECT_THAT(ParseQuery("Foo foo FOO bar foo").terms, ElementsAre("foo", "bar"));
}

TEST(ParseQueryTerms, DropsStopWordsWhenAContentWordRemains) {
  EXPECT_THAT(ParseQuery("what is the status of the migration").terms,
              ElementsAre("status", "migration"));
}

TEST(ParseQueryTerms, KeepsALoneStopWord) {
  EXPECT_THAT(ParseQuery("the").terms, ElementsAre("the"));
}

TEST(ParseQueryTerms, KeepsStopWordsWhenAllAreStopWords) {
  EXPECT_THAT(ParseQuery("To be or not to be").terms, ElementsAre("to", "be", "or", "not"));
}

TEST(ParseQueryTerms, OperatorWordsAreOrdinaryTerms) {
  // "and", "or", "not" are stop words; "near" is not.
  EXPECT_THAT(ParseQuery("rust AND go OR NOT c NEAR zig").terms,
              ElementsAre("rust", "go", "c", "near", "zig"));
  EXPECT_THAT(ParseQuery("AND").terms, ElementsAre("and"));
}

TEST(ParseQueryTerms, EmptyAndPunctuationOnlyGiveNoTerms) {
  EXPECT_THAT(ParseQuery("").terms, IsEmpty());
  EXPECT_THAT(ParseQuery("   ").terms, IsEmpty());
  EXPECT_THAT(ParseQuery("\"'*^:()-+{}[]!?.,;<>=~`@#$%&|\\/").terms, IsEmpty());
  EXPECT_THAT(ParseQuery(std::string(5, '\0')).terms, IsEmpty());
}

TEST(ParseQueryTerms, KeepsNonAsciiBytesInTerms) {
  EXPECT_THAT(ParseQuery("caf\xc3\xa9 cr\xc3\xa8me").terms,
              ElementsAre("caf\xc3\xa9", "cr\xc3\xa8me"));
  EXPECT_THAT(ParseQuery("\xe6\x97\xa5\xe6\x9c\xac").terms,
              ElementsAre("\xe6\x97\xa5\xe6\x9c\xac"));
}

TEST(ParseQueryTerms, CapsTheNumberOfTerms) {
  std::string query;
  std::vector<std::string> expected;
  for (int i = 0; i < 100; ++i) {
    const std::string word = absl::StrCat("w", i);
    absl::StrAppend(&query, word, " ");
    if (expected.size() < kMaxTerms) expected.push_back(word);
  }
  const std::vector<std::string> terms = ParseQuery(query).terms;
  EXPECT_EQ(terms.size(), kMaxTerms);
  EXPECT_EQ(terms, expected);  // The first ones, in order.
}

TEST(ParseQueryTerms, CapsTheNumberOfTermsAfterDroppingStopWords) {
  // 40 content words interleaved with stop words: the stop words must not use up the cap.
  std::string query;
  for (int i = 0; i < 40; ++i) absl::StrAppend(&query, "the w", i, " of ");
  const std::vector<std::string> terms = ParseQuery(query).terms;
  ASSERT_EQ(terms.size(), kMaxTerms);
  EXPECT_EQ(terms.front(), "w0");
  EXPECT_EQ(terms.back(), absl::StrCat("w", kMaxTerms - 1));
}

TEST(ParseQueryTerms, ContentWordAfterManyDistinctStopWordsIsKept) {
  // Every stop word once, then one content word: stop words are dropped because another term
  // remains, so the result is that word alone.
  const std::string query =
      "a about after all also am an and any are as at be been but by can did do does for from "
      "had has have he her his how i if in into is it its me my no not of on or our she so "
      "that the their them then there they this to was we were what when which who with you "
      "rust";
  EXPECT_THAT(ParseQuery(query).terms, ElementsAre("rust"));
}

TEST(ParseQueryTerms, CapsTermLength) {
  const std::string long_word(200, 'A');
  const std::vector<std::string> terms = ParseQuery(long_word + " short").terms;
  ASSERT_THAT(terms, ElementsAre(::testing::_, "short"));
  EXPECT_EQ(terms[0], std::string(kMaxTermBytes, 'a'));
}

TEST(ParseQueryTerms, LongWordsSharingAPrefixBecomeOneTerm) {
  const std::string prefix(kMaxTermBytes, 'x');
  EXPECT_THAT(ParseQuery(prefix + "1 " + prefix + "2").terms, ElementsAre(prefix));
}

TEST(ParseQueryTerms, HugeInputIsBounded) {
  std::string query;
  while (query.size() < 1'000'000) query += "lorem ipsum dolor sit amet ";
  const std::vector<std::string> terms = ParseQuery(query).terms;
  EXPECT_THAT(terms, ElementsAre("lorem", "ipsum", "dolor", "sit", "amet"));
}

TEST(ParseQueryTerms, EveryTermIsNonEmptyAndBounded) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 400);
  for (int i = 0; i < 2000; ++i) {
    std::string query(length(rng), '\0');
    for (char& c : query) c = static_cast<char>(byte(rng));
    const std::vector<std::string> terms = ParseQuery(query).terms;
    ASSERT_LE(terms.size(), kMaxTerms);
    for (const std::string& t : terms) {
      ASSERT_FALSE(t.empty());
      ASSERT_LE(t.size(), kMaxTermBytes);
      for (char c : t) {
        const auto u = static_cast<unsigned char>(c);
        ASSERT_TRUE((u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u >= 0x80)
            << "byte " << static_cast<int>(u);
      }
    }
  }
}

TEST(ParseQueryTerms, ARunOfContinuationBytesLongerThanATermIsCutNotEmptied) {
  // Not UTF-8: a lead byte then more continuation bytes than fit in a term (found by
  // fuzz/fts_query_fuzzer; backing off to a sequence start used to leave an empty term).
  std::string run(1, '\xC3');
  run.append(100, '\xB5');
  EXPECT_THAT(ParseQuery(run + " canary").terms,
              ElementsAre(run.substr(0, kMaxTermBytes), "canary"));
  EXPECT_THAT(ParseQuery(std::string(100, '\xB5')).terms,
              ElementsAre(std::string(kMaxTermBytes, '\xB5')));
}

// --- MatchExpression -------------------------------------------------------------------------

TEST(MatchExpression, EmptyTermsGiveEmptyExpression) { EXPECT_EQ(MatchExpression({}), ""); }

TEST(MatchExpression, QuotesASingleTerm) { EXPECT_EQ(MatchExpression({"rust"}), "\"rust\""); }

TEST(MatchExpression, QuotesEveryTermAndJoinsWithOr) {
  EXPECT_EQ(MatchExpression({"rust", "and", "near"}), "\"rust\" OR \"and\" OR \"near\"");
}

TEST(MatchExpression, DoublesEmbeddedQuotes) {
  EXPECT_EQ(MatchExpression({"a\"b", "\""}), "\"a\"\"b\" OR \"\"\"\"");
}

TEST(MatchExpression, OfQueryTermsQuotesOperators) {
  EXPECT_EQ(MatchExpression(ParseQuery("NEAR(rust go)").terms), "\"near\" OR \"rust\" OR \"go\"");
}

// --- ParseQuery: phrases ---------------------------------------------------------------------

std::vector<std::string> Texts(const std::vector<QueryPhrase>& phrases, QueryPhrase::Kind kind) {
  std::vector<std::string> out;
  for (const QueryPhrase& p : phrases) {
    if (p.kind == kind) out.push_back(p.prefix ? p.text + "*" : p.text);
  }
  return out;
}

std::vector<std::string> Identifiers(std::string_view query) {
  return Texts(ParseQuery(query).phrases, QueryPhrase::Kind::kIdentifier);
}

std::vector<std::string> Pairs(std::string_view query) {
  return Texts(ParseQuery(query).phrases, QueryPhrase::Kind::kAdjacent);
}

TEST(ParseQueryPhrases, KeepsIdentifiersWhole) {
  EXPECT_THAT(Identifiers("CVE-2023-5678"), ElementsAre("cve 2023 5678"));
  EXPECT_THAT(Identifiers("upgrade to 3.0.11-1~deb12u2 now"), ElementsAre("3 0 11 1 deb12u2"));
  EXPECT_THAT(Identifiers("db-prod-07 is down"), ElementsAre("db prod 07"));
  EXPECT_THAT(Identifiers("Closes: #1002301."), ElementsAre("1002301"));
  EXPECT_THAT(Identifiers("see src/recall/fusion.cc"), ElementsAre("src recall fusion cc"));
  EXPECT_THAT(Identifiers("(mail bob@example.org)"), ElementsAre("bob example org"));
  EXPECT_THAT(Identifiers("deb12u2"), ElementsAre("deb12u2"));
}

TEST(ParseQueryPhrases, AHexPrefixAlsoMatchesAsAPrefix) {
  EXPECT_THAT(Identifiers("commit 3F2A9C1E"), ElementsAre("3f2a9c1e", "3f2a9c1e*"));
  // Digits alone are a number, not a hash.
  EXPECT_THAT(Identifiers("1234567"), ElementsAre("1234567"));
  // Too short to name one commit.
  EXPECT_THAT(Identifiers("ab12cd"), ElementsAre("ab12cd"));
}

TEST(ParseQueryPhrases, TextIsOnlyTermsAndSpaces) {
  EXPECT_THAT(Identifiers(std::string("a\"b\x01" "c-7\0", 8)), ElementsAre("a b c 7"));
}

TEST(ParseQueryPhrases, PlainWordsAreNoIdentifiers) {
  EXPECT_THAT(Identifiers("don't use the cache"), IsEmpty());
  EXPECT_THAT(Identifiers("well-known fact"), IsEmpty());
  EXPECT_THAT(Identifiers("v2 of 42"), IsEmpty());  // Too short to name anything alone.
  EXPECT_THAT(Identifiers(""), IsEmpty());
}

TEST(ParseQueryPhrases, PairsAdjacentWordsButNotAcrossStopWords) {
  EXPECT_THAT(Pairs("Invoice storage"), ElementsAre("invoice storage"));
  EXPECT_THAT(Pairs("remove obsolete patches"),
              ElementsAre("remove obsolete", "obsolete patches"));
  EXPECT_THAT(Pairs("state of the art"), IsEmpty());
  EXPECT_THAT(Pairs("openssl 3.0.11"), ElementsAre("openssl 3 0 11"));
  EXPECT_THAT(Pairs("single"), IsEmpty());
}

TEST(ParseQueryTerms, CutsChineseJapaneseAndKoreanIntoCharacterPairs) {
  EXPECT_THAT(ParseQuery("如何存储发票").terms,
              ElementsAre("如何", "何存", "存储", "储发", "发票"));
  EXPECT_THAT(ParseQuery("数据库 invoices").terms, ElementsAre("数据", "据库", "invoices"));
  EXPECT_THAT(ParseQuery("书").terms, ElementsAre("书"));
  EXPECT_THAT(ParseQuery("crème").terms, ElementsAre("crème"));  // Spaced scripts stay whole.
}

TEST(ParseQueryPhrases, AnUnspacedRunIsAPhraseOfItsPairs) {
  EXPECT_THAT(Pairs("如何存储发票"), ElementsAre("如何 何存 存储 储发 发票"));
  EXPECT_THAT(Identifiers("如何存储发票"), IsEmpty());
  EXPECT_THAT(Pairs("书"), IsEmpty());
}

TEST(ParseQueryPhrases, AKoreanWordIsCutWithoutItsParticle) {
  // 데이터베이스를 (database + object particle): the pairs of 데이터베이스.
  EXPECT_THAT(Pairs("데이터베이스를"), ElementsAre("데이 이터 터베 베이 이스"));
  EXPECT_THAT(ParseQuery("서버에서는 로그").terms, ElementsAre("서버", "로그"));
  // 회의 (meeting) ends in 의 but would be one syllable without it.
  EXPECT_THAT(ParseQuery("회의").terms, ElementsAre("회의"));
}

TEST(ParseQueryPhrases, PairsCarryTheirTerms) {
  const std::vector<QueryPhrase> phrases = ParseQuery("Postgres 15.2").phrases;
  ASSERT_EQ(phrases.size(), 2u);  // The identifier, then the pair.
  EXPECT_EQ(phrases[1].kind, QueryPhrase::Kind::kAdjacent);
  EXPECT_THAT(phrases[1].words, ElementsAre("postgres", "15", "2"));
}

TEST(ParseQueryPhrases, AreBoundedAndDistinct) {
  std::string query;
  for (int i = 0; i < 100; ++i) absl::StrAppend(&query, "word", i, " ");
  EXPECT_EQ(ParseQuery(query).phrases.size(), kMaxPhrases);
  EXPECT_THAT(Identifiers("CVE-1-2 CVE-1-2 CVE-1-2"), ElementsAre("cve 1 2"));
  EXPECT_THAT(ParseQuery(std::string(1 << 20, 'x')).phrases, IsEmpty());  // One over-long chunk.
}

TEST(ParseQuery, TermsGoOnPastTheLastPhrase) {
  std::string query;
  for (int i = 0; i < 20; ++i) absl::StrAppend(&query, "id-", i, " ");
  const ParsedQuery parsed = ParseQuery(query + "rust");
  EXPECT_EQ(parsed.phrases.size(), kMaxPhrases);
  ASSERT_FALSE(parsed.terms.empty());
  EXPECT_EQ(parsed.terms.back(), "rust");
}

TEST(ParseQuery, PhrasesGoOnPastTheLastTerm) {
  std::string query;  // Words of letters alone, each after a stop word: no phrases.
  for (size_t i = 0; i < kMaxTerms + 8; ++i) {
    const char word[] = {'w', static_cast<char>('a' + i / 26), static_cast<char>('a' + i % 26)};
    absl::StrAppend(&query, "the ", std::string(word, sizeof(word)), " ");
  }
  const ParsedQuery parsed = ParseQuery(query + "CVE-2023-5678");
  EXPECT_EQ(parsed.terms.size(), kMaxTerms);
  EXPECT_THAT(Texts(parsed.phrases, QueryPhrase::Kind::kIdentifier), ElementsAre("cve 2023 5678"));
}

TEST(MatchExpression, QuotesPhrasesAfterTermsAndMarksPrefixes) {
  const std::vector<QueryPhrase> phrases = {
      {.kind = QueryPhrase::Kind::kIdentifier, .text = "CVE-2023-5678"},
      {.kind = QueryPhrase::Kind::kIdentifier, .text = "3f2a9c1", .prefix = true},
      {.kind = QueryPhrase::Kind::kAdjacent, .text = "a\"b c"}};
  EXPECT_EQ(MatchExpression({"cve"}, phrases),
            "\"cve\" OR \"CVE-2023-5678\" OR \"3f2a9c1\" * OR \"a\"\"b c\"");
}

// --- Against a real FTS5 table ---------------------------------------------------------------

class FtsMatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(text::InstallFts5Extensions());
    ASSERT_OK_AND_ASSIGN(db_, store::Db::Open(dir_.File("fts.db"), store::DbOptions{}));
    ASSERT_OK(store::Migrate(*db_));
    FtsIndex index(db_.get());
    // Bodies as stored; the index takes their searchable text.
    auto add = [&](int64_t id, std::string_view body_json, std::string_view key,
                   std::string_view category) {
      return index.Add(id, BodyText(body_json), key, category);
    };
    ASSERT_OK(
        add(1, R"({"text": "Rust is a systems programming language"})", "lang-rust", "notes"));
    ASSERT_OK(add(2, R"("SQLite FTS5 full text search")", "sqlite", "notes"));
    ASSERT_OK(
        add(3, R"({"dessert": ["caf\u00e9 cr\u00e8me", "br\u00fbl\u00e9e"]})", "food", "recipes"));
    ASSERT_OK(add(4, R"({"who": "the team", "status": "on-track"})", "project:x", "status"));
  }

  // The expression strata runs for `query`.
  static std::string Expression(std::string_view query) {
    const ParsedQuery parsed = ParseQuery(query);
    return MatchExpression(parsed.terms, parsed.phrases);
  }

  // The rowids matching the query as strata would run it; an empty expression is not run.
  absl::StatusOr<std::vector<int64_t>> Search(std::string_view query) {
    const std::string expr = Expression(query);
    std::vector<int64_t> rowids;
    if (expr.empty()) return rowids;
    auto stmt = db_->Prepare("SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY rowid");
    if (!stmt.ok()) return stmt.status();
    stmt->Bind(1, std::string_view(expr));
    while (true) {
      absl::StatusOr<bool> row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      rowids.push_back(stmt->Int(0));
    }
    return rowids;
  }

  void ExpectRuns(std::string_view query) {
    const absl::StatusOr<std::vector<int64_t>> result = Search(query);
    EXPECT_THAT(result, IsOk()) << "query bytes: " << Hex(query)
                                << "\nexpression: " << Expression(query);
  }

  static std::string Hex(std::string_view s) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < s.size() && i < 200; ++i) {
      const auto u = static_cast<unsigned char>(s[i]);
      out += kDigits[u >> 4];
      out += kDigits[u & 15];
    }
    if (s.size() > 200) out += "...";
    return out;
  }

  TempDir dir_;
  std::unique_ptr<store::Db> db_;
};

TEST_F(FtsMatchTest, FindsBodyText) {
  ASSERT_OK_AND_ASSIGN(auto rows, Search("rust"));
  EXPECT_THAT(rows, ElementsAre(1));
}

TEST_F(FtsMatchTest, MatchesIgnoringCaseAndStemming) {
  ASSERT_OK_AND_ASSIGN(auto rows, Search("LANGUAGES?"));
  EXPECT_THAT(rows, ElementsAre(1));
}

TEST_F(FtsMatchTest, AnyTermMatches) {
  ASSERT_OK_AND_ASSIGN(auto rows, Search("sqlite AND rust"));
  EXPECT_THAT(rows, UnorderedElementsAre(1, 2));
}

TEST_F(FtsMatchTest, FindsKeyAndCategoryColumns) {
  ASSERT_OK_AND_ASSIGN(auto by_key, Search("food"));
  EXPECT_THAT(by_key, ElementsAre(3));
  ASSERT_OK_AND_ASSIGN(auto by_category, Search("recipes"));
  EXPECT_THAT(by_category, ElementsAre(3));
}

TEST_F(FtsMatchTest, ColumnFilterSyntaxIsSearchedAsWords) {
  // "key:sqlite" is not a column filter: it looks for "key" or "sqlite" anywhere.
  ASSERT_OK_AND_ASSIGN(auto rows, Search("key:sqlite"));
  EXPECT_THAT(rows, ElementsAre(2));
  ASSERT_OK_AND_ASSIGN(auto category, Search("category:recipes"));
  EXPECT_THAT(category, ElementsAre(3));
}

TEST_F(FtsMatchTest, MatchesDiacriticsEitherWay) {
  ASSERT_OK_AND_ASSIGN(auto accented, Search("caf\xc3\xa9"));
  EXPECT_THAT(accented, ElementsAre(3));
  ASSERT_OK_AND_ASSIGN(auto plain, Search("CREME brulee"));
  EXPECT_THAT(plain, ElementsAre(3));
}

TEST_F(FtsMatchTest, ObjectKeysAreNotIndexed) {
  ASSERT_OK_AND_ASSIGN(auto rows, Search("dessert"));
  EXPECT_THAT(rows, IsEmpty());
}

TEST_F(FtsMatchTest, LoneStopWordStillSearches) {
  ASSERT_OK_AND_ASSIGN(auto rows, Search("the"));
  EXPECT_THAT(rows, ElementsAre(4));
}

TEST_F(FtsMatchTest, HyphenatedWordsMatchTheirParts) {
  ASSERT_OK_AND_ASSIGN(auto rows, Search("on-track"));
  EXPECT_THAT(rows, ElementsAre(4));
}

TEST_F(FtsMatchTest, AnIdentifierMatchesAsAPhraseOfItsParts) {
  FtsIndex index(db_.get());
  ASSERT_OK(index.Add(10, "fixed CVE-2023-5678 in the parser", "cve", "notes"));
  ASSERT_OK(index.Add(11, "CVE 2023 review; 5678 lines changed", "other", "notes"));
  ASSERT_OK_AND_ASSIGN(store::Stmt stmt,
                       db_->Prepare("SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY rowid"));
  const std::string phrase_only = MatchExpression({}, ParseQuery("CVE-2023-5678").phrases);
  stmt.Bind(1, std::string_view(phrase_only));
  std::vector<int64_t> rows;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool row, stmt.Step());
    if (!row) break;
    rows.push_back(stmt.Int(0));
  }
  EXPECT_THAT(rows, ElementsAre(10));  // Not 11, which has the parts scattered.
}

TEST_F(FtsMatchTest, RawHostileQueriesWouldFailWithoutQuoting) {
  // The control for the tests below: the same table and statement do report syntax errors.
  for (const char* raw : {"\"rust", "NEAR(", "rust AND", "(", "nosuchcolumn:rust", "*"}) {
    ASSERT_OK_AND_ASSIGN(store::Stmt stmt,
                         db_->Prepare("SELECT rowid FROM fts WHERE fts MATCH ?1 ORDER BY rowid"));
    stmt.Bind(1, std::string_view(raw));
    EXPECT_THAT(stmt.Step(), ::testing::Not(IsOk())) << raw;
  }
}

TEST_F(FtsMatchTest, HostileQueriesNeverFail) {
  const std::vector<std::string> queries = {
      "",
      " ",
      "AND",
      "OR",
      "NOT",
      "NEAR",
      "rust AND",
      "AND rust",
      "rust OR",
      "NOT rust",
      "rust NOT",
      "rust AND OR NOT NEAR sqlite",
      "NEAR(rust sqlite)",
      "NEAR(rust sqlite, 5)",
      "NEAR(",
      "NEAR()",
      "\"",
      "\"\"",
      "\"\"\"",
      "\"rust",
      "rust\"",
      "\"rust sqlite\"",
      "'",
      "''",
      "rust's",
      "*",
      "rust*",
      "*rust",
      "^",
      "^rust",
      ":",
      "::",
      "rust:",
      ":rust",
      "(",
      ")",
      "()",
      "(rust",
      "rust)",
      "((rust))",
      "-",
      "-rust",
      "rust-",
      "--",
      "+",
      "+rust",
      "rust + sqlite",
      "{",
      "}",
      "{}",
      "{key text}: rust",
      "{key}:rust",
      "key:foo",
      "text:rust",
      "category:notes",
      "fts:rust",
      "rowid:1",
      "rank:1",
      "nosuchcolumn:rust",
      "- key:rust",
      "key : rust",
      "*:*",
      "\"*\"",
      "rust NEAR/3 sqlite",
      "rust AND (sqlite OR \"fts5\") NOT ^search*",
      "!@#$%^&*()_+-=[]{}|;':\",./<>?`~\\",
      "...",
      "\t\n\r\v\f",
      std::string("\0", 1),
      std::string("rust\0sqlite", 11),
      "\xc3\xa9",
      "caf\xc3\xa9",
      "\xe2\x80\x94",  // em dash: a separator to unicode61
      "\xe2\x80\x94 rust",
      "rust\xe2\x80\x94sqlite",
      "\xc2\xa0",      // no-break space
      "\xe3\x80\x82",  // ideographic full stop
      "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
      "\xf0\x9f\x98\x80",  // emoji
      "\xf0\x9f\x98\x80 \xf0\x9f\x98\x80 rust",
      "\xef\xbb\xbfrust",  // byte order mark
      "\xe2\x80\x8b",      // zero width space
      "\xcc\x81",          // a lone combining accent
      "e\xcc\x81",
      "\xd8\xa7\xd9\x84\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a\xd8\xa9",
      "\xff",
      "\xfe\xff",
      "\x80",
      "\x80\x80\x80",
      "\xc3",  // truncated two-byte sequence
      "caf\xc3",
      "\xe2\x80",
      "\xf0\x9f\x98",
      "\xc0\x80",          // overlong NUL
      "\xed\xa0\x80",      // a surrogate
      "\xf4\x90\x80\x80",  // beyond U+10FFFF
      "\xf8\x88\x80\x80\x80",
      std::string(10 * 1024, 'a'),
      std::string(10 * 1024, '"'),
      std::string(10 * 1024, '*'),
      std::string(10 * 1024, '('),
      std::string(10 * 1024, '\xff'),
      std::string(10 * 1024, '\x80'),
  };
  for (const std::string& q : queries) ExpectRuns(q);

  // Long mixtures.
  std::string words;
  for (int i = 0; i < 2000; ++i) absl::StrAppend(&words, "w", i, " AND NOT ");
  ExpectRuns(words);
  std::string utf8;
  while (utf8.size() < 10 * 1024) utf8 += "caf\xc3\xa9-\xe6\x97\xa5\xe6\x9c\xac\"*";
  ExpectRuns(utf8);
  std::string long_non_ascii;
  while (long_non_ascii.size() < 10 * 1024) long_non_ascii += "\xc3\xa9";
  ExpectRuns("x" + long_non_ascii);  // Cut at kMaxTermBytes inside a character.
}

TEST_F(FtsMatchTest, RandomBytesNeverFail) {
  std::mt19937_64 rng(20260301);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 64);
  for (int i = 0; i < 3000; ++i) {
    std::string query(length(rng), '\0');
    for (char& c : query) c = static_cast<char>(byte(rng));
    ExpectRuns(query);
    if (HasFailure()) break;
  }
}

TEST_F(FtsMatchTest, RandomFts5SyntaxNeverFails) {
  // Queries built from the pieces of FTS5 syntax and a few non-ASCII characters.
  // clang-format off
  const std::vector<std::string> pieces = {
      "AND", "OR", "NOT", "NEAR", "rust", "sqlite", "the", "key", "text", "\"", "'", "*", "^",
      ":", "(", ")", "-", "+", "{", "}", ",", " ", " ", "0", "5", "/", "\\", "\t",
      "\xc3\xa9", "\xe2\x80\x94", "\xf0\x9f\x98\x80", "\xff", "\x80", "\xc3",
  };
  // clang-format on
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> count(1, 40);
  for (int i = 0; i < 3000; ++i) {
    std::string query;
    for (int n = count(rng); n > 0; --n) query += pieces[pick(rng)];
    ExpectRuns(query);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace strata::text
