// vector::ChanceLevelOf and ChanceMaximum: the moments of a sample, and the similarity the best
// of N chance matches most often reaches under a Laplace tail.

#include "vector/chance_level.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace strata::vector {
namespace {

TEST(ChanceLevelOf, IsTheMeanAndPopulationStandardDeviation) {
  const std::vector<float> similarities = {0.1f, 0.3f, -0.1f, 0.1f};
  const ChanceLevel chance = ChanceLevelOf(similarities, 1000);
  EXPECT_NEAR(chance.mean, 0.1, 1e-7);
  EXPECT_NEAR(chance.sd, std::sqrt(0.02), 1e-7);
  EXPECT_EQ(chance.population, 1000u);
}

TEST(ChanceLevelOf, AnEmptySampleIsZero) {
  const ChanceLevel chance = ChanceLevelOf({}, 0);
  EXPECT_EQ(chance.mean, 0);
  EXPECT_EQ(chance.sd, 0);
}

TEST(ChanceMaximum, IsTheModeOfTheBestOfNLaplaceDraws) {
  // Scale b = sd / sqrt(2) = 0.05; the best of 2,000 draws: mean + b * ln(1000).
  const ChanceLevel chance{.mean = 0.02, .sd = 0.05 * std::sqrt(2.0), .population = 2000};
  EXPECT_NEAR(ChanceMaximum(chance), 0.02 + 0.05 * std::log(1000.0), 1e-9);
}

TEST(ChanceMaximum, RisesWithThePopulation) {
  ChanceLevel chance{.mean = 0.0, .sd = 0.05, .population = 100};
  const double hundred = ChanceMaximum(chance);
  chance.population = 10000;
  const double ten_thousand = ChanceMaximum(chance);
  EXPECT_GT(hundred, 0.0);
  EXPECT_GT(ten_thousand, hundred);
  // Laplace: each factor of 10 adds the same, sd / sqrt(2) * ln(10).
  chance.population = 1000;
  EXPECT_NEAR(ten_thousand - ChanceMaximum(chance), ChanceMaximum(chance) - hundred, 1e-9);
}

TEST(ChanceMaximum, IsTheMeanForTwoOrFewer) {
  for (size_t population : {0u, 1u, 2u}) {
    EXPECT_EQ(ChanceMaximum({.mean = 0.3, .sd = 0.1, .population = population}), 0.3) << population;
  }
}

TEST(BestIsEvidence, NeedsTheFloorAndToStandOutFromChance) {
  // The best of 10,000 matches, most often: 0.0 + 0.05 * ln(5000) = 0.426.
  const ChanceLevel chance{.mean = 0.0, .sd = 0.05 * std::sqrt(2.0), .population = 10000};
  EXPECT_FALSE(BestIsEvidence(0.30, 0.1, chance));  // Above the floor, not above chance.
  EXPECT_TRUE(BestIsEvidence(0.45, 0.1, chance));
  EXPECT_FALSE(BestIsEvidence(0.45, 0.5, chance));  // Above chance, not above the floor.
}

TEST(BestIsEvidence, InAStoreAboutTheQueryTheFloorAloneDecides) {
  // Every memory is about the query's topic: the mean is above the floor, and the best need
  // not stand out from the rest.
  const ChanceLevel chance{.mean = 0.6, .sd = 0.02, .population = 300};
  EXPECT_TRUE(BestIsEvidence(0.61, 0.1, chance));
  EXPECT_FALSE(BestIsEvidence(0.09, 0.1, chance));
}

}  // namespace
}  // namespace strata::vector
