// Tests of text/fts5_extensions.h against real FTS5: strata's keyword index (schema and
// tokenizer as store/schema.cc makes them) finds text in every script, and strata_phrases,
// strata_bm25, LoadRowLengths and strata_body_text answer as documented.

#include "text/fts5_extensions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "store/schema.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/body_text.h"
#include "text/fts_index.h"
#include "text/fts_query.h"
#include "util/status_macros.h"

namespace strata::text {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::IsOkAndHolds;
using ::strata::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;

// 我们决定使用数据库来存储发票 ("we decided to store invoices in a database").
constexpr std::string_view kChinese =
    "\xe6\x88\x91\xe4\xbb\xac\xe5\x86\xb3\xe5\xae\x9a\xe4\xbd\xbf\xe7\x94\xa8\xe6\x95\xb0\xe6\x8d"
    "\xae\xe5\xba\x93\xe6\x9d\xa5\xe5\xad\x98\xe5\x82\xa8\xe5\x8f\x91\xe7\xa5\xa8";
// 請求書はデータベースに保存します ("invoices are kept in the database").
constexpr std::string_view kJapanese =
    "\xe8\xab\x8b\xe6\xb1\x82\xe6\x9b\xb8\xe3\x81\xaf\xe3\x83\x87\xe3\x83\xbc\xe3\x82\xbf\xe3\x83"
    "\x99\xe3\x83\xbc\xe3\x82\xb9\xe3\x81\xab\xe4\xbf\x9d\xe5\xad\x98\xe3\x81\x97\xe3\x81\xbe\xe3"
    "\x81\x99";
// 청구서는 데이터베이스에 저장합니다 (the same, in Korean).
constexpr std::string_view kKorean =
    "\xec\xb2\xad\xea\xb5\xac\xec\x84\x9c\xeb\x8a\x94 \xeb\x8d\xb0\xec\x9d\xb4\xed\x84\xb0\xeb\xb2"
    "\xa0\xec\x9d\xb4\xec\x8a\xa4\xec\x97\x90 \xec\xa0\x80\xec\x9e\xa5\xed\x95\xa9\xeb\x8b\x88\xeb"
    "\x8b\xa4";
constexpr std::string_view kGerman = "Die Rechnungen werden gespeichert";
constexpr std::string_view kEnglish = "The billing service stored every invoice in Postgres";

class Fts5ExtensionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(InstallFts5Extensions());
    ASSERT_OK_AND_ASSIGN(db_, store::Db::Open(dir_.File("fts.db"), store::DbOptions{}));
    ASSERT_OK(store::Migrate(*db_));
    FtsIndex index(db_.get());
    ASSERT_OK(index.Add(1, kChinese, "decision", "notes"));
    ASSERT_OK(index.Add(2, kJapanese, "seikyu", "notes"));
    ASSERT_OK(index.Add(3, kKorean, "cheonggu", "notes"));
    ASSERT_OK(index.Add(4, kGerman, "rechnungen", "notizen"));
    ASSERT_OK(index.Add(5, kEnglish, "billing", "notes"));
  }

  // The rows of `sql` (two integer columns, `expression` as ?1), in order.
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> Rows(std::string_view sql,
                                                                std::string_view expression) {
    std::vector<std::pair<int64_t, int64_t>> rows;
    auto stmt = db_->Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    stmt->Bind(1, expression);
    while (true) {
      absl::StatusOr<bool> row = stmt->Step();
      if (!row.ok()) return row.status();
      if (!*row) return rows;
      rows.emplace_back(stmt->Int(0), stmt->Int(1));
    }
  }

  // As the recaller asks (the query's terms, each quoted, OR-ed): the rowids, ascending.
  absl::StatusOr<std::vector<int64_t>> Search(std::string_view query) {
    ASSIGN_OR_RETURN(const auto rows,
                     Rows("SELECT rowid, 0 FROM fts WHERE fts MATCH ?1 ORDER BY rowid",
                          MatchExpression(ParseQuery(query).terms)));
    std::vector<int64_t> rowids;
    for (const auto& row : rows) rowids.push_back(row.first);
    return rowids;
  }

  // strata_phrases of each matching row, by rowid.
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> Phrases(std::string_view expression) {
    return Rows("SELECT rowid, strata_phrases(fts) FROM fts WHERE fts MATCH ?1 ORDER BY rowid",
                expression);
  }

  TempDir dir_;
  std::unique_ptr<store::Db> db_;
};

TEST_F(Fts5ExtensionsTest, FindsAWordInsideAChineseSentence) {
  EXPECT_THAT(Search("\xe6\x95\xb0\xe6\x8d\xae\xe5\xba\x93"), IsOkAndHolds(ElementsAre(1)));
  // 发票 (invoice) too, and a pair of characters that is not in it does not.
  EXPECT_THAT(Search("\xe5\x8f\x91\xe7\xa5\xa8"), IsOkAndHolds(ElementsAre(1)));
  EXPECT_THAT(Search("\xe5\xba\x93\xe6\x95\xb0"), IsOkAndHolds(IsEmpty()));
}

