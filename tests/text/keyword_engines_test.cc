// The keyword index on both stores: the same versions written to a SQLite file (FTS5) and to a
// PostgreSQL database (text/pg_keyword_index.h) rank alike (ids, order, phrase bits, BM25
// scores), list their newest matches alike and split query terms alike. Runs under
// tests/pg/with_cluster.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pg/db.h"
#include "pg/pg_test_db.h"
#include "pg/schema.h"
#include "store/db.h"
#include "store/schema.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "text/body_text.h"
#include "text/fts5_extensions.h"
#include "text/fts_index.h"
#include "text/fts_query.h"
#include "text/pg_keyword_index.h"
#include "text/term_stats.h"

namespace strata::text {
namespace {

using ::strata::testing::IsOkAndHolds;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAre;

struct Document {
  int64_t id;
  std::string body_json;
  std::string key;
  std::string category;
};

std::string Repeat(std::string_view text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

// Hand-written versions with what recall's queries meet: repeated terms, adjacent words,
// identifiers, a commit hash, stems, diacritics, Chinese, Japanese and Korean.
std::vector<Document> HandWritten() {
  return {
      {1, R"("Rust is a systems programming language; rust rust rust")", "lang-rust", "notes"},
      {2, R"({"text": "programming language design notes", "tags": "language"})", "design",
       "notes"},
      {3, R"("fixed CVE-2023-5678 in the parser")", "cve-2023-5678", "incidents"},
      {4, R"("CVE 2023 review; 5678 lines changed")", "review", "incidents"},
      {5, R"("commit 3f2a9c1d4e5f reverted the fusion change")", "revert", "changes"},
      {6, R"("commit 3f2a9c1 and 3f2a9c1aa: two hashes")", "hashes", "changes"},
      {7, R"("db-prod-07 outage after the failover")", "db-prod-07", "incidents"},
      {8, R"("the outage on db prod 07 was short")", "short", "incidents"},
      {9, R"({"dessert": ["caf\u00e9 cr\u00e8me", "br\u00fbl\u00e9e"]})", "food", "recipes"},
      {10, R"("cafe creme without accents")", "plain", "recipes"},
      {11, R"("running runners run; the runner ran")", "running", "sport"},
      {12, R"("东京塔的夜景很美，东京很大")", "tokyo", "travel"},
      {13, R"("東京タワーの夜景を見ました")", "tokyo-jp", "travel"},
      {14, R"("서버에서 오류가 발생했습니다. 서버 오류")", "server", "incidents"},
      {15, R"("src/recall/fusion.cc fuses ranks; see src/recall/fusion.h")", "fusion", "code"},
      {16, R"("Die Straße ist lang, die strasse auch")", "strasse", "notes"},
      {17, R"("abcдеф mixed scripts and abc деф apart")", "mixed", "notes"},
      {18, R"("")", "empty-body", "notes"},
      {19, R"("language language language programming")", "lang-lang", "notes"},
      {20, R"("systems programming in rust and go")", "rust", "language"},
      // Words longer than PostgreSQL keeps whole (kMaxStoredTermBytes), alike in their first
      // 1,024 bytes, met by a prefix.
      {21, absl::StrCat("\"build ", Repeat("a1", 1500), " then ", Repeat("a1", 1500), "ff\""),
       "long", "notes"},
      {22, absl::StrCat("\"", Repeat("a1", 1500), "b2 build\""), "long-too", "notes"},
  };
}

// Versions drawn from a small vocabulary (fixed seed), so that terms repeat across many.
std::vector<Document> Drawn(int64_t first_id, int count, uint32_t seed) {
  static const char* const kWords[] = {
      "rust",    "language", "programming", "outage", "failover",  "parser",
      "review",  "commit",   "fusion",      "ranks",  "server",    "database",
      "index",   "query",    "running",     "notes",  "caf\u00e9", "cafe",
      "systems", "design",   "db-prod-07",  "东京",   "夜景",      "CVE-2023-5678"};
  std::mt19937 random(seed);
  std::uniform_int_distribution<size_t> word(0, std::size(kWords) - 1);
  std::uniform_int_distribution<int> length(1, 24);
  std::vector<Document> docs;
  for (int i = 0; i < count; ++i) {
    std::string text;
    for (int n = length(random); n > 0; --n)
      absl::StrAppend(&text, text.empty() ? "" : " ", kWords[word(random)]);
    docs.push_back({.id = first_id + i,
                    .body_json = absl::StrCat("\"", text, "\""),
                    .key = absl::StrCat(kWords[word(random)], "-", i),
                    .category = random() % 3 == 0 ? "notes" : kWords[word(random)]});
  }
  return docs;
}

// Queries as recall makes them (text::ParseQuery), and a few of its splits' shapes.
std::vector<KeywordMatch> Queries() {
  const char* const kTexts[] = {
      "rust programming language",
      "programming language",
      "CVE-2023-5678",
      "fix 3f2a9c1",
      "db-prod-07 outage",
      "caf\u00e9 cr\u00e8me",
      "cafe",
      "running runners",
      "东京 夜景",
      "東京タワーの夜景",
      "서버에서 오류",
      "src/recall/fusion.cc",
      "Straße strasse",
      "abcдеф",
      "the and of",
      "zzzznotthere",
      "language design notes incidents",
      "a1a1a1a1 build",
  };
  std::vector<KeywordMatch> queries;
  for (const char* text : kTexts) {
    ParsedQuery parsed = ParseQuery(text);
    queries.push_back({.terms = parsed.terms, .phrases = parsed.phrases});
    queries.push_back({.terms = {}, .phrases = parsed.phrases});  // Phrases alone.
    queries.push_back({.terms = parsed.terms});                   // Terms alone.
  }
  return queries;
}

// Past kPruneMinRows, where terms are counted: "every" is in all versions, "most" in 3 of 5,
// "half" in exactly half (not more than half: selective), "few" in 1 of 5.
std::vector<Document> CountedCorpus() {
  std::vector<Document> docs;
  const int count = static_cast<int>(kPruneMinRows) + 200;
  for (int i = 0; i < count; ++i) {
    std::string text = "every";
    if (i % 5 < 3) text += " most runner";
    if (i % 2 == 0) text += " half";
    if (i % 5 == 0) text += " few abcдеф";
    if (i % 7 == 0) text += " running";
    docs.push_back({.id = i + 1,
                    .body_json = absl::StrCat("\"", text, "\""),
                    .key = absl::StrCat("k", i),
                    .category = "c"});
  }
  return docs;
}

std::string Describe(const KeywordMatch& match) {
  return absl::StrCat("match: ", MatchExpression(match.terms, match.phrases));
}

class KeywordEnginesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(InstallFts5Extensions());
    ASSERT_OK_AND_ASSIGN(sqlite_, store::Db::Open(dir_.File("keyword.db"), {}));
    ASSERT_OK(store::Migrate(*sqlite_));
    const std::string uri = pg::testing::FreshDatabaseUri();
    ASSERT_FALSE(uri.empty());
    ASSERT_OK_AND_ASSIGN(pg_, pg::PgDb::Open(uri));
    ASSERT_OK(pg::Migrate(pg_->connection()));
  }

