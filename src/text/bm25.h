#pragma once
// Okapi BM25 as the keyword index scores a match on either store: FTS5's bm25() form (its IDF,
// k1 and b), computed by strata_bm25 on SQLite (fts5_extensions.h) and by the PostgreSQL
// index (pg_keyword_index.h) from the same counts, so both give the same double.

#include <cmath>
#include <cstdint>
#include <span>

namespace strata::text {

inline constexpr double kBm25K1 = 1.2;
inline constexpr double kBm25B = 0.75;

// The IDF of a phrase in `matching` of `rows` indexed rows. A phrase in more than half the
// rows would have a negative IDF: it counts for (almost) nothing instead.
inline double Bm25Idf(int64_t rows, int64_t matching) {
  const double idf = std::log((rows - matching + 0.5) / (matching + 0.5));
  return idf > 0.0 ? idf : 1e-6;
}

// A row's score (higher is better): `freq[p]` is phrase p's column-weighted count of
// instances in the row, `length` the row's tokens in all columns, `mean_length` the
// index's tokens per row.
inline double Bm25Score(std::span<const double> idf, std::span<const double> freq, int64_t length,
                        double mean_length) {
  double score = 0.0;
  const double norm = 1 - kBm25B + kBm25B * static_cast<double>(length) / mean_length;
  for (size_t p = 0; p < idf.size(); ++p) {
    const double f = freq[p];
    score += idf[p] * ((f * (kBm25K1 + 1.0)) / (f + kBm25K1 * norm));
  }
  return score;
}

}  // namespace strata::text
