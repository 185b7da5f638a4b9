// Export, import, backup and restore through the public API: an export read back
// into a fresh store exports the same bytes and answers every time-axis read the same;
// importing twice changes nothing; bad lines are reported by number and stop or are
// skipped; a backup taken while another connection writes holds every acknowledged write;
// restore refuses while the store is open. On a SQLite file and on a PostgreSQL database
// (temporal/engines.h); backup and restore, which copy a SQLite file, on SQLite only.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/engines.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "util/clock.h"

namespace strata {
namespace {

using ::strata::testing::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int64_t kDay = 24 * 60 * 60 * 1000;
constexpr int64_t kMinute = 60 * 1000;

constexpr int64_t Day(int64_t days) { return kNow + days * kDay; }

constexpr char kNotes[] =
    R"({"text": "The storage service keeps every segment on three replicas across two zones and compacts them nightly"})";

std::string Found(const absl::StatusOr<std::optional<Version>>& found) {
  if (!found.ok()) return "<error: " + found.status().ToString() + ">";
  if (!found->has_value()) return "<none>";
  return (*found)->body_json + " v" + std::to_string((*found)->version);
}

class TransferTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    source_path_ = NewStore("source.db");
    target_path_ = NewStore("target.db");
    ASSERT_FALSE(source_path_.empty() || target_path_.empty());
    ASSERT_OK_AND_ASSIGN(source_, Open(source_path_));
    ASSERT_OK_AND_ASSIGN(target_, Open(target_path_));
  }

  // Another new store of the test's engine: the file `file` in dir_, or a new database.
  std::string NewStore(const std::string& file) {
    return temporal::testing::NewStorePath(GetParam(), dir_, file);
  }

  absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& path) {
    return Store::Open({.path = path, .clock = &clock_, .embedder = "none"});
  }

  static Identity Id(std::string category, std::string key, std::string workspace = "") {
    return {
        .category = std::move(category), .key = std::move(key), .workspace = std::move(workspace)};
  }

  WriteResult Write(Store& store, const Identity& id, std::string body,
                    std::optional<int64_t> valid_from = std::nullopt,
                    std::optional<int64_t> valid_to = std::nullopt, bool dedup = false,
                    std::optional<Identity> supersedes = std::nullopt) {
    WriteRequest request{.identity = id, .body_json = std::move(body)};
    request.valid_from_unix_ms = valid_from;
    request.valid_to_unix_ms = valid_to;
    request.dedup = dedup;
    request.supersedes = std::move(supersedes);
    absl::StatusOr<WriteResult> result = store.Remember(request);
    EXPECT_OK(result);
    clock_.Advance(kMinute);
    return result.ok() ? *result : WriteResult{};
  }

  // Every kind of row an export carries: several versions of one key (tags, source,
  // importance), out-of-order valid times, a forget and a revival, an alias, a supersedes
  // link, and one key in two workspaces.
  void FillSource() {
    Store& s = *source_;
    Write(s, Id("people", "alice"), R"({"title": "senior engineer"})", Day(-300), Day(-60));
    Write(s, Id("people", "alice"), R"({"title": "staff engineer"})", Day(-60));
    WriteRequest tagged{.identity = Id("people", "alice"),
                        .body_json = R"({"title":"principal engineer", "since": 2026})",
                        .type = "fact",
                        .tags = {"career", "ünïcode"},
                        .source = "hr-sync",
                        .importance = 0.75};
    ASSERT_OK(s.Remember(tagged));
    clock_.Advance(kMinute);
    Write(s, Id("models", "current"), R"("opus-4-8")", Day(-5));
    Write(s, Id("models", "current"), R"("opus-4-7")", Day(-90), Day(-5));
    Write(s, Id("projects", "x"), R"({"status": "on-track\nline two \"quoted\""})");
    ASSERT_OK(s.Forget(Id("projects", "x"), "cancelled"));
    clock_.Advance(kMinute);
    Write(s, Id("projects", "x"), R"({"status": "revived"})");
    Write(s, Id("notes", "storage"), kNotes, std::nullopt, std::nullopt, /*dedup=*/true);
    const WriteResult merged =
        Write(s, Id("notes", "storage-copy"), kNotes, std::nullopt, std::nullopt, /*dedup=*/true);
    ASSERT_EQ(merged.action, WriteAction::kDeduped);
    Write(s, Id("prefs", "go"), R"({"text": "Maria prefers Go for new services"})", Day(-100));
    const WriteResult corrected =
        Write(s, Id("prefs", "rust"), R"({"text": "Maria prefers Rust for new services"})",
              Day(-10), std::nullopt, false, Id("prefs", "go"));
    ASSERT_TRUE(corrected.supersedes.has_value());
    Write(s, Id("team", "lead"), R"("bob")");
    Write(s, Id("team", "lead", "other-workspace"), R"("carol")");
  }

  static const std::vector<Identity>& Identities() {
    static const auto* const kIds = new std::vector<Identity>{
        Id("people", "alice"),  Id("models", "current"),     Id("projects", "x"),
        Id("notes", "storage"), Id("notes", "storage-copy"), Id("prefs", "go"),
        Id("prefs", "rust"),    Id("team", "lead"),          Id("team", "lead", "other-workspace"),
    };
    return *kIds;
  }

  static std::string Export(Store& store, const ExportOptions& options = {}) {
    std::ostringstream out;
    absl::StatusOr<ExportSummary> summary = store.Export(options, out);
    EXPECT_OK(summary);
    return out.str();
  }

  // Imports `text`, collecting the bad lines' numbers.
  absl::StatusOr<ImportSummary> Import(Store& store, const std::string& text, bool stop = true,
                                       std::vector<int64_t>* bad_lines = nullptr,
                                       std::vector<std::string>* messages = nullptr) {
    std::istringstream in(text);
    return store.Import(in, {.stop_on_error = stop,
                             .on_error = [&](const SourceLine& at, const absl::Status& error) {
                               if (bad_lines) bad_lines->push_back(at.line);
                               if (messages) messages->push_back(std::string(error.message()));
                             }});
  }

  strata::testing::TempDir dir_;
  std::string source_path_;
  std::string target_path_;
  FakeClock clock_{kNow};
  std::unique_ptr<Store> source_;
  std::unique_ptr<Store> target_;
};

