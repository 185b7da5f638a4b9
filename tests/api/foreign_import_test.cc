// Import from other memories (Store::ImportForeign): server-memory's knowledge graph, a
// Markdown folder, generic CSV and JSONL. Fixtures are written by the tests. Each format:
// what lands where, re-import changes nothing, a changed file adds versions only to what
// changed, and bad records are reported by file and line. On a SQLite file and on a
// PostgreSQL database (temporal/engines.h).

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/engines.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "transfer/foreign.h"
#include "util/clock.h"

namespace strata {
namespace {

using nlohmann::json;
using ::strata::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kMinute = 60 * 1000;

// A bad record as reported: "file:line: message".
struct Reported {
  std::string file;
  int64_t line = 0;
  std::string message;
};

class ForeignImportTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    const std::string path = temporal::testing::NewStorePath(GetParam(), dir_, "memory.db");
    ASSERT_FALSE(path.empty());
    ASSERT_OK_AND_ASSIGN(store_,
                         Store::Open({.path = path, .clock = &clock_, .embedder = "none"}));
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_.path() / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  absl::StatusOr<ImportSummary> Import(ImportFormat format, const std::string& path,
                                       bool stop = false,
                                       std::optional<std::string> category = std::nullopt) {
    reported_.clear();
    clock_.Advance(kMinute);
    return store_->ImportForeign(
        {.format = format, .path = path, .default_category = std::move(category)},
        {.stop_on_error = stop, .on_error = [this](const SourceLine& at, const absl::Status& e) {
           reported_.push_back({at.file, at.line, std::string(e.message())});
         }});
  }

  std::vector<int64_t> ReportedLines() const {
    std::vector<int64_t> lines;
    for (const Reported& r : reported_) lines.push_back(r.line);
    return lines;
  }

  json Body(const std::string& category, const std::string& key) {
    absl::StatusOr<Version> v = store_->Get({.category = category, .key = key});
    EXPECT_OK(v);
    return v.ok() ? json::parse(v->body_json) : json();
  }

  int64_t Versions(const std::string& category, const std::string& key) {
    absl::StatusOr<HistoryPage> page = store_->History({.category = category, .key = key}, 10, 0);
    return page.ok() ? page->total : 0;
  }

  std::vector<std::string> RecallKeys(const std::string& query) {
    absl::StatusOr<RecallResult> r = store_->Recall({.query = query, .mode = RecallMode::kFts5});
    EXPECT_OK(r);
    std::vector<std::string> keys;
    if (r.ok()) {
      for (const RecallItem& item : r->items) keys.push_back(item.version.identity.key);
    }
    return keys;
  }

  strata::testing::TempDir dir_;
  FakeClock clock_{kNow};
  std::unique_ptr<Store> store_;
  std::vector<Reported> reported_;
};

// Relations come first: the file's order is not the graph's.
constexpr char kGraph[] =
    R"({"type":"relation","from":"Alice Smith","to":"Bob","relationType":"works_with"}
{"type":"entity","name":"Alice Smith","entityType":"Person ","observations":["Speaks fluent Portuguese","Leads the billing team"]}
{"type":"entity","name":"Bob","entityType":"person","observations":["Joined in 2024"]}
{"type":"relation","from":"Alice Smith","to":"Globex","relationType":"consults_for"}
{"type":"entity","name":"Twin","entityType":"","observations":["Joined in 2024"]}
)";

TEST_P(ForeignImportTest, ServerMemoryEntitiesCarryTheirRelationsAtBothEnds) {
  const std::string path = Write("memory.jsonl", kGraph);
  ASSERT_OK_AND_ASSIGN(const ImportSummary s, Import(ImportFormat::kServerMemory, path));
  EXPECT_EQ(s.read, 3);
  EXPECT_EQ(s.created, 3);
  EXPECT_EQ(s.failed, 0);
  const json alice = Body("person", "Alice Smith");
  EXPECT_EQ(alice["entityType"], "Person ");
  EXPECT_EQ(alice["observations"], json({"Speaks fluent Portuguese", "Leads the billing team"}));
  // Sorted, and the one to Globex (not in the file) kept on the end that is.
  EXPECT_EQ(alice["relations"],
            json::parse(R"([{"from":"Alice Smith","relationType":"works_with","to":"Bob"},
                            {"from":"Alice Smith","relationType":"consults_for","to":"Globex"}])"));
  EXPECT_EQ(Body("person", "Bob")["relations"],
            json::parse(R"([{"from":"Alice Smith","relationType":"works_with","to":"Bob"}])"));
  // An empty entityType is the category "entity"; the same observations under another name
  // are another memory, never merged.
  EXPECT_EQ(Body("entity", "Twin")["observations"], json({"Joined in 2024"}));
  ASSERT_OK_AND_ASSIGN(const Version bob, store_->Get({.category = "person", .key = "Bob"}));
  EXPECT_EQ(bob.type, "entity");
  EXPECT_EQ(bob.source, "server-memory");

  EXPECT_THAT(RecallKeys("Portuguese"), ElementsAre("Alice Smith"));
  EXPECT_THAT(RecallKeys("Globex"), ElementsAre("Alice Smith"));  // By a related name.
}