  std::vector<store::Db*> Engines() { return {sqlite_.get(), pg_.get()}; }

  void Add(const std::vector<Document>& docs) {
    for (store::Db* db : Engines()) {
      ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db));
      FtsIndex index(db);
      for (const Document& d : docs) {
        ASSERT_OK(index.Add(d.id, BodyText(d.body_json), d.key, d.category));
      }
      ASSERT_OK(txn.Commit());
    }
  }

  void Remove(const std::vector<Document>& docs) {
    for (store::Db* db : Engines()) {
      ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db));
      FtsIndex index(db);
      for (const Document& d : docs) ASSERT_OK(index.Remove(d.id, d.body_json, d.key, d.category));
      ASSERT_OK(txn.Commit());
    }
  }

  // Rank on both engines, expected alike; returns SQLite's answer.
  std::vector<RankedMatch> RankAlike(const KeywordMatch& match, int64_t offset, int64_t limit) {
    SCOPED_TRACE(absl::StrCat(Describe(match), " offset ", offset, " limit ", limit));
    absl::StatusOr<std::vector<RankedMatch>> on_sqlite =
        FtsIndex(sqlite_.get()).Rank(match, offset, limit);
    absl::StatusOr<std::vector<RankedMatch>> on_pg = FtsIndex(pg_.get()).Rank(match, offset, limit);
    EXPECT_OK(on_sqlite);
    EXPECT_OK(on_pg);
    if (!on_sqlite.ok() || !on_pg.ok()) return {};
    EXPECT_EQ(on_sqlite->size(), on_pg->size());
    for (size_t i = 0; i < std::min(on_sqlite->size(), on_pg->size()); ++i) {
      const RankedMatch& s = (*on_sqlite)[i];
      const RankedMatch& p = (*on_pg)[i];
      EXPECT_EQ(s.version_id, p.version_id) << "rank " << i;
      EXPECT_EQ(s.phrases, p.phrases) << "rank " << i << ", version " << s.version_id;
      EXPECT_LE(std::abs(s.score - p.score), 1e-9 * std::abs(s.score))
          << "rank " << i << ", version " << s.version_id << ": " << s.score << " vs " << p.score;
    }
    return *on_sqlite;
  }

  std::vector<int64_t> NewestAlike(const KeywordMatch& match, std::optional<int64_t> below,
                                   int64_t limit) {
    SCOPED_TRACE(absl::StrCat(Describe(match), " below ", below.value_or(-1), " limit ", limit));
    absl::StatusOr<std::vector<int64_t>> on_sqlite =
        FtsIndex(sqlite_.get()).NewestMatches(match, below, limit);
    absl::StatusOr<std::vector<int64_t>> on_pg =
        FtsIndex(pg_.get()).NewestMatches(match, below, limit);
    EXPECT_OK(on_sqlite);
    EXPECT_OK(on_pg);
    if (!on_sqlite.ok() || !on_pg.ok()) return {};
    EXPECT_EQ(*on_sqlite, *on_pg);
    return *on_sqlite;
  }

  void EveryQueryAlike() {
    for (const KeywordMatch& match : Queries()) {
      RankAlike(match, 0, 1000);
      RankAlike(match, 2, 3);
      RankAlike(match, 7, 5);
      NewestAlike(match, std::nullopt, 1000);
      NewestAlike(match, 60, 4);
    }
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<store::SqliteDb> sqlite_;
  std::unique_ptr<pg::PgDb> pg_;
};

