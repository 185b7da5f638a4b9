// Filtered dense search two ways, on one synthetic corpus: over-fetch then filter (what
// strata does with Debian's hnswlib 0.6.2, which has no filter in searchKnn) against a filter
// functor inside the graph walk (hnswlib 0.8's BaseFilterFunctor). Built twice by run.sh, once
// against each hnswlib; STRATA_FILTER_FUNCTOR selects the second way. Prints, per share of
// labels passing the filter, the mean microseconds a query and recall@10 against an exact
// filtered scan. Standalone: links nothing of strata's.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "hnswlib/hnswlib.h"

namespace {

// strata's graph parameters (src/vector/hnsw_index.h) and dense over-fetch (src/recall).
constexpr size_t kM = 24;
constexpr size_t kEfConstruction = 120;
constexpr size_t kEf = 300;
constexpr size_t kOverFetch = 4;
constexpr size_t kMinIndexFetch = 40;
constexpr size_t kMaxIndexFetch = 4096;
constexpr size_t kLimit = 10;

bool Passes(size_t label, int percent) {
  return (label * 2654435761u >> 7) % 100 < static_cast<size_t>(percent);
}

#ifdef STRATA_FILTER_FUNCTOR
class PercentFilter : public hnswlib::BaseFilterFunctor {
 public:
  explicit PercentFilter(int percent) : percent_(percent) {}
  bool operator()(hnswlib::labeltype label) override { return Passes(label, percent_); }

 private:
  int percent_;
};
#endif

float Dot(const float* a, const float* b, size_t dim) {
  float s = 0;
  for (size_t i = 0; i < dim; ++i) s += a[i] * b[i];
  return s;
}

// The exact filtered top kLimit by inner product.
std::vector<size_t> Exact(const std::vector<float>& data, size_t dim, const float* q,
                          int percent) {
  std::vector<std::pair<float, size_t>> scored;
  const size_t n = data.size() / dim;
  for (size_t i = 0; i < n; ++i) {
    if (Passes(i, percent)) scored.push_back({Dot(&data[i * dim], q, dim), i});
  }
  const size_t top = std::min(kLimit, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + top, scored.end(),
                    [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<size_t> out;
  for (size_t i = 0; i < top; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000;
  const size_t dim = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 384;
  // The search-time candidate list length; strata's by default.
  const size_t ef = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : kEf;
  const size_t queries = 200;
  // Clustered unit vectors: 200 centres, each point a centre plus noise.
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal;
  auto unit = [&](std::vector<float>& v) {
    float norm = std::sqrt(Dot(v.data(), v.data(), v.size()));
    for (float& x : v) x /= norm;
  };
  std::vector<std::vector<float>> centres(200, std::vector<float>(dim));
  for (auto& c : centres) {
    for (float& x : c) x = normal(rng);
    unit(c);
  }
  std::vector<float> data(n * dim);
  for (size_t i = 0; i < n; ++i) {
    std::vector<float> v(dim);
    const auto& c = centres[rng() % centres.size()];
    for (size_t d = 0; d < dim; ++d) v[d] = c[d] + 0.08f * normal(rng);
    unit(v);
    std::copy(v.begin(), v.end(), data.begin() + i * dim);
  }
  hnswlib::InnerProductSpace space(dim);
  hnswlib::HierarchicalNSW<float> graph(&space, n, kM, kEfConstruction);
  const auto build_start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < n; i += 2) graph.addPoint(&data[i * dim], i);
    });
  }
  for (auto& t : threads) t.join();
  graph.setEf(ef);
  std::printf("built %zu x %zu in %.1f s, ef %zu\n", n, dim, ef,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start)
                  .count());

  std::vector<std::vector<float>> qs;
  for (size_t i = 0; i < queries; ++i) {
    std::vector<float> q(dim);
    const auto& c = centres[rng() % centres.size()];
    for (size_t d = 0; d < dim; ++d) q[d] = c[d] + 0.1f * normal(rng);
    unit(q);
    qs.push_back(std::move(q));
  }
  for (int percent : {50, 10, 3, 1}) {
    double micros = 0;
    size_t found = 0, expected = 0, exact_scans = 0;
    for (const auto& q : qs) {
      const std::vector<size_t> truth = Exact(data, dim, q.data(), percent);
      const auto start = std::chrono::steady_clock::now();
      std::vector<size_t> got;
#ifdef STRATA_FILTER_FUNCTOR
      PercentFilter filter(percent);
      auto heap = graph.searchKnn(q.data(), kLimit, &filter);
      while (!heap.empty()) {
        got.push_back(heap.top().second);
        heap.pop();
      }
#else
      size_t k = kMinIndexFetch;
      while (true) {
        got.clear();
        auto heap = graph.searchKnn(q.data(), k);
        std::vector<std::pair<float, size_t>> hits;
        while (!heap.empty()) {
          hits.push_back({heap.top().first, heap.top().second});
          heap.pop();
        }
        for (auto it = hits.rbegin(); it != hits.rend() && got.size() < kLimit; ++it) {
          if (Passes(it->second, percent)) got.push_back(it->second);
        }
        if (got.size() >= kLimit) break;
        k *= kOverFetch;
        if (k > kMaxIndexFetch) {  // strata scores every row in scope instead.
          got = Exact(data, dim, q.data(), percent);
          ++exact_scans;
          break;
        }
      }
#endif
      micros += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                    .count();
      for (size_t label : truth) {
        found += std::find(got.begin(), got.end(), label) != got.end();
      }
      expected += truth.size();
    }
    std::printf("filter %3d%%: %8.1f us/query  recall@10 %.3f  exact scans %zu/%zu\n", percent,
                micros / queries, double(found) / double(expected), exact_scans, queries);
  }
  return 0;
}