TEST_P(ForeignImportTest, ServerMemoryReimportChangesOnlyWhatChanged) {
  const std::string path = Write("memory.jsonl", kGraph);
  ASSERT_OK(Import(ImportFormat::kServerMemory, path));
  ASSERT_OK_AND_ASSIGN(ImportSummary again, Import(ImportFormat::kServerMemory, path));
  EXPECT_EQ(again.unchanged, 3);
  EXPECT_EQ(again.created + again.updated, 0);

  // Bob gains an observation and a relation to a new entity; Alice and Twin are as before.
  Write("memory.jsonl",
        absl::StrCat(
            R"({"type":"relation","from":"Alice Smith","to":"Bob","relationType":"works_with"}
{"type":"entity","name":"Alice Smith","entityType":"Person ","observations":["Speaks fluent Portuguese","Leads the billing team"]}
{"type":"entity","name":"Bob","entityType":"person","observations":["Joined in 2024","Moved to Lisbon"]}
{"type":"relation","from":"Alice Smith","to":"Globex","relationType":"consults_for"}
{"type":"entity","name":"Twin","entityType":"","observations":["Joined in 2024"]}
{"type":"entity","name":"Dana","entityType":"person","observations":[]}
{"type":"relation","from":"Dana","to":"Bob","relationType":"mentors"}
)"));
  ASSERT_OK_AND_ASSIGN(const ImportSummary changed, Import(ImportFormat::kServerMemory, path));
  EXPECT_EQ(changed.created, 1);    // Dana
  EXPECT_EQ(changed.updated, 1);    // Bob
  EXPECT_EQ(changed.unchanged, 2);  // Alice, Twin
  EXPECT_EQ(Versions("person", "Bob"), 2);
  EXPECT_EQ(Versions("person", "Alice Smith"), 1);
  EXPECT_EQ(Body("person", "Bob")["relations"].size(), 2u);

  // An observation removed is a change too.
  Write("memory.jsonl", R"({"type":"entity","name":"Twin","entityType":"","observations":[]})"
                        "\n");
  ASSERT_OK_AND_ASSIGN(const ImportSummary removed, Import(ImportFormat::kServerMemory, path));
  EXPECT_EQ(removed.updated, 1);
  EXPECT_EQ(Body("entity", "Twin")["observations"], json::array());
}

TEST_P(ForeignImportTest, ServerMemoryBadLinesAreReportedByNumber) {
  const std::string path =
      Write("memory.jsonl",
            R"({"type":"entity","name":"A","entityType":"t","observations":["one"]}
{"type":"entity","name":"B","entityType":"t","observations":["two"]

{"type":"note","name":"C"}
{"type":"entity","name":"A","entityType":"t","observations":["again"]}
{"type":"relation","from":"X","to":"Y","relationType":"r"}
{"type":"entity","name":"D","entityType":"t","observations":[3]}
{"type":"entity","name":"","entityType":"t","observations":[]}
{"type":"entity","name":"E","entityType":"t","observations":["fine"],"extra":1}
{"type":"entity","name":"F","entityType":"t","observations":["last"]}
)");
  ASSERT_OK_AND_ASSIGN(const ImportSummary s, Import(ImportFormat::kServerMemory, path));
  EXPECT_THAT(ReportedLines(), ElementsAre(2, 4, 5, 6, 7, 8, 9));
  EXPECT_EQ(reported_[0].file, path);
  EXPECT_THAT(reported_[2].message, HasSubstr("defined already, at line 1"));
  EXPECT_THAT(reported_[3].message, HasSubstr("names no entity of this file"));
  EXPECT_THAT(reported_[4].message, HasSubstr("observations: expected strings"));
  EXPECT_THAT(reported_[5].message, HasSubstr("key: must be a non-empty string"));
  EXPECT_THAT(reported_[6].message, HasSubstr("extra: unknown field"));
  EXPECT_EQ(s.failed, 7);
  EXPECT_EQ(s.created, 2);  // A (the first) and F.
  EXPECT_EQ(Body("t", "A")["observations"], json({"one"}));
}

// Bodies are prepared on a second thread a bounded distance ahead of the writer: a run of
// bad lines longer than that distance, between good ones, and more good lines than it, all
// go through; each memory is searchable and deduplicated against.
TEST_P(ForeignImportTest, ManyRecordsAndALongRunOfBadOnesAllGoThrough) {
  std::string text;
  const auto entity = [](int i) {
    return absl::StrCat(R"({"type":"entity","name":"e)", i,
                        R"(","entityType":"t","observations":["entity )", i,
                        R"( keeps the ledger of region )", i % 7, R"( marker)", i, R"(q"]})", "\n");
  };
  for (int i = 0; i < 3000; ++i) text += entity(i);
  for (int i = 0; i < 2500; ++i) text += "not json\n";
  for (int i = 3000; i < 6000; ++i) text += entity(i);
  ASSERT_OK_AND_ASSIGN(const ImportSummary s,
                       Import(ImportFormat::kServerMemory, Write("memory.jsonl", text)));
  EXPECT_EQ(s.failed, 2500);
  EXPECT_EQ(s.created, 6000);
  for (int i : {0, 2999, 3000, 5999}) {
    EXPECT_THAT(RecallKeys(absl::StrCat("marker", i, "q")), ElementsAre(absl::StrCat("e", i)));
  }
  ASSERT_OK_AND_ASSIGN(const Version last, store_->Get({.category = "t", .key = "e5999"}));
  ASSERT_OK_AND_ASSIGN(const WriteResult copy,
                       store_->Remember({.identity = {.category = "t", .key = "copy"},
                                         .body_json = last.body_json}));
  EXPECT_EQ(copy.action, WriteAction::kDeduped);
}