TEST_F(KeywordEnginesTest, RankAndNewestMatchesAlike) {
  Add(HandWritten());
  Add(Drawn(100, 150, 7));
  EveryQueryAlike();
  // The corpus means something to the queries: the hand-written answers are there.
  const ParsedQuery cve = ParseQuery("CVE-2023-5678");
  const std::vector<RankedMatch> phrase_only = RankAlike({.phrases = cve.phrases}, 0, 1000);
  std::vector<int64_t> ids;
  for (const RankedMatch& m : phrase_only) ids.push_back(m.version_id);
  EXPECT_THAT(ids, Contains(3));
  EXPECT_THAT(ids, Not(Contains(4)));  // Its parts, scattered.
  const ParsedQuery hash = ParseQuery("3f2a9c1");
  ids.clear();
  for (const RankedMatch& m : RankAlike({.phrases = hash.phrases}, 0, 1000)) {
    ids.push_back(m.version_id);
  }
  EXPECT_THAT(ids, Contains(5));  // Only a prefix of its hash.
  EXPECT_THAT(ids, Contains(6));
  ids.clear();
  for (const RankedMatch& m : RankAlike({.phrases = ParseQuery("a1a1a1a1").phrases}, 0, 1000)) {
    ids.push_back(m.version_id);
  }
  EXPECT_THAT(ids, UnorderedElementsAre(21, 22));
}

TEST_F(KeywordEnginesTest, RemovalsAndReAddsAlike) {
  const std::vector<Document> hand = HandWritten();
  const std::vector<Document> drawn = Drawn(100, 150, 11);
  Add(hand);
  Add(drawn);
  Remove({hand[0], hand[2], hand[11], drawn[5], drawn[6]});
  EveryQueryAlike();
  // A removed version no longer matches.
  const std::vector<RankedMatch> cve = RankAlike({.terms = {"cve"}}, 0, 1000);
  for (const RankedMatch& m : cve) EXPECT_NE(m.version_id, 3);
  EXPECT_THAT(NewestAlike({.terms = {"rust"}}, std::nullopt, 1000), Not(Contains(1)));
  // Re-added under the same ids, and under new ones.
  Add({hand[0], drawn[5]});
  Document moved = hand[2];
  moved.id = 500;
  Add({moved});
  EveryQueryAlike();
  EXPECT_THAT(NewestAlike({.terms = {"rust"}}, std::nullopt, 1000), Contains(1));
  TermStats sqlite_stats(sqlite_.get());
  TermStats pg_stats(pg_.get());
  const int64_t indexed = static_cast<int64_t>(hand.size() + drawn.size()) - 5 + 3;
  EXPECT_THAT(pg_stats.IndexedRows(), IsOkAndHolds(indexed));
  EXPECT_THAT(sqlite_stats.IndexedRows(), IsOkAndHolds(indexed));
}

