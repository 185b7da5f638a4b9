#pragma once
// Random unit vectors for the vector tests: directions uniform on the sphere (normal
// coordinates, normalized), from a seeded generator.

#include <cmath>
#include <cstddef>
#include <random>
#include <vector>

namespace strata::testing {

// `n` random unit vectors of `dim` floats each, one after another.
inline std::vector<float> RandomUnitVectors(std::mt19937_64& rng, size_t n, size_t dim) {
  std::normal_distribution<float> normal;
  std::vector<float> out(n * dim);
  for (size_t i = 0; i < n; ++i) {
    float* v = out.data() + i * dim;
    double norm = 0;
    for (size_t d = 0; d < dim; ++d) {
      v[d] = normal(rng);
      norm += double{v[d]} * v[d];
    }
    for (size_t d = 0; d < dim; ++d) v[d] = static_cast<float>(v[d] / std::sqrt(norm));
  }
  return out;
}

// One random unit vector of `dim` floats.
inline std::vector<float> RandomUnit(std::mt19937_64& rng, size_t dim) {
  return RandomUnitVectors(rng, 1, dim);
}

}  // namespace strata::testing