TEST_F(Fts5ExtensionsTest, FindsAKatakanaWordInsideAJapaneseSentence) {
  EXPECT_THAT(Search("\xe3\x83\x87\xe3\x83\xbc\xe3\x82\xbf\xe3\x83\x99\xe3\x83\xbc\xe3\x82\xb9"),
              IsOkAndHolds(ElementsAre(2)));
  // 請求書 (invoice), written with Han.
  EXPECT_THAT(Search("\xe8\xab\x8b\xe6\xb1\x82\xe6\x9b\xb8"), IsOkAndHolds(ElementsAre(2)));
}

TEST_F(Fts5ExtensionsTest, FindsAKoreanWordWithAParticleAttached) {
  EXPECT_THAT(Search("\xeb\x8d\xb0\xec\x9d\xb4\xed\x84\xb0\xeb\xb2\xa0\xec\x9d\xb4\xec\x8a\xa4"),
              IsOkAndHolds(ElementsAre(3)));
}

TEST_F(Fts5ExtensionsTest, FindsAGermanWordInAnotherForm) {
  EXPECT_THAT(Search("Rechnung"), IsOkAndHolds(ElementsAre(4)));
  EXPECT_THAT(Search("rechnungen"), IsOkAndHolds(ElementsAre(4)));
}

TEST_F(Fts5ExtensionsTest, EnglishRecallWorksAsBefore) {
  EXPECT_THAT(Search("invoices"), IsOkAndHolds(ElementsAre(5)));
  EXPECT_THAT(Search("store services"), IsOkAndHolds(ElementsAre(5)));
  EXPECT_THAT(Search("POSTGRES"), IsOkAndHolds(ElementsAre(5)));
  EXPECT_THAT(Search("billing"), IsOkAndHolds(ElementsAre(5)));
  EXPECT_THAT(Search("notes"), IsOkAndHolds(ElementsAre(1, 2, 3, 5)));
  EXPECT_THAT(Search("kafka"), IsOkAndHolds(IsEmpty()));
}

TEST_F(Fts5ExtensionsTest, StrataPhrasesHasABitForEachPhraseInTheRow) {
  EXPECT_THAT(Phrases("\"invoice\" OR \"rechnung\" OR \"nothing\""),
              IsOkAndHolds(ElementsAre(std::pair<int64_t, int64_t>{4, 0b010},
                                       std::pair<int64_t, int64_t>{5, 0b001})));
  // A phrase of several tokens counts where the tokens stand together.
  EXPECT_THAT(Phrases("\"billing service\" OR \"service billing\" OR \"notes\""),
              IsOkAndHolds(ElementsAre(
                  std::pair<int64_t, int64_t>{1, 0b100}, std::pair<int64_t, int64_t>{2, 0b100},
                  std::pair<int64_t, int64_t>{3, 0b100}, std::pair<int64_t, int64_t>{5, 0b101})));
}

TEST_F(Fts5ExtensionsTest, StrataPhrasesReportsPhrasesUpTo63) {
  // 65 phrases: "postgres" is phrase 63 in the first, 64 in the second.
  std::string bit63, bit64;
  for (int i = 0; i < 63; ++i) absl::StrAppend(&bit63, "\"absent", i, "\" OR ");
  bit64 = bit63 + "\"absent63\" OR \"postgres\"";
  bit63 += "\"postgres\" OR \"absent64\"";
  EXPECT_THAT(Phrases(bit63), IsOkAndHolds(ElementsAre(std::pair<int64_t, int64_t>{
                                  5, static_cast<int64_t>(uint64_t{1} << 63)})));
  EXPECT_THAT(Phrases(bit64), IsOkAndHolds(ElementsAre(std::pair<int64_t, int64_t>{5, 0})));
}

TEST_F(Fts5ExtensionsTest, StrataPhrasesTakesNoOtherArgument) {
  ASSERT_OK_AND_ASSIGN(
      store::Stmt stmt,
      db_->Prepare("SELECT strata_phrases(fts, 1) FROM fts WHERE fts MATCH 'postgres'"));
  EXPECT_THAT(stmt.Step(), Not(IsOk()));
}

// Each matching row's (strata_bm25, -bm25 with text/fts_index.h's weights), by rowid.
absl::StatusOr<std::vector<std::pair<double, double>>> Scores(store::Db& db,
                                                              std::string_view expression) {
  ASSIGN_OR_RETURN(store::Stmt stmt,
                   db.Prepare(absl::StrCat("SELECT strata_bm25(fts), -bm25(fts, ", kTextWeight,
                                           ", ", kKeyWeight, ", ", kCategoryWeight,
                                           ") FROM fts WHERE fts MATCH ?1 ORDER BY rowid")));
  stmt.Bind(1, expression);
  std::vector<std::pair<double, double>> scores;
  while (true) {
    ASSIGN_OR_RETURN(const bool row, stmt.Step());
    if (!row) return scores;
    scores.emplace_back(stmt.Double(0), stmt.Double(1));
  }
}