TEST_F(KeywordEnginesTest, EmptyQueriesAndAbsentTermsMatchNothing) {
  Add(HandWritten());
  EXPECT_THAT(RankAlike({}, 0, 10), IsEmpty());
  EXPECT_THAT(NewestAlike({}, std::nullopt, 10), IsEmpty());
  EXPECT_THAT(RankAlike({.terms = {"zzzznotthere"}}, 0, 10), IsEmpty());
  EXPECT_THAT(NewestAlike({.terms = {"zzzznotthere"}}, std::nullopt, 10), IsEmpty());
  // A term of punctuation alone has no token: it matches nothing, and keeps its number.
  const std::vector<RankedMatch> after_nothing = RankAlike({.terms = {"\u2014", "rust"}}, 0, 10);
  ASSERT_THAT(after_nothing, Not(IsEmpty()));
  EXPECT_EQ(after_nothing[0].phrases, uint64_t{2});
}

TEST_F(KeywordEnginesTest, TermStatsSplitAlike) {
  const std::vector<Document> docs = CountedCorpus();
  const int count = static_cast<int>(docs.size());
  Add(docs);
  TermStats sqlite_stats(sqlite_.get());
  TermStats pg_stats(pg_.get());
  ASSERT_THAT(sqlite_stats.IndexedRows(), IsOkAndHolds(int64_t{count}));
  ASSERT_THAT(pg_stats.IndexedRows(), IsOkAndHolds(int64_t{count}));
  const std::vector<std::vector<std::string>> queries = {{"every", "most", "half", "few"},
                                                         {"most", "runners", "abcдеф"},
                                                         {"running", "every"},
                                                         {"every", "most"},
                                                         {"nothing", "every"}};
  for (const std::vector<std::string>& terms : queries) {
    SCOPED_TRACE(absl::StrJoin(terms, " "));
    ASSERT_OK_AND_ASSIGN(const SplitTerms on_sqlite, sqlite_stats.Split(terms));
    ASSERT_OK_AND_ASSIGN(const SplitTerms on_pg, pg_stats.Split(terms));
    EXPECT_EQ(on_sqlite.selective, on_pg.selective);
    EXPECT_EQ(on_sqlite.common, on_pg.common);
  }
  ASSERT_OK_AND_ASSIGN(const SplitTerms split, pg_stats.Split({"every", "most", "half", "few"}));
  EXPECT_EQ(split.common, (std::vector<std::string>{"every", "most"}));
  // The ranking of a corpus this size, too.
  RankAlike({.terms = {"every", "most", "half", "few", "runners"}}, 0, 50);
  RankAlike({.terms = {"abcдеф"}}, 10, 20);
}

// What TermStats saved of `db`'s common terms (its meta row), "" when nothing.
std::string SavedCommonTerms(store::Db& db) {
  absl::StatusOr<store::Stmt> s =
      db.Prepare("SELECT value FROM meta WHERE name = 'keyword_common_terms'");
  EXPECT_OK(s);
  if (!s.ok()) return "";
  absl::StatusOr<bool> row = s->Step();
  EXPECT_OK(row);
  return row.ok() && *row ? std::string(s->Text(0)) : "";
}

void SetSavedCommonTerms(store::Db& db, const std::string& value) {
  absl::StatusOr<store::Stmt> s = db.Prepare(
      "INSERT INTO meta (name, value) VALUES ('keyword_common_terms', ?1) "
      "ON CONFLICT (name) DO UPDATE SET value = excluded.value");
  ASSERT_OK(s);
  s->Bind(1, value);
  ASSERT_OK(s->Run());
}