TEST_P(ForeignImportTest, StopWritesNothingOfTheFailingBatch) {
  const std::string path = Write("memory.jsonl",
                                 R"({"type":"entity","name":"A","entityType":"t","observations":[]}
not json
{"type":"entity","name":"B","entityType":"t","observations":[]}
)");
  ASSERT_OK_AND_ASSIGN(const ImportSummary s, Import(ImportFormat::kServerMemory, path, true));
  EXPECT_TRUE(s.stopped);
  EXPECT_THAT(ReportedLines(), ElementsAre(2));
  EXPECT_THAT(store_->Get({.category = "t", .key = "A"}), StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_P(ForeignImportTest, CsvQuotingFollowsRfc4180) {
  const std::string path =
      Write("memories.csv",
            "\xEF\xBB\xBF"
            "key,category,body,tags,valid_from,valid_to,type\r\n"
            "plain,notes,simple text,,,,\r\n"
            "comma,notes,\"one, two\",\"a, b\",2026-01-01,2026-02-01T00:00:00Z,fact\r\n"
            "quote,notes,\"she said \"\"hi\"\"\",,,,\n"
            "\n"
            "newline,notes,\"first line\nsecond line\",,1767225600000,,\n"
            "after,notes,last,,,,\n");
  ASSERT_OK_AND_ASSIGN(const ImportSummary s, Import(ImportFormat::kCsv, path));
  EXPECT_EQ(s.created, 5);
  EXPECT_TRUE(reported_.empty());
  ASSERT_OK_AND_ASSIGN(const Version comma, store_->Get({.category = "notes", .key = "comma"}));
  EXPECT_EQ(comma.body_json, R"("one, two")");
  EXPECT_THAT(comma.tags, ElementsAre("a", "b"));
  EXPECT_EQ(comma.type, "fact");
  EXPECT_EQ(comma.valid_from_unix_ms, 1767225600000);
  EXPECT_EQ(comma.valid_to_unix_ms, 1769904000000);
  EXPECT_EQ(Body("notes", "quote"), "she said \"hi\"");
  EXPECT_EQ(Body("notes", "newline"), "first line\nsecond line");
  ASSERT_OK_AND_ASSIGN(const Version plain, store_->Get({.category = "notes", .key = "plain"}));
  EXPECT_EQ(plain.type, "insight");
  EXPECT_TRUE(plain.tags.empty());

  ASSERT_OK_AND_ASSIGN(const ImportSummary again, Import(ImportFormat::kCsv, path));
  EXPECT_EQ(again.unchanged, 5);
}

TEST_P(ForeignImportTest, CsvBadRowsAreReportedByTheLineTheyStartOn) {
  const std::string path = Write("bad.csv",
                                 "category,key,body\n"
                                 "notes,multi,\"spans\ntwo lines\"\n"  // lines 2-3
                                 "notes,short\n"                       // 4: too few fields
                                 "notes,in\"side,text\n"               // 5: a bare quote
                                 "notes,after,\"closed\"x\n"           // 6: text after a quote
                                 "notes,ok,fine\n"                     // 7
                                 ",nocat,text\n"                       // 8: empty category
                                 "notes,open,\"never closed\n"         // 9
                                 "notes,lost,text\n");
  ASSERT_OK_AND_ASSIGN(const ImportSummary s, Import(ImportFormat::kCsv, path));
  EXPECT_THAT(ReportedLines(), ElementsAre(4, 5, 6, 8, 9));
  EXPECT_THAT(reported_[0].message, HasSubstr("expected 3 fields"));
  EXPECT_THAT(reported_[1].message, HasSubstr("a quote inside an unquoted field"));
  EXPECT_THAT(reported_[2].message, HasSubstr("after a field's closing quote"));
  EXPECT_THAT(reported_[3].message, HasSubstr("category: must be a non-empty string"));
  EXPECT_THAT(reported_[4].message, HasSubstr("not closed"));
  EXPECT_EQ(s.created, 2);
  EXPECT_EQ(Body("notes", "multi"), "spans\ntwo lines");
}

TEST_P(ForeignImportTest, CsvHeaderMustNameKnownColumns) {
  EXPECT_THAT(Import(ImportFormat::kCsv, Write("a.csv", "category,key\nx,y\n")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no \"body\" column")));
  EXPECT_THAT(Import(ImportFormat::kCsv, Write("b.csv", "category,key,body,colour\n")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"colour\" is not one")));
  EXPECT_THAT(
      Import(ImportFormat::kCsv, Write("c.csv", "")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("c.csv:1: the file is empty")));
  // With a default category, the column may be left out.
  ASSERT_OK_AND_ASSIGN(
      const ImportSummary s,
      Import(ImportFormat::kCsv, Write("d.csv", "key,body\nk,v\n"), false, "misc"));
  EXPECT_EQ(s.created, 1);
  EXPECT_EQ(Body("misc", "k"), "v");
}

