// The BERT forward pass at the MiniLM-L6 shape (vocab 30522, hidden 384, 6 layers, 12 heads,
// intermediate 1536) with random weights written to a temporary directory: time per text
// alone at 12, 30, 100 and 128 tokens, and per text when 16 texts are encoded in one call
// (in passes of up to BertEncoder's 128 tokens). fp32 through each GEMM backend, and int8
// Linear layers, one thread. Beside the speed, how far a batched text strays from the same
// text alone (max_diff_vs_alone: 0 where each output row is computed alike whatever the batch,
// as the packed and int8 kernels do; fp32 rounding, some 1e-5, through OpenBLAS). Run: meson
// test -C build --benchmark bert, or build/benchmark/bert/bert_benchmark.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "embed/bert/encoder.h"
#include "embed/bert/int8.h"
#include "embed/bert/safetensors.h"
#include "testing/bert_model.h"

namespace strata::embed::bert {
namespace {

// The model directory, written once and removed at exit.
class MiniLmModel {
 public:
  MiniLmModel() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "strata-bert-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    dir_ = pattern;
    strata::testing::WriteBertModel(dir_, {.shape = {.vocab_size = 30522,
                                                     .hidden_size = 384,
                                                     .num_layers = 6,
                                                     .num_heads = 12,
                                                     .intermediate_size = 1536,
                                                     .max_positions = 512},
                                           .seed = 7});
  }
  ~MiniLmModel() { std::filesystem::remove_all(dir_); }

  const std::filesystem::path& dir() const { return dir_; }

  const BertEncoder& Encoder(GemmBackend backend, bool int8) {
    std::unique_ptr<BertEncoder>& e = encoders_[static_cast<int>(backend) * 2 + (int8 ? 1 : 0)];
    if (e == nullptr) {
      // Random weights make a chaotic model (saturated softmax: a small change flips which
      // token a head attends to), so int8 fails its self-check here, where a trained model
      // passes; it is forced on to time it, and int8_probe_cosine reports what the check saw.
      e = std::move(BertEncoder::Open(dir_, {.gemm = backend, .int8 = int8, .int8_min_cosine = -1}))
              .value();
    }
    return *e;
  }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<BertEncoder> encoders_[6];
};

MiniLmModel& Model() {
  static MiniLmModel model;
  return model;
}

std::vector<std::vector<int32_t>> Texts(int count, int tokens) {
  strata::testing::SplitMix64 rng(11);
  std::vector<std::vector<int32_t>> texts(count);
  for (auto& ids : texts) {
    ids.push_back(101);  // [CLS]
    for (int i = 2; i < tokens; ++i) ids.push_back(1000 + static_cast<int32_t>(rng.Next() % 29000));
    ids.push_back(102);  // [SEP]
  }
  return texts;
}

// range(0): texts per pass; range(1): tokens per text; range(2): the GemmBackend (0 OpenBLAS,
// 1 portable, 2 packed weights with the AVX-512 kernel);
// range(3): 1 for int8 Linear layers.
void BM_BertEncode(benchmark::State& state) {
  const auto backend = static_cast<GemmBackend>(state.range(2));
  if (backend == GemmBackend::kBlas && !BlasAvailable()) {
    state.SkipWithError("built without OpenBLAS");
    return;
  }
  if (backend == GemmBackend::kPacked && !PackedKernelAvailable()) {
    state.SkipWithError("no AVX-512 on this CPU");
    return;
  }
  const BertEncoder& encoder = Model().Encoder(backend, state.range(3) == 1);
  const auto texts = Texts(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const std::vector<float> packed = *encoder.Encode(texts);
  double max_diff = 0;
  const int dim = encoder.dimension();
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::vector<float> alone = *encoder.Encode(std::span(&texts[t], 1));
    for (int i = 0; i < dim; ++i) {
      max_diff = std::max(max_diff, std::abs(double{alone[i]} - packed[t * dim + i]));
    }
  }
  for (auto _ : state) benchmark::DoNotOptimize(encoder.Encode(texts));
  state.counters["ms_per_text"] = benchmark::Counter(
      static_cast<double>(texts.size()) / 1000.0,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["max_diff_vs_alone"] = max_diff;
  if (state.range(3) == 1) {
    state.counters["int8_probe_cosine"] = encoder.int8_probe_cosine();
  }
}
BENCHMARK(BM_BertEncode)
    ->ArgNames({"texts", "tokens", "gemm", "int8"})
    ->Args({1, 12, 2, 0})
    ->Args({1, 30, 2, 0})
    ->Args({1, 128, 2, 0})
    ->Args({16, 30, 2, 0})
    ->Args({1, 12, 0, 0})
    ->Args({1, 30, 0, 0})
    ->Args({1, 128, 0, 0})
    ->Args({16, 30, 0, 0})
    ->Args({1, 30, 1, 0})
    ->Args({16, 30, 1, 0})
    ->Args({1, 12, 2, 1})
    ->Args({1, 30, 2, 1})
    ->Args({1, 128, 2, 1})
    ->Args({16, 30, 2, 1})
    ->Args({1, 100, 2, 0})
    ->Args({16, 100, 2, 0})
    ->Args({1, 100, 2, 1})
    ->Args({16, 100, 2, 1})
    ->Unit(benchmark::kMillisecond);

// SafetensorsFile::ContentHash over the MiniLM-shape weights (90 MB, F32), the fingerprint's
// cost at load; the file is in the page cache after the first iteration.
void BM_ContentHash(benchmark::State& state) {
  const auto file = SafetensorsFile::Open((Model().dir() / "model.safetensors").string());
  if (!file.ok()) {
    state.SkipWithError(std::string(file.status().message()).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize((*file)->ContentHash());
  state.counters["MB"] =
      static_cast<double>(std::filesystem::file_size(Model().dir() / "model.safetensors")) / 1e6;
}
BENCHMARK(BM_ContentHash)->Unit(benchmark::kMillisecond);

// One int8 Linear layer alone, per kernel: range(0) token rows, range(1) input columns,
// range(2) outputs, range(3) the Int8Kernel (0 portable, 1 AVX2, 2 AVX-VNNI, 3 AVX-512 VNNI).
// Reports GMAC/s.
void BM_Int8Linear(benchmark::State& state) {
  const auto kernel = static_cast<Int8Kernel>(state.range(3));
  if (!Int8KernelAvailable(kernel)) {
    state.SkipWithError("kernel not available on this CPU");
    return;
  }
  const int rows = static_cast<int>(state.range(0));
  const int cols = static_cast<int>(state.range(1));
  const int outputs = static_cast<int>(state.range(2));
  strata::testing::SplitMix64 rng(3);
  auto uniform = [&rng](int count) {
    std::vector<float> v(count);
    for (float& x : v) x = static_cast<float>(rng.Next() % 2001) / 1000.0f - 1.0f;
    return v;
  };
  const std::vector<float> in = uniform(rows * cols);
  const std::vector<float> weight = uniform(outputs * cols);
  const Int8Matrix w = QuantizeRows(FloatTensor::View({outputs, cols}, weight.data()));
  std::vector<float> out(static_cast<size_t>(rows) * outputs);
  for (auto _ : state) {
    Int8Linear(in.data(), rows, w, out.data(), kernel);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GMAC_per_s"] =
      benchmark::Counter(static_cast<double>(rows) * cols * outputs / 1e9,
                         benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Int8Linear)
    ->ArgNames({"rows", "cols", "outputs", "kernel"})
    ->ArgsProduct({{100}, {384}, {1536}, {0, 1, 2, 3}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata::embed::bert

BENCHMARK_MAIN();
