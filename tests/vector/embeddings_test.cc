// vector/embeddings.h on both engines (a SQLite file and a PostgreSQL database,
// temporal/engines.h): spaces, the backlog and its scopes, vectors stored, read back in
// write order after a watermark and deleted with their versions, per space.

#include "vector/embeddings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "embed/embedder.h"
#include "store/db.h"
#include "temporal/engines.h"
#include "temporal/version_table.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "vector/codec.h"

namespace strata::vector {
namespace {

using ::strata::testing::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kNow = 1772323200000;
constexpr int kDim = 16;

embed::EmbedderInfo Info(std::string options = "") {
  return {.name = "fake", .version = "1", .dimension = kDim, .options = std::move(options)};
}

// The unit vector along axis `axis` (mod kDim).
std::vector<float> Axis(int64_t axis) {
  std::vector<float> v(kDim, 0.0f);
  v[axis % kDim] = 1.0f;
  return v;
}

// A vector read back: (row id, version id, the axis it points along).
struct ReadRow {
  int64_t row = 0;
  int64_t version = 0;
  int axis = -1;
  std::vector<int64_t> links;
};

class EmbeddingsTest : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(db_, temporal::testing::OpenMigrated(GetParam(), dir_));
    versions_ = temporal::VersionTable(db_.get());
  }

  // Stores a memory with one version of `body_json`; returns the version's id.
  int64_t Insert(const std::string& category, const std::string& key,
                 const std::string& body_json) {
    now_ += 10;
    const Identity identity{.category = category, .key = key};
    absl::StatusOr<int64_t> memory = versions_.InsertIdentity(identity, now_);
    EXPECT_OK(memory);
    if (!memory.ok()) return 0;
    temporal::VersionRow row{.body_hash = 1};
    row.version.identity = identity;
    row.version.body_json = body_json;
    row.version.type = "insight";
    row.version.recorded_at_unix_ms = now_;
    row.version.valid_from_unix_ms = now_;
    EXPECT_OK(versions_.AppendVersion(
        {.memory_id = *memory, .identity = identity, .last_event_at_unix_ms = now_ - 1}, row));
    memory_of_[row.version_id] = *memory;
    return row.version_id;
  }

  int64_t MemoryOf(int64_t version_id) { return memory_of_[version_id]; }

  // Stores the vector along `axis` for each of `version_ids`, one transaction each call.
  absl::Status Store(int64_t space, std::vector<int64_t> version_ids, int axis,
                     std::vector<std::vector<int64_t>> links = {}) {
    std::vector<float> vectors;
    for (size_t i = 0; i < version_ids.size(); ++i) {
      const std::vector<float> v = Axis(axis);
      vectors.insert(vectors.end(), v.begin(), v.end());
    }
    return StoreVectors(*db_, space, kDim, version_ids, vectors, links);
  }

  // The vectors of `space` among the next `limit` rows after `after_row`; how many rows
  // (of every space) were read and the last one's id in read_ and read_through_.
  std::vector<ReadRow> ReadAfter(int64_t space, int64_t after_row, int64_t limit = 100) {
    std::vector<ReadRow> rows;
    read_through_ = after_row;
    absl::StatusOr<int64_t> n = ReadVectorsAfter(
        *db_, space, kDim, read_through_, limit,
        [&](int64_t row, int64_t version, std::span<const float> v,
            std::span<const int64_t> links) {
          const auto top = std::max_element(v.begin(), v.end());
          rows.push_back({.row = row,
                          .version = version,
                          .axis = static_cast<int>(top - v.begin()),
                          .links = {links.begin(), links.end()}});
        });
    EXPECT_OK(n.status());
    read_ = n.value_or(-1);
    return rows;
  }
  int64_t read_ = 0, read_through_ = 0;

  static std::vector<int64_t> Versions(const std::vector<ReadRow>& rows) {
    std::vector<int64_t> out;
    for (const ReadRow& r : rows) out.push_back(r.version);
    return out;
  }

  strata::testing::TempDir dir_;
  std::unique_ptr<store::Db> db_;
  temporal::VersionTable versions_{nullptr};
  int64_t now_ = kNow;
  absl::flat_hash_map<int64_t, int64_t> memory_of_;  // Version id to memory id.
};

TEST_P(EmbeddingsTest, RegisterSpaceIsIdempotentPerFingerprint) {
  ASSERT_OK_AND_ASSIGN(const Space first, RegisterSpace(*db_, Info(), kNow));
  ASSERT_OK_AND_ASSIGN(const Space again, RegisterSpace(*db_, Info(), kNow + 5));
  ASSERT_OK_AND_ASSIGN(const Space other, RegisterSpace(*db_, Info("model=x"), kNow));
  EXPECT_EQ(first.id, again.id);
  EXPECT_NE(first.id, other.id);
  EXPECT_EQ(first.fingerprint, "fake/1/16/");
  EXPECT_EQ(other.fingerprint, "fake/1/16/model=x");
  EXPECT_EQ(first.dimension, kDim);
  // Another connection finds the same space.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<store::Db> second, temporal::testing::OpenAgain(*db_));
  EXPECT_THAT(RegisterSpace(*second, Info(), kNow + 9),
              IsOkAndHolds(::testing::Field(&Space::id, first.id)));
}