// The common terms a TermStats counted are saved for the next one, which takes them without
// counting while the index is within a tenth of the size they were counted at; a term
// counted rare since leaves them.
TEST_F(KeywordEnginesTest, CommonTermsOutliveTheirTermStats) {
  const std::vector<Document> docs = CountedCorpus();
  Add(docs);
  const int64_t rows = static_cast<int64_t>(docs.size());
  for (store::Db* db : Engines()) {
    SCOPED_TRACE(db == sqlite_.get() ? "sqlite" : "postgresql");
    {
      TermStats first(db);
      ASSERT_OK_AND_ASSIGN(const SplitTerms split, first.Split({"every", "few"}));
      EXPECT_EQ(split.common, std::vector<std::string>{"every"});
      ASSERT_OK(first.Save());
    }
    EXPECT_EQ(SavedCommonTerms(*db), absl::StrCat(rows, " every\n"));
    // Saved, a term in no version at all is taken as common: it was not counted.
    SetSavedCommonTerms(*db, absl::StrCat(rows, " every\n", rows - rows / 20, " absent\n"));
    {
      TermStats second(db);
      ASSERT_OK_AND_ASSIGN(const SplitTerms split, second.Split({"absent", "few"}));
      EXPECT_EQ(split.common, std::vector<std::string>{"absent"});
      EXPECT_EQ(split.selective, std::vector<std::string>{"few"});
      // Nothing it counted changes what is saved.
      ASSERT_OK(second.Save());
      EXPECT_THAT(SavedCommonTerms(*db), HasSubstr(" absent\n"));
    }
    // Counted at twice the size, it is counted again: rare, and no longer saved.
    SetSavedCommonTerms(*db, absl::StrCat(rows, " every\n", rows * 2, " absent\n"));
    {
      TermStats third(db);
      ASSERT_OK_AND_ASSIGN(const SplitTerms split, third.Split({"absent", "few"}));
      EXPECT_THAT(split.common, IsEmpty());
      ASSERT_OK(third.Save());
    }
    EXPECT_EQ(SavedCommonTerms(*db), absl::StrCat(rows, " every\n"));
  }
}

// text_term_stats and text_totals of `db`, a row a string.
std::vector<std::string> StatisticsRows(store::Db& db) {
  std::vector<std::string> rows;
  for (const char* sql : {"SELECT field, term, documents FROM text_term_stats ORDER BY 1, 2",
                          "SELECT field, documents, tokens FROM text_totals ORDER BY 1"}) {
    absl::StatusOr<store::Stmt> s = db.Prepare(sql);
    EXPECT_OK(s);
    if (!s.ok()) return {};
    while (true) {
      absl::StatusOr<bool> row = s->Step();
      EXPECT_OK(row);
      if (!row.ok() || !*row) break;
      rows.push_back(absl::StrCat(std::string(s->Text(0)), " ", std::string(s->Text(1)), " ",
                                  std::string(s->Text(2))));
    }
  }
  return rows;
}

TEST_F(KeywordEnginesTest, StatisticsOfOneTransactionOrOneAVersionAreTheSame) {
  const std::vector<Document> docs = CountedCorpus();
  for (const Document& d : docs) {
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*pg_));
    ASSERT_OK(FtsIndex(pg_.get()).Add(d.id, BodyText(d.body_json), d.key, d.category));
    ASSERT_OK(txn.Commit());
  }
  // Another store: a transaction rolled back, then every version in one (which counts the
  // statistics of all but its first at COMMIT), by one index.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<pg::PgDb> other,
                       pg::PgDb::Open(pg::testing::FreshDatabaseUri()));
  ASSERT_OK(pg::Migrate(other->connection()));
  FtsIndex index(other.get());
  {
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*other));
    for (size_t i = 0; i < 5; ++i) {
      ASSERT_OK(index.Add(docs[i].id, BodyText(docs[i].body_json), docs[i].key, docs[i].category));
    }
  }
  EXPECT_THAT(StatisticsRows(*other), IsEmpty());
  {
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*other));
    for (const Document& d : docs) {
      ASSERT_OK(index.Add(d.id, BodyText(d.body_json), d.key, d.category));
    }
    ASSERT_OK(txn.Commit());
  }
  const std::vector<std::string> one_a_version = StatisticsRows(*pg_);
  ASSERT_THAT(one_a_version, Not(IsEmpty()));
  EXPECT_EQ(StatisticsRows(*other), one_a_version);
}