TEST_P(ForeignImportTest, JsonlRecordsKeepTheirBodiesAndTimes) {
  const std::string path = Write(
      "memories.jsonl",
      R"({"category":"people","key":"ana","body":{"title":"staff engineer"},"tags":["team","x"],"valid_from":"2025-10-01"}
{"category":"people","key":"bo","body":"plain text","type":"fact","tags":"a,b"}
{"category":"people","key":"cy","body":1,"colour":"red"}
{"category":"people","key":"di","body":"x","valid_from":"2026-02-01","valid_to":"2026-01-01"}
{"category":"people","key":"ed","body":"x","valid_from":"yesterday"}
{"category":"people","key":"fi"}
["not","an","object"]
)");
  ASSERT_OK_AND_ASSIGN(const ImportSummary s, Import(ImportFormat::kJsonl, path));
  EXPECT_EQ(s.created, 2);
  EXPECT_THAT(ReportedLines(), ElementsAre(3, 4, 5, 6, 7));
  EXPECT_THAT(reported_[0].message, HasSubstr("colour: unknown field"));
  EXPECT_THAT(reported_[1].message, HasSubstr("valid_to: must be after valid_from"));
  EXPECT_THAT(reported_[2].message, HasSubstr("valid_from"));
  EXPECT_THAT(reported_[3].message, HasSubstr("body: missing"));
  ASSERT_OK_AND_ASSIGN(const Version ana, store_->Get({.category = "people", .key = "ana"}));
  EXPECT_EQ(json::parse(ana.body_json), json({{"title", "staff engineer"}}));
  EXPECT_EQ(ana.valid_from_unix_ms, 1759276800000);
  EXPECT_THAT(ana.tags, ElementsAre("team", "x"));
  EXPECT_EQ(Body("people", "bo"), "plain text");

  // A body past the write path's bound is a bad record, like any other.
  const std::string big =
      Write("big.jsonl", absl::StrCat(R"({"category":"people","key":"big","body":")",
                                      std::string(1 << 20, 'x'), "\"}\n"));
  ASSERT_OK_AND_ASSIGN(const ImportSummary too_big, Import(ImportFormat::kJsonl, big));
  EXPECT_EQ(too_big.failed, 1);
  ASSERT_EQ(reported_.size(), 1u);
  EXPECT_THAT(reported_[0].message, HasSubstr("body: at most 1048576 bytes"));

  ASSERT_OK_AND_ASSIGN(const ImportSummary again, Import(ImportFormat::kJsonl, path));
  EXPECT_EQ(again.unchanged, 2);
  EXPECT_EQ(again.created + again.updated, 0);
}

