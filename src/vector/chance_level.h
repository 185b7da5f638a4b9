#pragma once
// What a query scores against a store by chance. The best of N unrelated memories scores
// higher the larger N is (the nearest of 12K changelog notes reaches 0.17-0.32 under the
// built-in embedder for any text), so a dense match is evidence only when it stands out from
// what the same query scores against the store at large (docs/design.md, "Evidence or nothing").

#include <cstddef>
#include <span>

namespace strata::vector {

struct ChanceLevel {
  double mean = 0;        // Of the query's similarities to (a sample of) the stored vectors.
  double sd = 0;          // Their standard deviation.
  size_t population = 0;  // How many vectors the best match is chosen among.
};

// The mean and standard deviation of `similarities`, the query's similarities to a sample of
// the vectors (or all of them), for a best match chosen among `population` vectors.
ChanceLevel ChanceLevelOf(std::span<const float> similarities, size_t population);

// The similarity that the best of `population` chance matches most often reaches, chance
// similarities taken as Laplace-distributed with the level's mean and sd: mean + sd / sqrt(2) *
// ln(population / 2). Laplace, not normal: a shared word lifts an unrelated memory far above
// the rest, so the tail is heavier than a normal one (on the 12K notes, the best of 10
// unrelated queries stood 3.2-5.6 sd above the mean, where a normal maximum sits at 4.3).
// The mean for a population of 2 or fewer.
double ChanceMaximum(const ChanceLevel& chance);

// Whether a query's best dense match, of similarity `best`, is evidence: above the embedder's
// similarity floor (similarity_floor.h) and above ChanceMaximum(chance), unless the query's
// mean similarity to the store is itself above the floor: then the store at large is about
// the query (a store of one topic), no match there is chance, and the floor alone decides.
bool BestIsEvidence(double best, double floor, const ChanceLevel& chance);

}  // namespace strata::vector
