#include "temporal/timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace strata::temporal {
namespace {

using ::testing::Optional;

constexpr int64_t kDay = 24 * 3600 * 1000;
constexpr int64_t kNow = 20000 * kDay;  // 2024-10-04; any instant works.

// The instant `days` days from now.
constexpr int64_t D(int64_t days) { return kNow + days * kDay; }

constexpr std::optional<int64_t> kOpen = std::nullopt;

VersionTimes V(int64_t valid_from, std::optional<int64_t> valid_to, int64_t recorded_at,
               std::optional<int64_t> superseded_at) {
  VersionTimes v;
  v.valid_from_unix_ms = valid_from;
  v.valid_to_unix_ms = valid_to;
  v.recorded_at_unix_ms = recorded_at;
  v.superseded_at_unix_ms = superseded_at;
  return v;
}

const std::vector<int64_t> kNoRetractions;

// valid_at(v) = bitemporal(now, v) with no retractions.
std::optional<size_t> ValidAt(const std::vector<VersionTimes>& versions, int64_t valid) {
  return TrueAt(versions, kNoRetractions, kNow, valid);
}

// --- The five scenarios of docs/design.md §3 ------------------------------------------------

// (1) Retroactive correction: "senior engineer" [-300,-60), then "staff engineer" [-60,inf)
// recorded later.
TEST(TrueAt, RetroactiveCorrectionKeepsTheEarlierPeriod) {
  constexpr size_t kSenior = 0, kStaff = 1;
  const std::vector<VersionTimes> history = {
      V(D(-300), D(-60), D(-250), D(-20)),
      V(D(-60), kOpen, D(-20), kOpen),
  };
  EXPECT_THAT(ValidAt(history, D(-150)), Optional(kSenior));
  EXPECT_THAT(ValidAt(history, D(-10)), Optional(kStaff));
  EXPECT_EQ(ValidAt(history, D(-320)), std::nullopt);
  // Edges: valid_to of senior is exclusive and equals staff's start.
  EXPECT_THAT(ValidAt(history, D(-60) - 1), Optional(kSenior));
  EXPECT_THAT(ValidAt(history, D(-60)), Optional(kStaff));
  EXPECT_THAT(ValidAt(history, D(-300)), Optional(kSenior));
  EXPECT_EQ(ValidAt(history, D(-300) - 1), std::nullopt);
}

// (2) Future-dated facts: 120k [-400,+30), then 150k [+30,inf).
TEST(TrueAt, FutureDatedFactTakesOverAtItsStart) {
  constexpr size_t k120 = 0, k150 = 1;
  const std::vector<VersionTimes> history = {
      V(D(-400), D(30), D(-400), D(-2)),
      V(D(30), kOpen, D(-2), kOpen),
  };
  EXPECT_THAT(ValidAt(history, D(0)), Optional(k120));
  EXPECT_THAT(ValidAt(history, D(45)), Optional(k150));
  EXPECT_THAT(ValidAt(history, D(30) - 1), Optional(k120));
  EXPECT_THAT(ValidAt(history, D(30)), Optional(k150));
}

// (3) Belief vs truth: "on-track" [-20,inf) believed at t0, then "at-risk" [-20,inf).
TEST(BitemporalScenario, BeliefAndTruthDiffer) {
  constexpr size_t kOnTrack = 0, kAtRisk = 1;
  const int64_t t0 = D(-15);
  const std::vector<VersionTimes> history = {
      V(D(-20), kOpen, D(-20), D(-5)),
      V(D(-20), kOpen, D(-5), kOpen),
  };
  EXPECT_THAT(BelievedAt(history, t0), Optional(kOnTrack));
  EXPECT_THAT(BelievedAt(history, kNow), Optional(kAtRisk));
  EXPECT_THAT(ValidAt(history, D(-10)), Optional(kAtRisk));
  EXPECT_THAT(TrueAt(history, kNoRetractions, t0, D(-10)), Optional(kOnTrack));
  EXPECT_THAT(TrueAt(history, kNoRetractions, kNow, D(-10)), Optional(kAtRisk));
  // Same start: the later version replaces the earlier one over its whole period.
  EXPECT_THAT(ValidAt(history, D(-20)), Optional(kAtRisk));
  EXPECT_THAT(ValidAt(history, D(100)), Optional(kAtRisk));
}

// (4) Out-of-order arrival: "opus-4-8" [-5,inf), then later recorded "opus-4-7" [-90,-5).
TEST(TrueAt, LateArrivingOlderFactDoesNotCutShortTheNewerOne) {
  constexpr size_t k48 = 0, k47 = 1;
  const std::vector<VersionTimes> history = {
      V(D(-5), kOpen, D(-5), D(-2)),
      V(D(-90), D(-5), D(-2), kOpen),
  };
  EXPECT_THAT(ValidAt(history, D(-40)), Optional(k47));
  EXPECT_THAT(ValidAt(history, D(-1)), Optional(k48));
  EXPECT_THAT(ValidAt(history, D(-5)), Optional(k48));
  EXPECT_THAT(ValidAt(history, D(-5) - 1), Optional(k47));
  EXPECT_EQ(ValidAt(history, D(-91)), std::nullopt);
  // Before the late fact arrived, the older period was unknown.
  EXPECT_EQ(TrueAt(history, kNoRetractions, D(-3), D(-40)), std::nullopt);
  EXPECT_THAT(TrueAt(history, kNoRetractions, D(-3), D(-1)), Optional(k48));
}

// (5) Closed period: "bike" [-200,-30) alone.
TEST(TrueAt, ClosedPeriodEndsAtValidTo) {
  const std::vector<VersionTimes> history = {V(D(-200), D(-30), D(-200), kOpen)};
  EXPECT_THAT(ValidAt(history, D(-100)), Optional(size_t{0}));
  EXPECT_EQ(ValidAt(history, D(-5)), std::nullopt);
  EXPECT_THAT(ValidAt(history, D(-30) - 1), Optional(size_t{0}));
  EXPECT_EQ(ValidAt(history, D(-30)), std::nullopt);
}

// --- TrueAt: more rules ----------------------------------------------------------------------

TEST(TrueAt, EmptyHistoryIsNotFound) {
  const std::vector<VersionTimes> none;
  EXPECT_EQ(TrueAt(none, kNoRetractions, kNow, kNow), std::nullopt);
}

TEST(TrueAt, TxBeforeAnythingIsNotFound) {
  const std::vector<VersionTimes> history = {V(0, kOpen, 100, kOpen)};
  EXPECT_EQ(TrueAt(history, kNoRetractions, 99, 50), std::nullopt);
  EXPECT_THAT(TrueAt(history, kNoRetractions, 100, 50), Optional(size_t{0}));
}

TEST(TrueAt, VersionRecordedAfterTxIsIgnored) {
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 100, 200),
      V(0, kOpen, 200, kOpen),
  };
  EXPECT_THAT(TrueAt(history, kNoRetractions, 199, 50), Optional(size_t{0}));
  EXPECT_THAT(TrueAt(history, kNoRetractions, 200, 50), Optional(size_t{1}));
}