TEST_P(EmbeddingsTest, EmbeddingTextIsTheKeysWordsThenTheBodysText) {
  const std::string text = EmbeddingText("user.favourite_colour/v2:x-y", R"({"a": "blue sky"})");
  EXPECT_EQ(text.substr(0, text.find('\n')), "user favourite colour v2 x y");
  EXPECT_THAT(text, HasSubstr("blue sky"));
}

TEST_P(EmbeddingsTest, PendingVersionsFollowScopeCursorAndLimit) {
  ASSERT_OK_AND_ASSIGN(const Space space, RegisterSpace(*db_, Info(), kNow));
  const int64_t a1 = Insert("cat1", "a1", R"("one")");
  const int64_t a2 = Insert("cat1", "a2", R"("two")");
  const int64_t b = Insert("cat2", "b", R"("three")");
  ASSERT_OK_AND_ASSIGN(const std::vector<PendingVersion> all,
                       PendingVersions(*db_, space.id, {}, 0, 100));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].version_id, a1);
  EXPECT_EQ(all[1].version_id, a2);
  EXPECT_EQ(all[2].version_id, b);
  EXPECT_EQ(all[0].text, EmbeddingText("a1", R"("one")"));
  ASSERT_OK_AND_ASSIGN(const std::vector<PendingVersion> after,
                       PendingVersions(*db_, space.id, {}, a1, 1));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].version_id, a2);
  ASSERT_OK_AND_ASSIGN(const std::vector<PendingVersion> cat2,
                       PendingVersions(*db_, space.id, {.category = "cat2"}, 0, 100));
  ASSERT_EQ(cat2.size(), 1u);
  EXPECT_EQ(cat2[0].version_id, b);
  EXPECT_THAT(CountPending(*db_, space.id, {}), IsOkAndHolds(3));
  EXPECT_THAT(CountPending(*db_, space.id, {.category = "cat1"}), IsOkAndHolds(2));
  EXPECT_THAT(CountPending(*db_, space.id, {.memory_id = MemoryOf(b)}), IsOkAndHolds(1));

  // A stored vector takes its version out of the backlog.
  ASSERT_OK(Store(space.id, {a2}, 0));
  EXPECT_THAT(CountPending(*db_, space.id, {}), IsOkAndHolds(2));
  EXPECT_THAT(CountPending(*db_, space.id, {.category = "cat1"}), IsOkAndHolds(1));
  EXPECT_THAT(PendingVersions(*db_, space.id, {.category = "cat1"}, 0, 100),
              IsOkAndHolds(ElementsAre(::testing::Field(&PendingVersion::version_id, a1))));
  ASSERT_OK_AND_ASSIGN(const VectorCounts counts, CountVectorsAndPending(*db_, space.id));
  EXPECT_EQ(counts.vectors, 1);
  EXPECT_EQ(counts.pending, 2);
}

TEST_P(EmbeddingsTest, StoreVectorsSkipsAVersionDeletedMeanwhile) {
  ASSERT_OK_AND_ASSIGN(const Space space, RegisterSpace(*db_, Info(), kNow));
  const int64_t a = Insert("cat", "a", R"("one")");
  ASSERT_OK(Store(space.id, {a, a + 1000}, 3));  // The second never existed.
  EXPECT_EQ(CountVectorsAndPending(*db_, space.id)->vectors, 1);
}

TEST_P(EmbeddingsTest, ReadVectorsAfterReturnsRowsInWriteOrderAfterTheWatermark) {
  ASSERT_OK_AND_ASSIGN(const Space space, RegisterSpace(*db_, Info(), kNow));
  const int64_t v[] = {Insert("cat", "a", R"("one")"), Insert("cat", "b", R"("two")"),
                       Insert("cat", "c", R"("three")")};
  // Written in reverse version order: rows come back in write order, ids increasing.
  for (int i = 2; i >= 0; --i) ASSERT_OK(Store(space.id, {v[i]}, i));
  const std::vector<ReadRow> rows = ReadAfter(space.id, 0);
  EXPECT_THAT(Versions(rows), ElementsAre(v[2], v[1], v[0]));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_LT(rows[0].row, rows[1].row);
  EXPECT_LT(rows[1].row, rows[2].row);
  for (const ReadRow& r : rows) EXPECT_EQ(v[r.axis], r.version);
  EXPECT_EQ(read_, 3);
  EXPECT_EQ(read_through_, rows[2].row);
  EXPECT_THAT(Versions(ReadAfter(space.id, rows[0].row, 1)), ElementsAre(v[1]));
  EXPECT_EQ(read_through_, rows[1].row);
  EXPECT_THAT(ReadAfter(space.id, rows[2].row), IsEmpty());
  EXPECT_EQ(read_, 0);
  EXPECT_EQ(read_through_, rows[2].row);
  EXPECT_THAT(LastVectorRow(*db_), IsOkAndHolds(rows[2].row));
  EXPECT_THAT(VectorRowSequence(*db_), IsOkAndHolds(rows[2].row));
}