TEST_P(ForeignImportTest, MarkdownFolderIsOneMemoryPerNote) {
  Write("vault/people/ana.md",
        "---\n"
        "category: people\n"
        "type: fact\n"
        "tags:\n"
        "  - team\n"
        "  - \"with # space\"  # a comment\n"
        "valid_from: 2025-10-01\n"
        "---\n"
        "Ana is a staff engineer.\n");
  Write("vault/ideas/plain.md", "# A plain note\n\nNo front matter at all.\n");
  Write("vault/meeting.md",
        "---\n"
        "tags: [weekly, 'o''clock']  # inline comment\n"
        "aliases: [standup]\n"
        "---\n"
        "Notes of the meeting.\n");
  Write("vault/.obsidian/workspace.md", "not a note\n");
  Write("vault/readme.txt", "not a note either\n");
  const std::string vault = (dir_.path() / "vault").string();
  ASSERT_OK_AND_ASSIGN(const ImportSummary s, Import(ImportFormat::kMarkdown, vault));
  EXPECT_EQ(s.read, 3);
  EXPECT_EQ(s.created, 3);
  ASSERT_OK_AND_ASSIGN(const Version ana, store_->Get({.category = "people", .key = "people/ana"}));
  EXPECT_EQ(ana.body_json, R"("Ana is a staff engineer.\n")");
  EXPECT_EQ(ana.type, "fact");
  EXPECT_THAT(ana.tags, ElementsAre("team", "with # space"));
  EXPECT_EQ(ana.valid_from_unix_ms, 1759276800000);
  EXPECT_EQ(Body("notes", "ideas/plain"), "# A plain note\n\nNo front matter at all.\n");
  // Front matter strata does not read stays in the body.
  EXPECT_EQ(Body("notes", "meeting"), json({{"text", "Notes of the meeting.\n"},
                                            {"front_matter", {{"aliases", {"standup"}}}}}));
  ASSERT_OK_AND_ASSIGN(const Version meeting, store_->Get({.category = "notes", .key = "meeting"}));
  EXPECT_THAT(meeting.tags, ElementsAre("weekly", "o'clock"));

  ASSERT_OK_AND_ASSIGN(const ImportSummary again, Import(ImportFormat::kMarkdown, vault));
  EXPECT_EQ(again.unchanged, 3);
  Write("vault/meeting.md", "---\ntags: [weekly]\n---\nNotes of the meeting, amended.\n");
  ASSERT_OK_AND_ASSIGN(const ImportSummary changed, Import(ImportFormat::kMarkdown, vault));
  EXPECT_EQ(changed.updated, 1);
  EXPECT_EQ(changed.unchanged, 2);
  EXPECT_EQ(Versions("notes", "meeting"), 2);
}