TEST(TrueAt, ValidToIsExclusiveAndValidFromInclusive) {
  const std::vector<VersionTimes> history = {V(10, 20, 1, kOpen)};
  EXPECT_EQ(TrueAt(history, kNoRetractions, 5, 9), std::nullopt);
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 10), Optional(size_t{0}));
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 19), Optional(size_t{0}));
  EXPECT_EQ(TrueAt(history, kNoRetractions, 5, 20), std::nullopt);
}

TEST(TrueAt, LaterVersionStartingLaterClosesTheEarlierAtItsStart) {
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 1, 2),
      V(10, kOpen, 2, kOpen),
  };
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 9), Optional(size_t{0}));
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 10), Optional(size_t{1}));
  EXPECT_EQ(TrueAt(history, kNoRetractions, 5, -1), std::nullopt);
}

TEST(TrueAt, EarlierValidToBeatsLaterVersionStart) {
  // The older version ends on its own before the newer one starts: a gap remains.
  const std::vector<VersionTimes> history = {
      V(0, 5, 1, 2),
      V(10, kOpen, 2, kOpen),
  };
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 4), Optional(size_t{0}));
  EXPECT_EQ(TrueAt(history, kNoRetractions, 5, 7), std::nullopt);
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 10), Optional(size_t{1}));
}