TEST_P(TransferTest, RoundTripExportsTheSameBytes) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  const std::string first = Export(*source_);
  const std::vector<std::string> lines = absl::StrSplit(first, '\n', absl::SkipEmpty());
  // The header, then one line per identity (the alias lives on its memory's line).
  ASSERT_EQ(lines.size(), 1 + 8u);
  EXPECT_THAT(lines[0], HasSubstr(R"("format":"strata-export","format_version":1)"));
  EXPECT_EQ(Export(*source_), first);  // Deterministic.

  ASSERT_OK_AND_ASSIGN(const ImportSummary summary, Import(*target_, first));
  EXPECT_EQ(summary.read, 8);
  EXPECT_EQ(summary.created, 8);
  EXPECT_EQ(summary.failed, 0);
  EXPECT_EQ(Export(*target_), first);
}

// `--as-of T` exports the store as it was believed at T: imported into a fresh store, that
// store answers now what the source answered as of T, and exports the same file.
TEST_P(TransferTest, AsOfExportIsTheStoreAsBelievedThen) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  const int64_t end = clock_.NowUnixMs();
  int fresh_stores = 0;
  for (int64_t t = kNow - kMinute; t <= end; t += 2 * kMinute) {
    SCOPED_TRACE(absl::StrCat("as of +", (t - kNow) / kMinute, " min"));
    const std::string as_of = Export(*source_, {.as_of_unix_ms = t});
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> fresh,
                         Open(NewStore(absl::StrCat("as-of-", ++fresh_stores, ".db"))));
    ASSERT_OK_AND_ASSIGN(const ImportSummary summary, Import(*fresh, as_of));
    EXPECT_EQ(summary.failed, 0);
    EXPECT_EQ(Export(*fresh, {.as_of_unix_ms = t}), as_of);
    // Everything in it was believed by then: a plain export differs only in the header's
    // as_of, so the counts the as-of export worked out match the tables'.
    std::string plain = as_of;
    const std::string stamp = absl::StrCat(R"("as_of":)", t, "}");
    ASSERT_NE(plain.find(stamp), std::string::npos);
    plain.replace(plain.find(stamp), stamp.size(), R"("as_of":null})");
    EXPECT_EQ(Export(*fresh), plain);
    for (const Identity& id : Identities()) {
      if (id.key == "storage-copy") continue;  // An alias resolves by today's aliases.
      SCOPED_TRACE(id.category + "/" + id.key + "@" + id.workspace);
      absl::StatusOr<Version> now = fresh->Get(id);
      EXPECT_EQ(Found(source_->AsOf(id, t)),
                now.ok() ? Found(std::optional<Version>(*now)) : std::string("<none>"));
      for (int64_t tx = kNow - kMinute; tx <= t; tx += kMinute / 2) {
        EXPECT_EQ(Found(source_->AsOf(id, tx)), Found(fresh->AsOf(id, tx)));
        EXPECT_EQ(Found(source_->Bitemporal(id, tx, Day(-40))),
                  Found(fresh->Bitemporal(id, tx, Day(-40))));
      }
    }
  }
  // Before anything was written there is nothing; at the end, everything.
  EXPECT_THAT(Export(*source_, {.as_of_unix_ms = kNow - 1}), HasSubstr(R"("memories":0,)"));
  const auto body = [](const std::string& text) { return text.substr(text.find('\n')); };
  EXPECT_EQ(body(Export(*source_, {.as_of_unix_ms = end})), body(Export(*source_)));
}