TEST_P(EmbeddingsTest, EachVectorIsReadWithTheLinksStoredWithIt) {
  ASSERT_OK_AND_ASSIGN(const Space space, RegisterSpace(*db_, Info(), kNow));
  const int64_t a = Insert("cat", "a", R"("one")");
  const int64_t b = Insert("cat", "b", R"("two")");
  const int64_t c = Insert("cat", "c", R"("three")");
  ASSERT_OK(Store(space.id, {a}, 1));  // No links given.
  ASSERT_OK(Store(space.id, {b, c}, 2, {{a, -1, int64_t{1} << 40}, {}}));
  const std::vector<ReadRow> rows = ReadAfter(space.id, 0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_THAT(rows[0].links, IsEmpty());
  EXPECT_THAT(rows[1].links, ElementsAre(a, -1, int64_t{1} << 40));
  EXPECT_THAT(rows[2].links, IsEmpty());  // An empty list is stored as none.
}

TEST_P(EmbeddingsTest, AVectorStoredAgainGetsANewRowAfterTheWatermark) {
  ASSERT_OK_AND_ASSIGN(const Space space, RegisterSpace(*db_, Info(), kNow));
  const int64_t a = Insert("cat", "a", R"("one")");
  const int64_t b = Insert("cat", "b", R"("two")");
  ASSERT_OK(Store(space.id, {a, b}, 1));
  const std::vector<ReadRow> first = ReadAfter(space.id, 0);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_OK(Store(space.id, {a}, 5));
  // A reader caught up to the first write sees the new vector; the old row is gone.
  const std::vector<ReadRow> later = ReadAfter(space.id, first[1].row);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].version, a);
  EXPECT_EQ(later[0].axis, 5);
  EXPECT_THAT(Versions(ReadAfter(space.id, 0)), ElementsAre(b, a));
  EXPECT_EQ(CountVectorsAndPending(*db_, space.id)->vectors, 2);
}

TEST_P(EmbeddingsTest, VectorsBelongToTheirSpaceAndGoWithTheirVersion) {
  ASSERT_OK_AND_ASSIGN(const Space one, RegisterSpace(*db_, Info(), kNow));
  ASSERT_OK_AND_ASSIGN(const Space two, RegisterSpace(*db_, Info("model=x"), kNow));
  const int64_t a = Insert("cat", "a", R"("one")");
  const int64_t b = Insert("cat", "b", R"("two")");
  ASSERT_OK(Store(one.id, {a, b}, 1));
  ASSERT_OK(Store(two.id, {b}, 2));
  const std::vector<ReadRow> in_one = ReadAfter(one.id, 0);
  const std::vector<ReadRow> in_two = ReadAfter(two.id, 0);
  EXPECT_THAT(Versions(in_one), ElementsAre(a, b));
  ASSERT_THAT(Versions(in_two), ElementsAre(b));
  EXPECT_EQ(in_two[0].axis, 2);
  // A reader of one space reads past the other's rows: counted, and its mark moves past them.
  EXPECT_THAT(ReadAfter(two.id, 0, 2), IsEmpty());
  EXPECT_EQ(read_, 2);
  EXPECT_EQ(read_through_, in_one[1].row);
  EXPECT_THAT(Versions(ReadAfter(two.id, read_through_)), ElementsAre(b));
  EXPECT_EQ(read_, 1);
  EXPECT_EQ(read_through_, in_two[0].row);
  EXPECT_THAT(ReadAfter(one.id, read_through_), IsEmpty());
  EXPECT_EQ(read_, 0);
  EXPECT_EQ(read_through_, in_two[0].row);
  EXPECT_THAT(CountPending(*db_, two.id, {}), IsOkAndHolds(1));

  // Deleting b's memory deletes its vectors in both spaces; the sequence stays where it was.
  ASSERT_OK_AND_ASSIGN(const int64_t sequence, VectorRowSequence(*db_));
  ASSERT_OK(versions_.DeleteIdentity(MemoryOf(b)));
  EXPECT_THAT(Versions(ReadAfter(one.id, 0)), ElementsAre(a));
  EXPECT_THAT(ReadAfter(two.id, 0), IsEmpty());
  EXPECT_EQ(CountVectorsAndPending(*db_, one.id)->vectors, 1);
  EXPECT_EQ(CountVectorsAndPending(*db_, two.id)->pending, 1);
  EXPECT_THAT(LastVectorRow(*db_), IsOkAndHolds(in_one[0].row));
  EXPECT_THAT(VectorRowSequence(*db_), IsOkAndHolds(sequence));
}

INSTANTIATE_TEST_SUITE_P(Engines, EmbeddingsTest, temporal::testing::Engines(),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata::vector