// Rows of different lengths, with the query's words in different columns and counts.
void AddRowsOfManyLengths(FtsIndex& index, int64_t first_rowid, int rows) {
  for (int i = 0; i < rows; ++i) {
    std::string text = "invoice";
    for (int w = 0; w < i % 13; ++w) absl::StrAppend(&text, " filler", w, i % 2 ? " invoice" : "");
    ASSERT_OK(index.Add(first_rowid + i, text, i % 3 ? "billing" : "invoice-key",
                        i % 5 ? "notes" : "invoice"));
  }
}

TEST_F(Fts5ExtensionsTest, StrataBm25IsFts5sBm25ToTheLastBit) {
  FtsIndex index(db_.get());
  AddRowsOfManyLengths(index, 100, 60);
  for (const std::string_view expression :
       {"\"invoice\"", "\"invoice\" OR \"billing\"", "\"billing service\" OR \"postgres\"",
        "\"notes\" OR \"filler3\" OR \"invoice\"", "\"key\""}) {
    SCOPED_TRACE(expression);
    // Twice: the first reads each row's length, the second finds it kept.
    for (int pass = 0; pass < 2; ++pass) {
      ASSERT_OK_AND_ASSIGN(const auto scores, Scores(*db_, expression));
      ASSERT_FALSE(scores.empty());
      for (const auto& [ours, fts5] : scores) EXPECT_EQ(ours, fts5);
    }
  }
}

TEST_F(Fts5ExtensionsTest, LoadedRowLengthsGiveTheSameScores) {
  FtsIndex index(db_.get());
  AddRowsOfManyLengths(index, 100, 200);
  // Loaded through a second connection: every connection to the file shares the lengths.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> loader,
                       store::Db::Open(dir_.File("fts.db"), store::DbOptions{.read_only = true}));
  ASSERT_OK_AND_ASSIGN(const int64_t upto, LoadRowLengths(*loader, 0, std::stop_token()));
  EXPECT_EQ(upto, 299);
  // Again from there: nothing new.
  EXPECT_THAT(LoadRowLengths(*loader, upto, std::stop_token()), IsOkAndHolds(299));
  // Rows added after the load have their lengths read when first scored.
  AddRowsOfManyLengths(index, 1000, 30);
  ASSERT_OK_AND_ASSIGN(const auto scores, Scores(*db_, "\"invoice\" OR \"filler7\""));
  ASSERT_EQ(scores.size(), 231u);  // And the English row of SetUp.
  for (const auto& [ours, fts5] : scores) EXPECT_EQ(ours, fts5);
}

TEST_F(Fts5ExtensionsTest, LoadingRowLengthsStopsWhenAsked) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_THAT(LoadRowLengths(*db_, 0, stop.get_token()), IsOkAndHolds(0));
}

TEST_F(Fts5ExtensionsTest, StrataBm25TakesNoOtherArgument) {
  ASSERT_OK_AND_ASSIGN(
      store::Stmt stmt,
      db_->Prepare("SELECT strata_bm25(fts, 1.0) FROM fts WHERE fts MATCH 'postgres'"));
  EXPECT_THAT(stmt.Step(), Not(IsOk()));
}

TEST_F(Fts5ExtensionsTest, StrataBodyTextIsBodyText) {
  const std::string body = R"({"a": "first", "b": ["second", {"c": "third"}], "n": 3})";
  ASSERT_OK_AND_ASSIGN(store::Stmt stmt, db_->Prepare("SELECT strata_body_text(?1), "
                                                      "strata_body_text(NULL)"));
  stmt.Bind(1, body);
  ASSERT_OK_AND_ASSIGN(const bool row, stmt.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(stmt.Text(0), BodyText(body));
  EXPECT_TRUE(stmt.IsNull(1));
}

TEST_F(Fts5ExtensionsTest, TheTokenizerTakesNoOptions) {
  EXPECT_THAT(db_->Exec("CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'strata porter')"),
              Not(IsOk()));
  EXPECT_OK(db_->Exec("CREATE VIRTUAL TABLE u USING fts5(x, tokenize = 'strata')"));
}

TEST_F(Fts5ExtensionsTest, InstallingAgainChangesNothing) {
  ASSERT_OK(InstallFts5Extensions());
  ASSERT_OK(InstallFts5Extensions());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::SqliteDb> again,
                       store::Db::Open(dir_.File("fts.db"), store::DbOptions{}));
  EXPECT_TRUE(again->HasFts5Tokenizer("strata"));
  EXPECT_FALSE(again->HasFts5Tokenizer("no-such-tokenizer"));
}

}  // namespace
}  // namespace strata::text