TEST_F(KeywordEnginesTest, SaturatedStatisticsStayAndRankAlike) {
  // CountedCorpus; then the rows of the terms in at least half of the versions saturated, as a
  // store ten times larger has them.
  const std::vector<Document> docs = CountedCorpus();
  const int count = static_cast<int>(docs.size());
  Add(docs);
  ASSERT_OK(pg_->Exec(absl::StrCat("UPDATE text_term_stats SET documents = ", kSaturatedDocuments,
                                   " WHERE documents >= ", count / 2)));
  auto saturated = [this]() -> std::vector<std::string> {
    auto s = pg_->Prepare(absl::StrCat("SELECT term FROM text_term_stats WHERE documents = ",
                                       kSaturatedDocuments, " ORDER BY term"));
    std::vector<std::string> terms;
    if (!s.ok()) return {"(error)"};
    while (true) {
      absl::StatusOr<bool> row = s->Step();
      if (!row.ok() || !*row) break;
      terms.push_back(std::string(s->Text(0)));
    }
    return terms;
  };
  const std::vector<std::string> before = saturated();
  ASSERT_THAT(before, Not(IsEmpty()));
  auto few = [this]() -> int64_t {
    auto s = pg_->Prepare("SELECT sum(documents) FROM text_term_stats WHERE term = 'few'");
    if (!s.ok() || !s->Step().value_or(false)) return -1;
    return s->Int(0);
  };
  ASSERT_EQ(few(), count / 5);
  // Removing and re-adding versions holding them leaves them as they are; the others count.
  Remove({docs[0], docs[5], docs[10]});
  EXPECT_EQ(saturated(), before);
  EXPECT_EQ(few(), count / 5 - 3);
  Add({docs[0]});
  EXPECT_EQ(saturated(), before);
  EXPECT_EQ(few(), count / 5 - 2);
  // Nor were they touched: the index asked which rows are saturated and left them out (an
  // upsert that changes nothing still locks its row, which sets the row's xmax).
  auto locked = pg_->Prepare(absl::StrCat("SELECT count(*) FROM text_term_stats WHERE documents = ",
                                          kSaturatedDocuments, " AND xmax <> 0"));
  ASSERT_OK(locked);
  ASSERT_THAT(locked->Step(), IsOkAndHolds(true));
  EXPECT_EQ(locked->Int(0), 0);
  // Split, ranking and phrases (whose anchor the statistics choose) as on SQLite.
  TermStats sqlite_stats(sqlite_.get());
  TermStats pg_stats(pg_.get());
  for (const std::vector<std::string>& terms :
       std::vector<std::vector<std::string>>{{"every", "most", "half", "few"}, {"every", "most"}}) {
    ASSERT_OK_AND_ASSIGN(const SplitTerms on_sqlite, sqlite_stats.Split(terms));
    ASSERT_OK_AND_ASSIGN(const SplitTerms on_pg, pg_stats.Split(terms));
    EXPECT_EQ(on_sqlite.selective, on_pg.selective);
    EXPECT_EQ(on_sqlite.common, on_pg.common);
  }
  for (const char* text : {"every most", "half few", "most runner", "every half", "abcдеф"}) {
    const ParsedQuery query = ParseQuery(text);
    RankAlike({.terms = query.terms, .phrases = query.phrases}, 0, 30);
    RankAlike({.phrases = query.phrases}, 5, 30);
    NewestAlike({.phrases = query.phrases}, std::nullopt, 30);
  }
}