TEST(TrueAt, SmallestStartSeenSoFarClosesOlderVersions) {
  // Newest first: [20,30) sets m = 20; [50,inf) starts after m and keeps its end; [0,inf)
  // is closed at m = 20, not at 50.
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 1, 2),
      V(50, kOpen, 2, 3),
      V(20, 30, 3, kOpen),
  };
  EXPECT_THAT(TrueAt(history, kNoRetractions, 10, 10), Optional(size_t{0}));
  EXPECT_THAT(TrueAt(history, kNoRetractions, 10, 25), Optional(size_t{2}));
  EXPECT_EQ(TrueAt(history, kNoRetractions, 10, 35), std::nullopt);
  EXPECT_THAT(TrueAt(history, kNoRetractions, 10, 60), Optional(size_t{1}));
  // As believed before the third version: [0,50) and [50,inf).
  EXPECT_THAT(TrueAt(history, kNoRetractions, 2, 35), Optional(size_t{0}));
}

TEST(TrueAt, NewestRecordedWinsWhereIntervalsOverlap) {
  // The newer version starts before the older one, so it does not close it; where both
  // hold, the newer one is returned.
  const std::vector<VersionTimes> history = {
      V(10, kOpen, 1, 2),
      V(0, 20, 2, kOpen),
  };
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 15), Optional(size_t{1}));
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 25), Optional(size_t{0}));
  EXPECT_THAT(TrueAt(history, kNoRetractions, 5, 5), Optional(size_t{1}));
}

TEST(TrueAt, HandlesExtremeTimes) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<VersionTimes> history = {V(kMin, kOpen, 0, kOpen)};
  EXPECT_THAT(TrueAt(history, kNoRetractions, kMax, kMin), Optional(size_t{0}));
  // An open interval ends just past every representable time but kMax itself.
  EXPECT_THAT(TrueAt(history, kNoRetractions, kMax, kMax - 1), Optional(size_t{0}));
  EXPECT_EQ(TrueAt(history, kNoRetractions, kMin, 0), std::nullopt);
}

// --- Retractions -----------------------------------------------------------------------------

TEST(TrueAt, RetractionHidesEverythingRecordedBeforeIt) {
  // Two versions, then forget at 200.
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 100, 150),
      V(0, kOpen, 150, 200),
  };
  const std::vector<int64_t> retractions = {200};
  EXPECT_THAT(TrueAt(history, retractions, 199, 50), Optional(size_t{1}));
  EXPECT_EQ(TrueAt(history, retractions, 200, 50), std::nullopt);  // At tx counts.
  EXPECT_EQ(TrueAt(history, retractions, 1000, 50), std::nullopt);
  EXPECT_THAT(TrueAt(history, retractions, 120, 50), Optional(size_t{0}));
}

TEST(TrueAt, RetractionAfterTxDoesNotCount) {
  const std::vector<VersionTimes> history = {V(0, kOpen, 100, 200)};
  const std::vector<int64_t> retractions = {200, 300};
  EXPECT_THAT(TrueAt(history, retractions, 150, 0), Optional(size_t{0}));
}

TEST(TrueAt, RevivalAfterRetractionCounts) {
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 100, 200),
      V(300, kOpen, 300, kOpen),
  };
  const std::vector<int64_t> retractions = {200};
  EXPECT_EQ(TrueAt(history, retractions, 250, 400), std::nullopt);  // Not yet revived.
  EXPECT_THAT(TrueAt(history, retractions, 300, 400), Optional(size_t{1}));
  EXPECT_THAT(TrueAt(history, retractions, 1000, 400), Optional(size_t{1}));
}

TEST(TrueAt, RevivalStartsAfreshWithoutTheRetractedVersions) {
  // The retracted version covered [0,inf); after the revival only [300,inf) is known.
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 100, 200),
      V(300, kOpen, 300, kOpen),
  };
  const std::vector<int64_t> retractions = {200};
  EXPECT_EQ(TrueAt(history, retractions, 1000, 50), std::nullopt);
  EXPECT_EQ(TrueAt(history, retractions, 1000, 299), std::nullopt);
  // Belief before the retraction still sees the old version.
  EXPECT_THAT(TrueAt(history, retractions, 150, 50), Optional(size_t{0}));
}

