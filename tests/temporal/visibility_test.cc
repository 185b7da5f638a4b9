// temporal::Visibility: which versions a read sees, by id, newest first and by a join; and
// VersionTable::LoadVersionsById, which loads what it kept.

#include "temporal/visibility.h"

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
#include "temporal/version_table.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::temporal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr int64_t kNow = 1772323200000;  // 2026-03-01T00:00:00Z

// On each engine (the test's parameter).
class VisibilityTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, testing::OpenMigrated(GetParam(), dir_));
    versions_ = std::make_unique<VersionTable>(db_.get());
  }

  // Appends a version of (category, key), valid from `valid_from`, recorded at `at`.
  int64_t Put(const std::string& category, const std::string& key, int64_t at,
              std::optional<int64_t> valid_from = std::nullopt,
              std::vector<std::string> tags = {}) {
    const Identity identity{.category = category, .key = key};
    absl::StatusOr<std::optional<IdentityRow>> found = versions_->FindIdentity(identity);
    EXPECT_OK(found);
    if (!found.ok()) return 0;
    if (!found->has_value()) {
      EXPECT_OK(versions_->InsertIdentity(identity, at));
      found = versions_->FindIdentity(identity);
      if (!found.ok() || !found->has_value()) return 0;
    }
    VersionRow row{.body_hash = static_cast<uint64_t>(at)};
    row.version.identity = identity;
    row.version.body_json = R"("text")";
    row.version.type = "fact";
    row.version.tags = std::move(tags);
    row.version.valid_from_unix_ms = valid_from.value_or(at);
    row.version.recorded_at_unix_ms = at;
    EXPECT_OK(versions_->AppendVersion(**found, row));
    return row.version_id;
  }

  // (index, version id) of what Filter visits.
  std::vector<std::pair<size_t, int64_t>> Filtered(Visibility& visibility,
                                                   const std::vector<int64_t>& ids) {
    std::vector<std::pair<size_t, int64_t>> out;
    EXPECT_OK(visibility.Filter(ids, [&](size_t i, const VisibleVersion& v) {
      out.emplace_back(i, v.version_id);
      return true;
    }));
    return out;
  }

  std::vector<int64_t> Newest(Visibility& visibility, size_t cap, size_t stop_after) {
    std::vector<int64_t> out;
    EXPECT_OK(visibility.Newest(cap, [&](const VisibleVersion& v) {
      out.push_back(v.version_id);
      return out.size() < stop_after;
    }));
    return out;
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<store::Db> db_;
  std::unique_ptr<VersionTable> versions_;
};

TEST_P(VisibilityTest, FilterKeepsTheGivenOrderAndDropsWhatIsNotVisible) {
  const int64_t a = Put("facts", "a", kNow);
  const int64_t b_old = Put("facts", "b", kNow);
  const int64_t b_new = Put("facts", "b", kNow + 10);
  const int64_t c = Put("notes", "c", kNow);
  Visibility now(db_.get(), {});
  // Superseded versions and ids of no version are not visible; indexes are the input's.
  EXPECT_THAT(Filtered(now, {c, b_old, 999, a, b_new}),
              ElementsAre(Pair(0, c), Pair(3, a), Pair(4, b_new)));
  Visibility notes(db_.get(), {.filters = {.category = "notes"}});
  EXPECT_THAT(Filtered(notes, {a, b_new, c}), ElementsAre(Pair(2, c)));
  EXPECT_THAT(Filtered(notes, {}), IsEmpty());
}

// What Expect names is read with the next Filter that reads, and no id is read twice: the
// later Filter answers from the first read (one snapshot), not from what changed since.
TEST_P(VisibilityTest, ExpectedIdsAreReadWithTheNextReadAndKept) {
  const int64_t a = Put("facts", "a", kNow);
  const int64_t b = Put("facts", "b", kNow);
  const int64_t c = Put("notes", "c", kNow);
  Visibility now(db_.get(), {});
  int asked = 0;
  now.Expect([&] {
    ++asked;
    return std::vector<int64_t>{b, c, 999};
  });
  EXPECT_THAT(Filtered(now, {}), IsEmpty());
  EXPECT_EQ(asked, 0);  // Nothing to read yet.
  EXPECT_THAT(Filtered(now, {a}), ElementsAre(Pair(0, a)));
  EXPECT_EQ(asked, 1);
  Put("notes", "c", kNow + 10);  // Supersedes c, after the read.
  EXPECT_THAT(Filtered(now, {999, c, b, a}), ElementsAre(Pair(1, c), Pair(2, b), Pair(3, a)));
  EXPECT_EQ(asked, 1);
  Visibility later(db_.get(), {});
  EXPECT_THAT(Filtered(later, {c, b}), ElementsAre(Pair(1, b)));
}