// The segments (PgKeywordIndex::BuildSegments), here of 16 versions and of the row terms in
// at least 40 of them: queries rank as from the rows alone, as on SQLite, before and after,
// with a block dropped by a purge and built again; and they are what a query reads.
TEST_F(KeywordEnginesTest, SegmentsRankAsTheRowsDo) {
  std::vector<Document> docs = HandWritten();
  for (Document& d : Drawn(23, 170, 5)) docs.push_back(std::move(d));
  Add(docs);
  // BuildSegments builds blocks of versions that exist, up to the one before the newest.
  ASSERT_OK(pg_->Exec(
      "INSERT INTO memories (id, category, key, created_at_unix_ms, last_event_at_unix_ms) "
      "VALUES (1, 'c', 'k', 0, 0); "
      "INSERT INTO versions (id, memory_id, version, body_json, body_hash, type, "
      "valid_from_unix_ms, recorded_at_unix_ms) "
      "SELECT i, 1, i, '\"\"', 0, 'fact', 0, 0 FROM generate_series(1, 192) AS i"));
  const SegmentOptions options{.block_versions = 16, .min_documents = 40};
  auto count = [this](const char* sql) -> int64_t {
    auto s = pg_->Prepare(sql);
    if (!s.ok() || !s->Step().value_or(false)) return -1;
    return s->Int(0);
  };
  std::vector<KeywordMatch> queries = Queries();
  for (const char* text : {"language", "rust language", "programming notes", "index query",
                           "rust programming language design", "languag*"}) {
    const ParsedQuery parsed = ParseQuery(text);
    queries.push_back({.terms = parsed.terms, .phrases = parsed.phrases});
    queries.push_back({.terms = parsed.terms});
  }
  queries.push_back(
      {.phrases = {
           {.kind = QueryPhrase::Kind::kAdjacent, .text = "programming languag", .prefix = true}}});
  auto every_query_alike = [&] {
    for (const KeywordMatch& match : queries) {
      RankAlike(match, 0, 1000);
      RankAlike(match, 3, 4);
      NewestAlike(match, std::nullopt, 1000);
      NewestAlike(match, 100, 5);
    }
  };
  every_query_alike();
  // None before the store holds twice min_documents versions.
  EXPECT_THAT(PgKeywordIndex::BuildSegments(*pg_, {.block_versions = 16, .min_documents = 97}, 100),
              IsOkAndHolds(0));
  // 11 blocks: the 12th (177-192) waits for a later version. The first 5 hold segments of the
  // commonest terms only, as if the others saturated later; they are built again, one a call
  // that builds nothing else, with the newest's.
  const int64_t commonest =
      std::min<int64_t>(count("SELECT max(documents) FROM text_term_stats"), 192 / 2);
  ASSERT_GT(commonest, options.min_documents);
  EXPECT_THAT(
      PgKeywordIndex::BuildSegments(*pg_, {.block_versions = 16, .min_documents = commonest}, 5),
      IsOkAndHolds(5));
  every_query_alike();
  EXPECT_THAT(PgKeywordIndex::BuildSegments(*pg_, options, 100), IsOkAndHolds(6));
  constexpr char kFewer[] =
      "SELECT count(*) FROM text_segment_blocks WHERE cardinality(terms) < (SELECT "
      "cardinality(terms) FROM text_segment_blocks ORDER BY first_version DESC LIMIT 1)";
  EXPECT_EQ(count(kFewer), 5);
  every_query_alike();
  for (int rebuilt = 1; rebuilt <= 5; ++rebuilt) {  // One a call.
    EXPECT_THAT(PgKeywordIndex::BuildSegments(*pg_, options, 100), IsOkAndHolds(1));
    EXPECT_EQ(count(kFewer), 5 - rebuilt);
  }
  EXPECT_THAT(PgKeywordIndex::BuildSegments(*pg_, options, 100), IsOkAndHolds(0));
  EXPECT_EQ(count("SELECT count(*) FROM text_segment_blocks"), 11);
  EXPECT_GT(count("SELECT count(*) FROM text_segments WHERE term = '0languag'"), 5);
  every_query_alike();
  // A purge drops its block, whose versions are read from their rows until it is built again.
  Remove({docs[40]});
  ASSERT_OK(pg_->Exec("DELETE FROM versions WHERE id = 41"));
  EXPECT_EQ(count("SELECT count(*) FROM text_segment_blocks WHERE first_version = 33"), 0);
  every_query_alike();
  EXPECT_THAT(PgKeywordIndex::BuildSegments(*pg_, options, 100), IsOkAndHolds(1));
  EXPECT_EQ(count("SELECT count(*) FROM text_segment_blocks"), 11);
  every_query_alike();
  // What a query reads of a segmented term: its segments, not its rows, where blocks hold them.
  ASSERT_OK(pg_->Exec("DELETE FROM text_segments WHERE term = '0languag' AND first_version = 17"));
  auto in_block = [](const absl::StatusOr<std::vector<RankedMatch>>& ranked) {
    int n = 0;
    for (const RankedMatch& m : ranked.value_or(std::vector<RankedMatch>())) {
      n += m.version_id >= 17 && m.version_id <= 32;
    }
    return n;
  };
  const int on_sqlite = in_block(FtsIndex(sqlite_.get()).Rank({.terms = {"language"}}, 0, 1000));
  ASSERT_GT(on_sqlite, 3);
  // Those holding it in their key or category remain.
  EXPECT_LT(in_block(FtsIndex(pg_.get()).Rank({.terms = {"language"}}, 0, 1000)), on_sqlite - 3);
}