TEST(TrueAt, OnlyTheMostRecentRetractionAtOrBeforeTxMatters) {
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 100, 200),
      V(0, kOpen, 300, 400),
      V(0, kOpen, 500, kOpen),
  };
  const std::vector<int64_t> retractions = {200, 400};
  EXPECT_THAT(TrueAt(history, retractions, 150, 10), Optional(size_t{0}));
  EXPECT_EQ(TrueAt(history, retractions, 250, 10), std::nullopt);
  EXPECT_THAT(TrueAt(history, retractions, 350, 10), Optional(size_t{1}));
  EXPECT_EQ(TrueAt(history, retractions, 450, 10), std::nullopt);
  EXPECT_THAT(TrueAt(history, retractions, 500, 10), Optional(size_t{2}));
}

TEST(TrueAt, RevivedVersionsStillCloseEachOther) {
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 100, 200),
      V(300, kOpen, 300, 400),
      V(350, kOpen, 400, kOpen),
  };
  const std::vector<int64_t> retractions = {200};
  EXPECT_THAT(TrueAt(history, retractions, 1000, 320), Optional(size_t{1}));
  EXPECT_THAT(TrueAt(history, retractions, 1000, 350), Optional(size_t{2}));
  EXPECT_EQ(TrueAt(history, retractions, 1000, 100), std::nullopt);
}

// --- BelievedAt ------------------------------------------------------------------------------

TEST(BelievedAt, EmptyHistoryIsNotFound) {
  const std::vector<VersionTimes> none;
  EXPECT_EQ(BelievedAt(none, kNow), std::nullopt);
}

TEST(BelievedAt, TxBeforeAnythingIsNotFound) {
  const std::vector<VersionTimes> history = {V(0, kOpen, 100, kOpen)};
  EXPECT_EQ(BelievedAt(history, 99), std::nullopt);
  EXPECT_EQ(BelievedAt(history, std::numeric_limits<int64_t>::min()), std::nullopt);
}

TEST(BelievedAt, RecordedAtIsInclusiveAndSupersededAtExclusive) {
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 10, 20),
      V(0, kOpen, 20, 30),
      V(0, kOpen, 30, kOpen),
  };
  EXPECT_THAT(BelievedAt(history, 10), Optional(size_t{0}));
  EXPECT_THAT(BelievedAt(history, 19), Optional(size_t{0}));
  EXPECT_THAT(BelievedAt(history, 20), Optional(size_t{1}));
  EXPECT_THAT(BelievedAt(history, 29), Optional(size_t{1}));
  EXPECT_THAT(BelievedAt(history, 30), Optional(size_t{2}));
  EXPECT_THAT(BelievedAt(history, std::numeric_limits<int64_t>::max()), Optional(size_t{2}));
}

TEST(BelievedAt, IgnoresValidTime) {
  // A version not yet (or no longer) valid is still what was believed.
  const std::vector<VersionTimes> history = {V(D(100), D(200), D(0), kOpen)};
  EXPECT_THAT(BelievedAt(history, D(1)), Optional(size_t{0}));
}

TEST(BelievedAt, RetractedIdentityIsNotBelieved) {
  // Forgotten at 200 (the version's belief ended), remembered again at 300.
  const std::vector<VersionTimes> history = {
      V(0, kOpen, 100, 200),
      V(0, kOpen, 300, kOpen),
  };
  EXPECT_THAT(BelievedAt(history, 199), Optional(size_t{0}));
  EXPECT_EQ(BelievedAt(history, 200), std::nullopt);
  EXPECT_EQ(BelievedAt(history, 299), std::nullopt);
  EXPECT_THAT(BelievedAt(history, 300), Optional(size_t{1}));
}

TEST(BelievedAt, CurrentlyRetractedIdentityIsNotBelievedNow) {
  const std::vector<VersionTimes> history = {V(0, kOpen, 100, 200)};
  EXPECT_EQ(BelievedAt(history, kNow), std::nullopt);
}