TEST_P(TransferTest, TimeAxisReadsAnswerTheSameAfterImport) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  ASSERT_OK(Import(*target_, Export(*source_)));
  const int64_t end = clock_.NowUnixMs();
  for (const Identity& id : Identities()) {
    SCOPED_TRACE(id.category + "/" + id.key + "@" + id.workspace);
    for (int64_t tx = kNow - kMinute; tx <= end + kMinute; tx += kMinute / 2) {
      EXPECT_EQ(Found(source_->AsOf(id, tx)), Found(target_->AsOf(id, tx)));
      for (const int64_t v : {Day(-320), Day(-150), Day(-40), Day(-10), Day(-1), Day(0), kNow,
                              kNow + 5 * kMinute, end, Day(45)}) {
        EXPECT_EQ(Found(source_->Bitemporal(id, tx, v)), Found(target_->Bitemporal(id, tx, v)));
      }
    }
    for (const int64_t v : {Day(-320), Day(-150), Day(-40), Day(-10), Day(-1), end, Day(45)}) {
      EXPECT_EQ(Found(source_->ValidAt(id, v)), Found(target_->ValidAt(id, v)));
    }
  }
  // Spot checks that the reads above are not all "<none>".
  EXPECT_EQ(Found(target_->ValidAt(Id("people", "alice"), Day(-150))),
            R"({"title": "senior engineer"} v1)");
  EXPECT_EQ(Found(target_->ValidAt(Id("models", "current"), Day(-40))), R"("opus-4-7" v2)");
  // History, forgets and the correction's links.
  ASSERT_OK_AND_ASSIGN(const HistoryPage x, target_->History(Id("projects", "x"), 10, 0));
  EXPECT_EQ(x.total, 2);
  EXPECT_EQ(x.retracted_at_unix_ms.size(), 1u);
  ASSERT_OK_AND_ASSIGN(const HistoryPage go, target_->History(Id("prefs", "go"), 10, 0));
  ASSERT_EQ(go.successors.size(), 1u);
  EXPECT_EQ(go.successors[0].identity.key, "rust");
  // The alias still finds its memory; ids are kept in an empty store.
  ASSERT_OK_AND_ASSIGN(const Version via_alias, target_->Get(Id("notes", "storage-copy")));
  EXPECT_EQ(via_alias.identity.key, "storage");
  ASSERT_OK_AND_ASSIGN(const Version alice, source_->Get(Id("people", "alice")));
  ASSERT_OK_AND_ASSIGN(const Version alice_by_id, target_->GetById(alice.memory_id));
  EXPECT_EQ(alice_by_id.identity.key, "alice");
}

TEST_P(TransferTest, RecallAndDedupWorkAfterImport) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  ASSERT_OK(Import(*target_, Export(*source_)));
  for (const char* query : {"staff engineer", "replicas zones", "prefers services", "revived"}) {
    RecallRequest request{.query = query, .mode = RecallMode::kFts5};
    ASSERT_OK_AND_ASSIGN(const RecallResult before, source_->Recall(request));
    ASSERT_OK_AND_ASSIGN(const RecallResult after, target_->Recall(request));
    ASSERT_FALSE(after.items.empty()) << query;
    ASSERT_EQ(before.items.size(), after.items.size()) << query;
    for (size_t i = 0; i < before.items.size(); ++i) {
      EXPECT_EQ(before.items[i].version.identity.key, after.items[i].version.identity.key);
      EXPECT_EQ(before.items[i].version.version, after.items[i].version.version);
    }
  }
  // The imported memory's band keys are there: a copy under a new key merges into it.
  const WriteResult copy = Write(*target_, Id("notes", "storage-again"), kNotes, std::nullopt,
                                 std::nullopt, /*dedup=*/true);
  EXPECT_EQ(copy.action, WriteAction::kDeduped);
  EXPECT_EQ(copy.version.identity.key, "storage");
  // The superseded memory has none: a copy of it is not merged away.
  const WriteResult go_copy =
      Write(*target_, Id("prefs", "go-again"), R"({"text": "Maria prefers Go for new services"})",
            std::nullopt, std::nullopt, /*dedup=*/true);
  EXPECT_EQ(go_copy.action, WriteAction::kCreated);
}

// Each batch's keyword index rows and band keys are written with its other rows, at its
// end: an import stopped in a later batch leaves the earlier ones searchable and
// deduplicated against, and the stopped batch wrote nothing. An alias in mid-batch (which
// once flushed the index's pending rows) changes nothing of that.
TEST_P(TransferTest, EachCommittedBatchHasItsDerivedState) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  const std::string exported = Export(*source_);
  std::vector<std::string> lines = absl::StrSplit(exported, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 9u);
  // Batches of two: [alice, models/current], [projects/x, notes/storage (+ alias)],
  // [prefs/go, prefs/rust], [a bad line, team/lead]: the import stops in the fourth.
  std::string text = lines[0] + "\n";
  for (size_t i = 1; i <= 6; ++i) text += lines[i] + "\n";
  text += "not json\n";
  for (size_t i = 7; i < lines.size(); ++i) text += lines[i] + "\n";
  std::istringstream in(text);
  ASSERT_OK_AND_ASSIGN(const ImportSummary stopped,
                       target_->Import(in, {.stop_on_error = true, .batch_lines = 2}));
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(stopped.created, 6);

  for (const char* query : {"staff engineer", "replicas zones", "prefers services", "revived"}) {
    ASSERT_OK_AND_ASSIGN(const RecallResult found,
                         target_->Recall({.query = query, .mode = RecallMode::kFts5}));
    EXPECT_FALSE(found.items.empty()) << query;
  }
  ASSERT_OK_AND_ASSIGN(const RecallResult bob,
                       target_->Recall({.query = "bob", .mode = RecallMode::kFts5}));
  EXPECT_TRUE(bob.items.empty());
  const WriteResult copy = Write(*target_, Id("notes", "storage-again"), kNotes, std::nullopt,
                                 std::nullopt, /*dedup=*/true);
  EXPECT_EQ(copy.action, WriteAction::kDeduped);
  EXPECT_EQ(copy.version.identity.key, "storage");
  ASSERT_OK(target_->Forget(Id("notes", "storage-again"), ""));  // The alias goes again.

  // The rest, in batches of three: the six are unchanged, and the store exports the file.
  std::istringstream rest(exported);
  ASSERT_OK_AND_ASSIGN(const ImportSummary again, target_->Import(rest, {.batch_lines = 3}));
  EXPECT_EQ(again.created, 2);
  EXPECT_EQ(again.unchanged, 6);
  EXPECT_EQ(Export(*target_), exported);
  ASSERT_OK_AND_ASSIGN(const RecallResult lead,
                       target_->Recall({.query = "bob", .mode = RecallMode::kFts5}));
  EXPECT_EQ(lead.items.size(), 1u);
}

TEST_P(TransferTest, ImportingAgainChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  const std::string exported = Export(*source_);
  ASSERT_OK(Import(*target_, exported));
  ASSERT_OK_AND_ASSIGN(const ImportSummary again, Import(*target_, exported));
  EXPECT_EQ(again.read, 8);
  EXPECT_EQ(again.unchanged, 8);
  EXPECT_EQ(again.created + again.updated + again.failed, 0);
  EXPECT_EQ(Export(*target_), exported);
  // Into the source itself too.
  ASSERT_OK_AND_ASSIGN(const ImportSummary into_source, Import(*source_, exported));
  EXPECT_EQ(into_source.unchanged, 8);
  EXPECT_EQ(Export(*source_), exported);
}

TEST_P(TransferTest, AMemoryWithAnotherHistoryFailsItsLineAndKeepsBoth) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  Write(*target_, Id("people", "alice"), R"({"title": "intern"})");
  const std::string before = Export(*target_);
  std::vector<int64_t> bad;
  std::vector<std::string> messages;
  ASSERT_OK_AND_ASSIGN(const ImportSummary skipped,
                       Import(*target_, Export(*source_), /*stop=*/false, &bad, &messages));
  EXPECT_THAT(bad, ElementsAre(2));  // people/alice is memory 1: line 2.
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("another history"));
  EXPECT_EQ(skipped.failed, 1);
  EXPECT_EQ(skipped.created, 7);
  ASSERT_OK_AND_ASSIGN(const Version alice, target_->Get(Id("people", "alice")));
  EXPECT_EQ(alice.body_json, R"({"title": "intern"})");
  // The file's alice got a new id: the target's memory 1 is the intern.
  EXPECT_NE(Export(*target_), before);
}

TEST_P(TransferTest, BadLinesAreReportedByNumber) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  std::vector<std::string> lines = absl::StrSplit(Export(*source_), '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 6u);
  lines[2] = lines[2].substr(0, lines[2].size() / 2);  // Line 3: truncated.
  const size_t from = lines[3].find("\"valid_from\":");
  ASSERT_NE(from, std::string::npos);
  // Line 4: "valid_from":"1772...": a string now.
  const size_t comma = lines[3].find(',', from);
  lines[3] =
      absl::StrCat(lines[3].substr(0, from + 13), "\"",
                   lines[3].substr(from + 13, comma - from - 13), "\"", lines[3].substr(comma));
  // Line 5: invalid UTF-8 in the key.
  const size_t quote = lines[4].find("\"key\":\"") + 7;
  lines[4] = absl::StrCat(lines[4].substr(0, quote), "\xff\xfe", lines[4].substr(quote));
  std::string text;
  for (const std::string& line : lines) text += line + "\n";

  std::vector<int64_t> bad;
  std::vector<std::string> messages;
  ASSERT_OK_AND_ASSIGN(const ImportSummary skipped,
                       Import(*target_, text, /*stop=*/false, &bad, &messages));
  EXPECT_THAT(bad, ElementsAre(3, 4, 5));
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_THAT(messages[0], HasSubstr("not JSON"));
  EXPECT_THAT(messages[1], HasSubstr("versions[0].valid_from: expected an integer, got string"));
  EXPECT_THAT(messages[2], HasSubstr("UTF-8"));
  EXPECT_EQ(skipped.failed, 3);
  EXPECT_EQ(skipped.created, 5);
  ASSERT_OK_AND_ASSIGN(const Stats skipped_stats, target_->GetStats());
  EXPECT_EQ(skipped_stats.total_memories, 5);

  // Stopping: the first bad line ends it, and its batch (here, everything) is not written.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Store> fresh, Open(NewStore("fresh.db")));
  bad.clear();
  ASSERT_OK_AND_ASSIGN(const ImportSummary stopped, Import(*fresh, text, /*stop=*/true, &bad));
  EXPECT_THAT(bad, ElementsAre(3));
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(stopped.created, 0);
  ASSERT_OK_AND_ASSIGN(const Stats stopped_stats, fresh->GetStats());
  EXPECT_EQ(stopped_stats.total_memories, 0);
}

TEST_P(TransferTest, ABrokenTimeRuleIsABadLine) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  std::vector<std::string> lines =
      absl::StrSplit(Export(*source_, {.category = "people"}), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  // alice's second version recorded at her first's instant.
  const size_t first = lines[1].find("\"recorded_at\":") + 14;
  const std::string stamp = lines[1].substr(first, 13);
  const size_t second = lines[1].find("\"recorded_at\":", first) + 14;
  lines[1].replace(second, 13, stamp);
  std::vector<std::string> messages;
  EXPECT_THAT(Import(*target_, lines[0] + "\n" + lines[1] + "\n", true, nullptr, &messages),
              ::strata::testing::IsOk());
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("versions[1].recorded_at"));
  // A last event before the line's latest version would let the next write go back in time.
  std::string early = Export(*source_, {.category = "models"});
  const size_t at = early.find("\"last_event_at\":") + 16;
  early.replace(at, 13, "1000000000000");
  messages.clear();
  EXPECT_THAT(Import(*target_, early, true, nullptr, &messages), ::strata::testing::IsOk());
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("last_event_at: must not be before"));
}

TEST_P(TransferTest, KeysOfEveryUtf8LengthRoundTrip) {
  Write(*source_, Id("people", "ascii-then-\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80"), R"("ok")");
  const std::string exported = Export(*source_);
  ASSERT_OK(Import(*target_, exported));
  EXPECT_EQ(Export(*target_), exported);
}

TEST_P(TransferTest, AFieldPastTheWritePathsBoundIsABadLine) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  std::string text = Export(*source_, {.category = "people"});
  const size_t at = text.find(R"("key":"alice")");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, absl::StrCat(R"("key":")", std::string(2000, 'k'), "\""));
  std::vector<int64_t> bad;
  std::vector<std::string> messages;
  ASSERT_OK_AND_ASSIGN(const ImportSummary summary,
                       Import(*target_, text, /*stop=*/false, &bad, &messages));
  EXPECT_THAT(bad, ElementsAre(2));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("key: at most 1024 bytes, got 2000"));
  EXPECT_EQ(summary.created, 0);
}

TEST_P(TransferTest, AForeignOrNewerHeaderIsRefused) {
  EXPECT_THAT(Import(*target_, ""), StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(Import(*target_, "{\"type\":\"entity\",\"name\":\"x\"}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1")));
  EXPECT_THAT(Import(*target_, R"({"format":"strata-export","format_version":2})"
                               "\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("format_version")));
}

TEST_P(TransferTest, AScopedExportHoldsOnlyItsScopeAndItsLinksComeBackTogether) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  const std::string other = Export(*source_, {.workspace = "other-workspace"});
  EXPECT_EQ(std::vector<std::string>(absl::StrSplit(other, '\n', absl::SkipEmpty())).size(), 2u);
  EXPECT_THAT(other, HasSubstr("carol"));
  EXPECT_THAT(other, ::testing::Not(HasSubstr("bob")));
  // prefs/go alone: its link to prefs/rust waits for rust's line, which names it too.
  ASSERT_OK(Import(*target_, Export(*source_, {.category = "people"})));
  std::string go = Export(*source_, {.category = "prefs"});
  ASSERT_OK_AND_ASSIGN(const ImportSummary prefs, Import(*target_, go));
  EXPECT_EQ(prefs.created, 2);
  ASSERT_OK_AND_ASSIGN(const HistoryPage rust, target_->History(Id("prefs", "rust"), 10, 0));
  ASSERT_EQ(rust.predecessors.size(), 1u);
  EXPECT_EQ(rust.predecessors[0].identity.key, "go");
}

// Backup and restore copy a SQLite file (PostgreSQL's are pg_dump and pg_restore).
class TransferFileTest : public TransferTest {};

// A SQLite file may hold text that is not UTF-8, written by another program (the API refuses
// it, as PostgreSQL does).
TEST_P(TransferFileTest, TextThatIsNotUtf8FailsTheExportNamingTheMemory) {
  // A stray byte after eight ASCII ones, after a key of every UTF-8 length.
  Write(*source_, Id("people", "ascii-then-\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80"), R"("ok")");
  Write(*source_, Id("people", "bad"), R"("bad")");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> file, store::Db::Open(source_path_, {}));
  const auto set_key = [&file](std::string_view from, std::string_view to) {
    ASSERT_OK_AND_ASSIGN(store::Stmt s, file->Prepare("UPDATE memories SET key = ?2 WHERE key = ?1"));
    s.Bind(1, from).Bind(2, to);
    ASSERT_OK(s.Run());
  };
  set_key("bad", "abcdefghij\xff");
  std::ostringstream out;
  EXPECT_THAT(source_->Export({}, out),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("memory 2: key is not valid UTF-8")));
  set_key("abcdefghij\xff", "overlong-\xc0\xaf");
  EXPECT_THAT(source_->Export({.category = "people"}, out),
              StatusIs(absl::StatusCode::kDataLoss, _));
}

