#include "vector/chance_level.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace strata::vector {

ChanceLevel ChanceLevelOf(std::span<const float> similarities, size_t population) {
  ChanceLevel chance{.population = population};
  if (similarities.empty()) return chance;
  const double n = static_cast<double>(similarities.size());
  double sum = 0;
  for (float s : similarities) sum += s;
  chance.mean = sum / n;
  double squares = 0;
  for (float s : similarities) squares += (s - chance.mean) * (s - chance.mean);
  chance.sd = std::sqrt(squares / n);
  return chance;
}

double ChanceMaximum(const ChanceLevel& chance) {
  // A Laplace distribution of scale b (sd b * sqrt(2)) exceeds mean + t with probability
  // exp(-t / b) / 2; the maximum of N draws is Gumbel-distributed with mode b * ln(N / 2).
  const double scale = chance.sd / std::numbers::sqrt2;
  const double n = static_cast<double>(chance.population);
  return chance.mean + scale * std::log(std::max(1.0, n / 2));
}

bool BestIsEvidence(double best, double floor, const ChanceLevel& chance) {
  return best > floor && (chance.mean > floor || best > ChanceMaximum(chance));
}

}  // namespace strata::vector