// Migration 7 folds a version's postings (rows of text_postings until then) into its row of
// text_documents: the rows it leaves are the ones Add writes now, term for term.
TEST_F(KeywordEnginesTest, Migration7FoldsEachVersionsPostingsIntoItsRow) {
  Add(Drawn(100, 150, 7));
  // Each version's terms and their positions, one row each, sorted.
  constexpr char kPostings[] =
      "SELECT version_id, key, at, CAST(lengths AS text) FROM text_documents, "
      "unnest(terms, string_to_array(positions, ';')) AS u (key, at) ORDER BY 1, 2";
  ASSERT_OK_AND_ASSIGN(const pg::Rows written, pg_->connection().Query(kPostings));
  ASSERT_GT(written.rows.size(), 150u);
  // The same versions as schema 6 kept them.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<pg::PgDb> old,
                       pg::PgDb::Open(pg::testing::FreshDatabaseUri()));
  ASSERT_OK(pg::Migrate(old->connection(), 6));
  for (const auto& row : written.rows) {
    ASSERT_OK(old->connection()
                  .Query("INSERT INTO text_postings (term, field, version_id, positions) "
                         "VALUES (substr($2, 2), CAST(left($2, 1) AS smallint), "
                         "CAST($1 AS bigint), CAST('{' || $3 || '}' AS integer[]))",
                         {row[0], row[1], row[2]})
                  .status());
    ASSERT_OK(old->connection()
                  .Query("INSERT INTO text_documents (version_id, lengths) "
                         "VALUES (CAST($1 AS bigint), CAST($2 AS integer[])) "
                         "ON CONFLICT DO NOTHING",
                         {row[0], row[3]})
                  .status());
  }
  ASSERT_OK(old->connection().Exec("INSERT INTO text_documents (version_id, lengths) "
                                   "VALUES (999, '{0,1,1}')"));  // No term in its text.
  ASSERT_OK(pg::Migrate(old->connection()));
  ASSERT_OK_AND_ASSIGN(const pg::Rows migrated, old->connection().Query(kPostings));
  EXPECT_EQ(migrated.rows, written.rows);
  ASSERT_OK_AND_ASSIGN(const int64_t empty,
                       old->connection().QueryInt("SELECT count(*) FROM text_documents "
                                                  "WHERE version_id = 999 AND terms = '{}' "
                                                  "AND positions = ''"));
  EXPECT_EQ(empty, 1);
  ASSERT_OK_AND_ASSIGN(const int64_t tables,
                       old->connection().QueryInt("SELECT count(*) FROM pg_tables "
                                                  "WHERE tablename = 'text_postings'"));
  EXPECT_EQ(tables, 0);
}

// Migration 8 sets the terms' index's pending list to 512 kB, on a new store and on one of
// schema 7.
TEST_F(KeywordEnginesTest, Migration8SetsTheTermsPendingListTo512kB) {
  constexpr char kOptions[] =
      "SELECT CAST(reloptions AS text) FROM pg_class WHERE relname = 'text_documents_terms'";
  ASSERT_OK_AND_ASSIGN(const pg::Rows fresh, pg_->connection().Query(kOptions));
  ASSERT_EQ(fresh.rows.size(), 1u);
  EXPECT_EQ(fresh.rows[0][0], "{gin_pending_list_limit=512}");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<pg::PgDb> old,
                       pg::PgDb::Open(pg::testing::FreshDatabaseUri()));
  ASSERT_OK(pg::Migrate(old->connection(), 7));
  ASSERT_OK_AND_ASSIGN(const pg::Rows seven, old->connection().Query(kOptions));
  ASSERT_EQ(seven.rows.size(), 1u);
  EXPECT_EQ(seven.rows[0][0], "{gin_pending_list_limit=1024}");
  ASSERT_OK(pg::Migrate(old->connection()));
  ASSERT_OK_AND_ASSIGN(const pg::Rows migrated, old->connection().Query(kOptions));
  ASSERT_EQ(migrated.rows.size(), 1u);
  EXPECT_EQ(migrated.rows[0][0], "{gin_pending_list_limit=512}");
}

// A store's first minute: autovacuum has not analyzed the index's tables yet, so the planner
// knows nothing of their columns. A rare term's ranking still finds its rows by their terms
// (the GIN index), not by reading every version's row, once there are more than a few
// thousand (below ~7,000 rows the planner reads them all, a few ms).
TEST_F(KeywordEnginesTest, ARankingBeforeAnyAnalyzeFindsItsRowsByTheirTerms) {
  ASSERT_OK(pg_->Exec("ALTER TABLE text_documents SET (autovacuum_enabled = false)"));
  Add(Drawn(1, 12000, 5));
  Add({{.id = 20000, .body_json = R"("a ptarmigan")", .key = "bird", .category = "facts"}});
  // Counted in the transaction's own statistics, which only this session sees.
  auto scans = [this](const char* index) -> int64_t {
    auto s = pg_->Prepare(
        absl::StrCat("SELECT pg_stat_get_xact_numscans(CAST('", index, "' AS regclass))"));
    if (!s.ok() || !s->Step().value_or(false)) return -1;
    return s->Int(0);
  };
  ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*pg_));
  ASSERT_OK_AND_ASSIGN(const std::vector<RankedMatch> ranked,
                       FtsIndex(pg_.get()).Rank({.terms = {"ptarmigan"}}, 0, 10));
  ASSERT_THAT(ranked, SizeIs(1));
  EXPECT_EQ(ranked[0].version_id, 20000);
  EXPECT_GT(scans("text_documents_terms"), 0);
}

}  // namespace
}  // namespace strata::text