TEST_P(ForeignImportTest, MarkdownFrontMatterErrorsNameFileAndLine) {
  const std::string nested =
      Write("v/nested.md", "---\ncategory: a\nauthor:\n  name: x\n---\nbody\n");
  const std::string block = Write("v/block.md", "---\nsummary: |\n  text\n---\nbody\n");
  const std::string unclosed = Write("v/unclosed.md", "---\ncategory: a\n");
  const std::string twice = Write("v/twice.md", "---\nkey: a\nkey: b\n---\n");
  const std::string quote = Write("v/quote.md", "---\ntitle: \"open\n---\n");
  const std::string utf8 = Write("v/utf8.md", "line one\nbad \xC3\x28 byte\n");
  Write("v/good.md", "---\nkey: chosen-key\ncategory: c\n---\nok\n");
  ASSERT_OK_AND_ASSIGN(const ImportSummary s,
                       Import(ImportFormat::kMarkdown, (dir_.path() / "v").string()));
  EXPECT_EQ(s.created, 1);
  EXPECT_EQ(s.failed, 6);
  std::vector<std::string> where;
  for (const Reported& r : reported_) {
    where.push_back(absl::StrCat(std::filesystem::path(r.file).filename().string(), ":", r.line));
  }
  EXPECT_THAT(where, ElementsAre("block.md:2", "nested.md:4", "quote.md:2", "twice.md:3",
                                 "unclosed.md:1", "utf8.md:2"));
  EXPECT_THAT(reported_[0].message, HasSubstr("block scalars"));
  EXPECT_THAT(reported_[1].message, HasSubstr("nested maps are not read"));
  EXPECT_THAT(reported_[3].message, HasSubstr("given twice"));
  EXPECT_THAT(reported_[4].message, HasSubstr("no closing ---"));
  EXPECT_EQ(Body("c", "chosen-key"), "ok\n");
}

TEST_P(ForeignImportTest, TheWorkspaceGoesOnEveryMemory) {
  const std::string path = Write("memory.jsonl", kGraph);
  ASSERT_OK_AND_ASSIGN(
      const ImportSummary s,
      store_->ImportForeign(
          {.format = ImportFormat::kServerMemory, .path = path, .workspace = "project-x"}, {}));
  EXPECT_EQ(s.created, 3);
  EXPECT_THAT(store_->Get({.category = "person", .key = "Bob"}),
              StatusIs(absl::StatusCode::kNotFound, _));
  ASSERT_OK_AND_ASSIGN(const Version bob,
                       store_->Get({.category = "person", .key = "Bob", .workspace = "project-x"}));
  EXPECT_EQ(bob.identity.workspace, "project-x");
}

TEST_P(ForeignImportTest, AnInputPastTheBoundIsRefusedWhole) {
  const std::string path = Write("big.jsonl", "0123456789");
  int64_t budget = 9;
  EXPECT_THAT(transfer::ReadWhole(path, budget),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reads at most 1 GiB")));
  budget = 10;
  EXPECT_THAT(transfer::ReadWhole(path, budget), ::strata::testing::IsOkAndHolds("0123456789"));
  EXPECT_EQ(budget, 0);
  EXPECT_THAT(Import(ImportFormat::kJsonl, dir_.File("absent.jsonl")),
              StatusIs(absl::StatusCode::kNotFound, _));
}

// Reads files only: on one engine.
class ImportFormatTest : public ForeignImportTest {};

TEST_P(ImportFormatTest, FormatsAreDetectedFromTheFile) {
  EXPECT_THAT(DetectImportFormat(Write("g.jsonl", kGraph)),
              ::strata::testing::IsOkAndHolds(ImportFormat::kServerMemory));
  EXPECT_THAT(DetectImportFormat(Write("e.jsonl", "\n{\"format\":\"strata-export\"}\n")),
              ::strata::testing::IsOkAndHolds(ImportFormat::kStrata));
  EXPECT_THAT(DetectImportFormat(Write("m.jsonl", R"({"category":"a","key":"b","body":1})")),
              ::strata::testing::IsOkAndHolds(ImportFormat::kJsonl));
  EXPECT_THAT(DetectImportFormat(Write("x.CSV", "category,key,body\n")),
              ::strata::testing::IsOkAndHolds(ImportFormat::kCsv));
  EXPECT_THAT(DetectImportFormat(Write("n.md", "text")),
              ::strata::testing::IsOkAndHolds(ImportFormat::kMarkdown));
  EXPECT_THAT(DetectImportFormat(dir_.path().string()),
              ::strata::testing::IsOkAndHolds(ImportFormat::kMarkdown));
  EXPECT_THAT(DetectImportFormat(Write("u.txt", "hello")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("strata, server-memory, markdown, csv, jsonl")));
  EXPECT_THAT(DetectImportFormat(dir_.File("missing")), StatusIs(absl::StatusCode::kNotFound, _));
}

INSTANTIATE_TEST_SUITE_P(Engines, ForeignImportTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Sqlite, ImportFormatTest, ::testing::Values(store::Dialect::kSqlite),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata
