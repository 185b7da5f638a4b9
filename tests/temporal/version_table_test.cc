// temporal::VersionTable and SupersessionTable on both engines: identities, versions and their
// time axes, retractions, restored rows, counts, scans and purges.

#include "temporal/version_table.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/db.h"
#include "temporal/engines.h"
#include "temporal/supersession_table.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::temporal {
namespace {

using ::strata::testing::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::Pair;
using ::testing::SizeIs;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z

class VersionTableTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, testing::OpenMigrated(GetParam(), dir_));
    table_ = std::make_unique<VersionTable>(db_.get());
  }

  // The identity's row, created at `at` when absent.
  IdentityRow Identity(const std::string& key, int64_t at, const std::string& category = "facts",
                       const std::string& workspace = "") {
    const strata::Identity identity{.category = category, .key = key, .workspace = workspace};
    absl::StatusOr<std::optional<IdentityRow>> found = table_->FindIdentity(identity);
    EXPECT_OK(found);
    if (found.ok() && found->has_value()) return **found;
    absl::StatusOr<int64_t> id = table_->InsertIdentity(identity, at);
    EXPECT_OK(id);
    found = table_->FindIdentityById(id.value_or(0));
    EXPECT_OK(found);
    return found.ok() && found->has_value() ? **found : IdentityRow{};
  }

  // Appends a version of `key` recorded at `at`; returns its row as stored.
  VersionRow Append(const std::string& key, int64_t at, const std::string& body = R"("b")",
                    std::vector<std::string> tags = {}) {
    const IdentityRow identity = Identity(key, at);
    VersionRow row{.body_hash = 0x8000000000000001ULL};  // Above INT64_MAX: stored signed.
    row.version.identity = identity.identity;
    row.version.body_json = body;
    row.version.type = "fact";
    row.version.tags = std::move(tags);
    row.version.source = "test";
    row.version.importance = 0.1 + 0.2;  // Not exact in decimal: must round-trip.
    row.version.valid_from_unix_ms = at - 5;
    row.version.valid_to_unix_ms = at + 1000;
    row.version.recorded_at_unix_ms = at;
    EXPECT_OK(table_->AppendVersion(identity, row));
    return row;
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<store::Db> db_;
  std::unique_ptr<VersionTable> table_;
};

TEST_P(VersionTableTest, AppendedVersionsReadBackWithBothTimeAxes) {
  const VersionRow first = Append("k", kNow, R"({"a":1})", {"x", "y"});
  const VersionRow second = Append("k", kNow + 10);
  ASSERT_OK_AND_ASSIGN(const std::vector<VersionRow> rows,
                       table_->LoadVersions(first.version.memory_id));
  ASSERT_THAT(rows, SizeIs(2));
  EXPECT_EQ(rows[0].version_id, first.version_id);
  EXPECT_EQ(rows[0].version.version, 1);
  EXPECT_EQ(rows[0].version.body_json, R"({"a":1})");
  EXPECT_EQ(rows[0].body_hash, 0x8000000000000001ULL);
  EXPECT_THAT(rows[0].version.tags, ElementsAre("x", "y"));
  EXPECT_EQ(rows[0].version.source, "test");
  EXPECT_EQ(rows[0].version.importance, 0.1 + 0.2);
  EXPECT_EQ(rows[0].version.valid_from_unix_ms, kNow - 5);
  EXPECT_EQ(rows[0].version.valid_to_unix_ms, kNow + 1000);
  EXPECT_EQ(rows[0].version.recorded_at_unix_ms, kNow);
  // Superseded when the next version was recorded.
  EXPECT_EQ(rows[0].version.superseded_at_unix_ms, kNow + 10);
  EXPECT_EQ(rows[1].version_id, second.version_id);
  EXPECT_EQ(rows[1].version.version, 2);
  EXPECT_EQ(rows[1].version.superseded_at_unix_ms, std::nullopt);
  ASSERT_OK_AND_ASSIGN(const std::optional<IdentityRow> identity,
                       table_->FindIdentityById(first.version.memory_id));
  ASSERT_TRUE(identity.has_value());
  EXPECT_EQ(identity->current_version_id, second.version_id);
  EXPECT_EQ(identity->version_count, 2);
  EXPECT_EQ(identity->last_event_at_unix_ms, kNow + 10);
  ASSERT_OK_AND_ASSIGN(const VersionRow loaded, table_->LoadVersion(second.version_id));
  EXPECT_EQ(loaded.version.identity.key, "k");
  EXPECT_THAT(table_->LoadVersion(second.version_id + 100),
              strata::testing::StatusIs(absl::StatusCode::kNotFound, ::testing::_));
}

TEST_P(VersionTableTest, RetractEndsTheCurrentVersionAndRecordsTheEvent) {
  const VersionRow row = Append("k", kNow);
  const IdentityRow identity = Identity("k", kNow);
  ASSERT_OK(table_->Retract(identity, kNow + 7, "wrong"));
  ASSERT_OK_AND_ASSIGN(const Timeline timeline, table_->LoadTimeline(row.version.memory_id));
  ASSERT_THAT(timeline.rows, SizeIs(1));
  EXPECT_EQ(timeline.times[0].superseded_at_unix_ms, kNow + 7);
  EXPECT_THAT(timeline.retractions, ElementsAre(kNow + 7));
  EXPECT_THAT(table_->LoadRetractionRows(row.version.memory_id),
              IsOkAndHolds(ElementsAre(RetractionRow{.at_unix_ms = kNow + 7, .reason = "wrong"})));
  ASSERT_OK_AND_ASSIGN(const std::optional<IdentityRow> after,
                       table_->FindIdentityById(row.version.memory_id));
  EXPECT_EQ(after->current_version_id, std::nullopt);
  EXPECT_EQ(after->last_event_at_unix_ms, kNow + 7);
  EXPECT_THAT(table_->AnyCurrent(), IsOkAndHolds(false));
}

TEST_P(VersionTableTest, RestoredIdentityTakesAFreeIdAboveEveryPurgedOne) {
  const strata::Identity a{.category = "facts", .key = "a"};
  ASSERT_OK_AND_ASSIGN(const int64_t at_50, table_->InsertIdentityAt(a, 50, kNow, kNow));
  EXPECT_EQ(at_50, 50);
  // Taken: a new id instead, above it.
  ASSERT_OK_AND_ASSIGN(const int64_t again,
                       table_->InsertIdentityAt({.category = "facts", .key = "b"}, 50, kNow, kNow));
  EXPECT_GT(again, 50);
  // New identities keep going up past the restored ids.
  ASSERT_OK_AND_ASSIGN(const int64_t next,
                       table_->InsertIdentity({.category = "c", .key = "c"}, kNow));
  EXPECT_GT(next, again);
  // A purged id is never handed out again, even when asked for.
  ASSERT_OK(table_->DeleteIdentity(next));
  ASSERT_OK_AND_ASSIGN(const int64_t purged,
                       table_->InsertIdentityAt({.category = "d", .key = "d"}, next, kNow, kNow));
  EXPECT_GT(purged, next);
  ASSERT_OK_AND_ASSIGN(const int64_t fresh,
                       table_->InsertIdentity({.category = "e", .key = "e"}, kNow));
  EXPECT_GT(fresh, purged);
}

TEST_P(VersionTableTest, AnIdTakenByARolledBackRestoreIsFreeAgain) {
  // An import killed mid-way: its transaction took ids and rolled back. No memory has them
  // and none had them, so importing again keeps them (PostgreSQL's sequence moved on).
  {
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db_));
    EXPECT_THAT(table_->InsertIdentityAt({.category = "facts", .key = "a"}, 1, kNow, kNow),
                IsOkAndHolds(1));
    EXPECT_THAT(table_->InsertIdentityAt({.category = "facts", .key = "b"}, 2, kNow, kNow),
                IsOkAndHolds(2));
  }
  EXPECT_THAT(table_->InsertIdentityAt({.category = "facts", .key = "a"}, 1, kNow, kNow),
              IsOkAndHolds(1));
  EXPECT_THAT(table_->InsertIdentityAt({.category = "facts", .key = "b"}, 2, kNow, kNow),
              IsOkAndHolds(2));
  // And a new identity still gets an id no memory has.
  EXPECT_THAT(table_->InsertIdentity({.category = "facts", .key = "c"}, kNow),
              IsOkAndHolds(3));
}

TEST_P(VersionTableTest, RestoredRowsKeepTheirTimesAndState) {
  const strata::Identity identity{.category = "facts", .key = "k"};
  ASSERT_OK_AND_ASSIGN(const int64_t id, table_->InsertIdentityAt(identity, 7, kNow, kNow + 20));
  VersionRow row{.body_hash = 3};
  row.version = {
      .memory_id = id, .identity = identity, .version = 4, .body_json = "1", .type = "fact"};
  row.version.valid_from_unix_ms = kNow;
  row.version.recorded_at_unix_ms = kNow + 1;
  row.version.superseded_at_unix_ms = kNow + 20;
  ASSERT_OK(table_->InsertVersionAsIs(row));
  ASSERT_OK(table_->InsertRetraction(id, {.at_unix_ms = kNow + 20}));
  ASSERT_OK(table_->SetIdentityState(id, std::nullopt, 4, kNow + 20));
  ASSERT_OK_AND_ASSIGN(const VersionRow loaded, table_->LoadVersion(row.version_id));
  EXPECT_EQ(loaded.version.version, 4);
  EXPECT_EQ(loaded.version.superseded_at_unix_ms, kNow + 20);
  EXPECT_EQ(loaded.version.source, std::nullopt);
  EXPECT_EQ(loaded.version.importance, std::nullopt);
  EXPECT_EQ(loaded.version.valid_to_unix_ms, std::nullopt);
  EXPECT_THAT(table_->LoadRetractionRows(id),
              IsOkAndHolds(ElementsAre(RetractionRow{.at_unix_ms = kNow + 20})));
  ASSERT_OK_AND_ASSIGN(const std::optional<IdentityRow> state, table_->FindIdentityById(id));
  EXPECT_EQ(state->version_count, 4);
  EXPECT_EQ(state->current_version_id, std::nullopt);
}

TEST_P(VersionTableTest, CountsAndScansCoverTheScope) {
  Append("a", kNow);
  Append("a", kNow + 1);
  const VersionRow b = Append("b", kNow);
  const IdentityRow other = Identity("c", kNow, "notes", "ws");
  ASSERT_OK(table_->Retract(Identity("b", kNow), kNow + 2, ""));
  EXPECT_THAT(table_->Count({}), IsOkAndHolds(::testing::FieldsAre(3, 3, 1)));
  EXPECT_THAT(table_->Count({.category = "facts"}), IsOkAndHolds(::testing::FieldsAre(2, 3, 1)));
  EXPECT_THAT(table_->Count({.workspace = "ws"}), IsOkAndHolds(::testing::FieldsAre(1, 0, 0)));
  ASSERT_OK_AND_ASSIGN(const StoreCounts all, table_->CountAll());
  EXPECT_EQ(all.memories, 3);
  EXPECT_EQ(all.active, 1);
  EXPECT_EQ(all.versions, 3);
  EXPECT_THAT(all.active_by_category, ElementsAre(Pair("facts", 1)));

  // In pages of every size: a page boundary anywhere, a last page full or not.
  for (const int64_t page : {IdentityScan::kPageIdentities, int64_t{1}, int64_t{2}}) {
    SCOPED_TRACE(page);
    ASSERT_OK_AND_ASSIGN(IdentityScan scan,
                         IdentityScan::Start(*db_, {.category = "facts"}, page));
    std::vector<std::pair<std::string, size_t>> seen;
    ScannedIdentity identity;
    while (true) {
      ASSERT_OK_AND_ASSIGN(const bool more, scan.Next(identity));
      if (!more) break;
      seen.emplace_back(identity.row.identity.key, identity.versions.size());
    }
    EXPECT_THAT(seen, ElementsAre(Pair("a", 2), Pair("b", 1)));
    ASSERT_OK_AND_ASSIGN(IdentityScan all, IdentityScan::Start(*db_, {}, page));
    int scanned = 0;
    while (true) {
      ASSERT_OK_AND_ASSIGN(const bool more, all.Next(identity));
      if (!more) break;
      ++scanned;
    }
    EXPECT_EQ(scanned, 3);
  }

  // Purging an identity takes its versions and retractions with it.
  ASSERT_OK(table_->DeleteIdentity(b.version.memory_id));
  ASSERT_OK(table_->DeleteIdentity(other.memory_id));
  EXPECT_THAT(table_->Count({}), IsOkAndHolds(::testing::FieldsAre(1, 2, 0)));
  EXPECT_THAT(table_->LoadVersions(b.version.memory_id), IsOkAndHolds(IsEmpty()));
}

TEST_P(VersionTableTest, SupersessionsReadFromEitherEnd) {
  const VersionRow old_fact = Append("old", kNow);
  const VersionRow new_fact = Append("new", kNow + 5);
  const VersionRow untouched = Append("other", kNow);
  SupersessionTable supersessions(db_.get());
  const SupersessionRow row{.predecessor_id = old_fact.version.memory_id,
                            .successor_id = new_fact.version.memory_id,
                            .at_unix_ms = kNow + 5,
                            .valid_from_unix_ms = kNow + 3};
  ASSERT_OK(supersessions.Insert(row));
  ASSERT_OK_AND_ASSIGN(const std::vector<SupersessionRow> successors,
                       supersessions.Successors(old_fact.version.memory_id));
  ASSERT_THAT(successors, SizeIs(1));
  EXPECT_EQ(successors[0].successor_id, new_fact.version.memory_id);
  EXPECT_EQ(successors[0].valid_from_unix_ms, kNow + 3);
  EXPECT_THAT(supersessions.Predecessors(new_fact.version.memory_id), IsOkAndHolds(SizeIs(1)));
  EXPECT_THAT(supersessions.Predecessors(old_fact.version.memory_id), IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(supersessions.CountTouching({}), IsOkAndHolds(1));
  EXPECT_THAT(supersessions.CountTouching({.category = "none"}), IsOkAndHolds(0));
  // The superseded memory is no merge target; the others are.
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> targets, table_->CurrentVersionsNotSuperseded());
  std::sort(targets.begin(), targets.end());
  EXPECT_THAT(targets, ElementsAre(new_fact.version_id, untouched.version_id));
}

TEST_P(VersionTableTest, WriteTransactionsCommitOrRollBack) {
  {
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db_));
    Append("kept", kNow);
    ASSERT_OK(txn.Commit());
  }
  {
    ASSERT_OK_AND_ASSIGN(store::Transaction txn, store::Transaction::Begin(*db_));
    Append("dropped", kNow);
    EXPECT_THAT(store::Transaction::Begin(*db_),
                strata::testing::StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::_));
  }
  EXPECT_THAT(table_->FindIdentity({.category = "facts", .key = "kept"}),
              IsOkAndHolds(Optional(::testing::_)));
  EXPECT_THAT(table_->FindIdentity({.category = "facts", .key = "dropped"}),
              IsOkAndHolds(::testing::Eq(std::nullopt)));
}

INSTANTIATE_TEST_SUITE_P(Engines, VersionTableTest, testing::Engines(), testing::EngineName);

}  // namespace
}  // namespace strata::temporal