TEST_P(VisibilityTest, AsOfSeesWhatWasBelievedThen) {
  const int64_t old_version = Put("facts", "k", kNow);
  const int64_t new_version = Put("facts", "k", kNow + 10);
  Visibility before(db_.get(), {.as_of_unix_ms = kNow + 5});
  EXPECT_THAT(Filtered(before, {new_version, old_version}), ElementsAre(Pair(1, old_version)));
  Visibility earlier(db_.get(), {.as_of_unix_ms = kNow - 1});
  EXPECT_THAT(Filtered(earlier, {new_version, old_version}), IsEmpty());
}

TEST_P(VisibilityTest, ValidAtKeepsOnlyEachIdentitysWinner) {
  // Recorded later but valid from earlier: at kNow + 5 the first version is still true.
  const int64_t first = Put("facts", "k", kNow, kNow);
  const int64_t second = Put("facts", "k", kNow + 1, kNow + 10);
  Visibility at5(db_.get(), {.valid_at_unix_ms = kNow + 5});
  EXPECT_THAT(Filtered(at5, {second, first}), ElementsAre(Pair(1, first)));
  Visibility at20(db_.get(), {.valid_at_unix_ms = kNow + 20});
  EXPECT_THAT(Filtered(at20, {second, first}), ElementsAre(Pair(0, second)));
}

TEST_P(VisibilityTest, NewestListsNewestRecordedFirstAndStopsWhenAsked) {
  const int64_t a = Put("facts", "a", kNow);
  const int64_t b = Put("facts", "b", kNow + 20);
  const int64_t c = Put("facts", "c", kNow + 10);
  Visibility now(db_.get(), {});
  EXPECT_THAT(Newest(now, 0, 10), ElementsAre(b, c, a));
  EXPECT_THAT(Newest(now, 2, 2), ElementsAre(b, c));
  Visibility then(db_.get(), {.as_of_unix_ms = kNow + 15});
  EXPECT_THAT(Newest(then, 0, 10), ElementsAre(c, a));
}

TEST_P(VisibilityTest, JoinReadsTheJoinedColumnsOfVisibleVersions) {
  Put("facts", "a", kNow);
  Put("facts", "b", kNow);
  Put("facts", "b", kNow + 1);
  Visibility now(db_.get(), {});
  std::vector<std::string> keys;
  ASSERT_OK(now.Join(
      "JOIN memories j ON j.id = v.memory_id AND j.key <> :skip", "j.key",
      [](store::Stmt& s) { s.Bind(s.ParameterIndex(":skip"), std::string_view("none")); },
      [&](store::Stmt& row, const VisibleVersion&) {
        keys.emplace_back(row.Text(2));
        return true;
      }));
  std::sort(keys.begin(), keys.end());
  EXPECT_THAT(keys, ElementsAre("a", "b"));
}

TEST_P(VisibilityTest, VersionsLoadByIdInTheGivenOrder) {
  const int64_t a = Put("facts", "a", kNow);
  const int64_t b = Put("notes", "b", kNow + 1);
  ASSERT_OK_AND_ASSIGN(const std::vector<VersionRow> rows,
                       versions_->LoadVersionsById(std::vector<int64_t>{b, a}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].version_id, b);
  EXPECT_EQ(rows[0].version.identity.key, "b");
  EXPECT_EQ(rows[1].version_id, a);
  EXPECT_EQ(rows[1].version.identity.category, "facts");
  EXPECT_THAT(
      versions_->LoadVersionsById(std::vector<int64_t>{a, 999, b}),
      ::strata::testing::StatusIs(absl::StatusCode::kNotFound, ::testing::HasSubstr("999")));
}

TEST_P(VisibilityTest, FiltersByTagAndType) {
  const int64_t tagged = Put("facts", "a", kNow, std::nullopt, {"red", "blue"});
  const int64_t other = Put("facts", "b", kNow, std::nullopt, {"green"});
  const int64_t plain = Put("facts", "c", kNow);
  Visibility red(db_.get(), {.filters = {.tags = {"red"}}});
  EXPECT_THAT(Filtered(red, {plain, other, tagged}), ElementsAre(Pair(2, tagged)));
  Visibility both(db_.get(), {.filters = {.tags = {"blue", "red"}}});
  EXPECT_THAT(Newest(both, 0, 10), ElementsAre(tagged));
  Visibility none(db_.get(), {.filters = {.tags = {"red", "green"}}});
  EXPECT_THAT(Newest(none, 0, 10), IsEmpty());
  Visibility facts(db_.get(), {.filters = {.type = "fact"}});
  EXPECT_THAT(Filtered(facts, {tagged, other}), ElementsAre(Pair(0, tagged), Pair(1, other)));
  Visibility notes(db_.get(), {.filters = {.type = "note"}});
  EXPECT_THAT(Filtered(notes, {tagged, other}), IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Engines, VisibilityTest, testing::Engines(), testing::EngineName);

}  // namespace
}  // namespace strata::temporal