// --- Random histories against a direct reading of the rules ----------------------------------

// A history as strata writes it: recorded_at strictly increasing, each version superseded by
// the next or by a retraction, valid bounds random.
struct History {
  std::vector<VersionTimes> versions;
  std::vector<int64_t> retractions;
};

History RandomHistory(std::mt19937_64& rng) {
  History h;
  std::uniform_int_distribution<int> count(0, 6);
  std::uniform_int_distribution<int64_t> step(1, 5);
  std::uniform_int_distribution<int64_t> bound(0, 60);
  std::bernoulli_distribution coin(0.3);
  int64_t t = 0;
  const int n = count(rng);
  for (int i = 0; i < n; ++i) {
    t += step(rng);
    if (!h.versions.empty() && !h.versions.back().superseded_at_unix_ms.has_value()) {
      h.versions.back().superseded_at_unix_ms = t;
    }
    const int64_t from = bound(rng);
    std::optional<int64_t> to;
    if (coin(rng)) to = from + step(rng) * 4;
    h.versions.push_back(V(from, to, t, kOpen));
    if (coin(rng)) {  // Forget it.
      t += step(rng);
      h.versions.back().superseded_at_unix_ms = t;
      h.retractions.push_back(t);
    }
  }
  return h;
}

// as_of: the version with recorded_at <= tx < superseded_at, by a linear scan.
std::optional<size_t> NaiveBelievedAt(const History& h, int64_t tx) {
  std::optional<size_t> found;
  for (size_t i = 0; i < h.versions.size(); ++i) {
    const VersionTimes& v = h.versions[i];
    if (v.recorded_at_unix_ms <= tx &&
        (!v.superseded_at_unix_ms || tx < *v.superseded_at_unix_ms)) {
      EXPECT_FALSE(found.has_value()) << "belief intervals overlap";
      found = i;
    }
  }
  return found;
}

// bitemporal: each eligible version's effective interval computed on its own, from the
// smallest valid_from among the eligible versions recorded after it.
std::optional<size_t> NaiveTrueAt(const History& h, int64_t tx, int64_t valid) {
  std::optional<int64_t> forget;
  for (int64_t r : h.retractions) {
    if (r <= tx) forget = std::max(forget.value_or(r), r);
  }
  std::vector<size_t> eligible;
  for (size_t i = 0; i < h.versions.size(); ++i) {
    const int64_t rec = h.versions[i].recorded_at_unix_ms;
    if (rec <= tx && (!forget || rec > *forget)) eligible.push_back(i);
  }
  std::optional<size_t> best;
  for (size_t a = 0; a < eligible.size(); ++a) {
    const VersionTimes& v = h.versions[eligible[a]];
    std::optional<int64_t> m;
    for (size_t b = a + 1; b < eligible.size(); ++b) {
      const int64_t start = h.versions[eligible[b]].valid_from_unix_ms;
      m = std::min(m.value_or(start), start);
    }
    std::optional<int64_t> end = v.valid_to_unix_ms;
    if (m && *m >= v.valid_from_unix_ms) end = std::min(end.value_or(*m), *m);
    if (v.valid_from_unix_ms <= valid && (!end || valid < *end)) best = eligible[a];  // Newest.
  }
  return best;
}

TEST(TimelineOracle, RandomHistoriesMatchADirectReadingOfTheRules) {
  std::mt19937_64 rng(42);
  int found = 0;
  for (int round = 0; round < 3000; ++round) {
    const History h = RandomHistory(rng);
    for (int64_t tx = -1; tx <= 70; ++tx) {
      ASSERT_EQ(BelievedAt(h.versions, tx), NaiveBelievedAt(h, tx)) << "round " << round;
      for (int64_t valid = -1; valid <= 90; valid += 3) {
        const std::optional<size_t> expected = NaiveTrueAt(h, tx, valid);
        ASSERT_EQ(TrueAt(h.versions, h.retractions, tx, valid), expected)
            << "round " << round << " tx " << tx << " valid " << valid;
        found += expected.has_value();
      }
    }
  }
  EXPECT_GT(found, 0);  // The histories are not all empty.
}

}  // namespace
}  // namespace strata::temporal