TEST_P(TransferFileTest, BackupDuringWritesHoldsEveryAcknowledgedWrite) {
  std::atomic<int64_t> acknowledged{0};
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    absl::StatusOr<std::unique_ptr<Store>> store = Open(source_path_);
    ASSERT_OK(store);
    for (int64_t i = 0; !stop.load() || i < 200; ++i) {
      WriteRequest request{.identity = Id("load", absl::StrCat("k", i)),
                           .body_json = absl::StrCat("\"value ", i, "\"")};
      request.dedup = false;
      if (!(*store)->Remember(request).ok()) break;
      acknowledged.store(i + 1);
    }
  });
  while (acknowledged.load() < 100) std::this_thread::yield();
  const int64_t before = acknowledged.load();
  const std::string backup = dir_.File("backup.db");
  ASSERT_OK(source_->Backup(backup, false));
  stop.store(true);
  writer.join();
  EXPECT_THAT(source_->Backup(backup, false), StatusIs(absl::StatusCode::kAlreadyExists, _));

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> db, store::Db::Open(backup, {}));
  ASSERT_OK_AND_ASSIGN(store::Stmt check, db->Prepare("PRAGMA integrity_check"));
  ASSERT_THAT(check.Step(), ::strata::testing::IsOkAndHolds(true));
  EXPECT_EQ(check.Text(0), "ok");
  ASSERT_OK_AND_ASSIGN(store::Stmt count,
                       db->Prepare("SELECT count(*), max(CAST(substr(key, 2) AS INTEGER)) FROM "
                                   "memories WHERE category = 'load'"));
  ASSERT_THAT(count.Step(), ::strata::testing::IsOkAndHolds(true));
  // Every write acknowledged before the backup began, and they are the first ones.
  EXPECT_GE(count.Int(0), before);
  EXPECT_EQ(count.Int(1) + 1, count.Int(0));
}

TEST_P(TransferFileTest, RestoreRefusesAnOpenStoreAndReplacesAClosedOne) {
  ASSERT_NO_FATAL_FAILURE(FillSource());
  const std::string backup = dir_.File("backup.db");
  ASSERT_OK(source_->Backup(backup, false));
  const std::string exported = Export(*source_);
  Write(*target_, Id("people", "alice"), R"({"title": "intern"})");
  EXPECT_THAT(RestoreBackup(backup, target_path_),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("open")));
  target_.reset();
  // A saved vector index of the old database (stands for one) is removed with it.
  { std::ofstream(target_path_ + ".hnsw") << "index of the old database"; }
  ASSERT_OK(RestoreBackup(backup, target_path_));
  EXPECT_FALSE(std::filesystem::exists(target_path_ + ".hnsw"));
  ASSERT_OK_AND_ASSIGN(target_, Open(target_path_));
  EXPECT_EQ(Export(*target_), exported);
  // A file that is not a database is no backup.
  const std::string junk = dir_.File("junk.db");
  { std::ofstream(junk) << "not a database at all, just some text that is long enough"; }
  target_.reset();
  EXPECT_THAT(RestoreBackup(junk, target_path_), StatusIs(absl::StatusCode::kDataLoss, _));
}

INSTANTIATE_TEST_SUITE_P(Engines, TransferTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);
INSTANTIATE_TEST_SUITE_P(Sqlite, TransferFileTest, ::testing::Values(store::Dialect::kSqlite),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata
