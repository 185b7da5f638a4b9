#include "embed/bert/encoder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "embed/bert/lanes.h"
#include "util/status_macros.h"

namespace strata::embed::bert {
namespace {

// Where one text's tokens sit in the stacked matrix.
struct Span {
  int begin = 0;
  int length = 0;
};

// Each row of x[rows x width] normalized to mean 0 and variance 1, then scaled and shifted.
void LayerNorm(float* x, int rows, int width, const float* weight, const float* bias, float eps) {
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<long>(r) * width;
    const float mean = SumOf(row, width) / static_cast<float>(width);
    const float variance = SumOf(row, width, [mean](float v) { return (v - mean) * (v - mean); }) /
                           static_cast<float>(width);
    const float inverse = 1.0f / std::sqrt(variance + eps);
    for (int i = 0; i < width; ++i) row[i] = (row[i] - mean) * inverse * weight[i] + bias[i];
  }
}

void AddBias(float* x, int rows, int width, const float* bias) {
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<long>(r) * width;
    for (int i = 0; i < width; ++i) row[i] += bias[i];
  }
}

// residual += x + bias, row by row: the sublayer's output joins the stream it came from.
void AddBiasResidual(const float* x, int rows, int width, const float* bias, float* residual) {
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<long>(r) * width;
    float* out = residual + static_cast<long>(r) * width;
    for (int i = 0; i < width; ++i) out[i] += in[i] + bias[i];
  }
}

// e^x for x <= 0 (softmax and erf need no more), to about 2e-7 relative: 2^n * e^r with
// r = x - n ln 2 in [-ln2/2, ln2/2] and a degree-7 Taylor polynomial for e^r. Written without
// calls or branches so loops over it vectorize (libm's expf and erff were a fifth of a pass).
inline float ExpNonPositive(float x) {
  x = std::max(x, -87.0f);  // e^-87 is near FLT_MIN; below, 2^n would leave the normals.
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f;  // ln 2 split so n * kLn2High is exact.
  constexpr float kLn2Low = -2.12194440e-4f;
  // Adding and subtracting 1.5 * 2^23 rounds to the nearest integer (no call, unlike rint).
  constexpr float kRound = 12582912.0f;
  const float n = (x * kLog2e + kRound) - kRound;
  const float r = (x - n * kLn2High) - n * kLn2Low;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t scale = (static_cast<int32_t>(n) + 127) << 23;
  return p * std::bit_cast<float>(scale);
}

// erf(x) to 1.5e-7 absolute: Abramowitz and Stegun 7.1.26, with erf(-x) = -erf(x).
inline float Erf(float x) {
  const float a = std::abs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float y = 1.0f - p * t * ExpNonPositive(-a * a);
  return std::copysign(y, x);
}

// GELU as BERT defines it, with erf (not the tanh approximation), after adding the bias.
void BiasGelu(float* x, int rows, int width, const float* bias) {
  constexpr float kInverseSqrt2 = 0.70710678118654752f;
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<long>(r) * width;
    for (int i = 0; i < width; ++i) {
      const float v = row[i] + bias[i];
      row[i] = 0.5f * v * (1.0f + Erf(v * kInverseSqrt2));
    }
  }
}

void SoftmaxRows(float* x, int rows, int width) {
  for (int r = 0; r < rows; ++r) {
    float* row = x + static_cast<long>(r) * width;
    const float top = RangeOf(row, width).high;
    for (int i = 0; i < width; ++i) row[i] = ExpNonPositive(row[i] - top);
    const float inverse = 1.0f / SumOf(row, width);
    for (int i = 0; i < width; ++i) row[i] *= inverse;
  }
}

// Activations of a forward pass (encoder.cc's Forward), reused by the next pass on the thread.
struct Scratch {
  std::vector<float> x, qkv, context, sub, up, scores;
  std::vector<float> kt;  // A head's keys transposed (AttentionScores).
};

// v's memory, grown to hold at least n floats (never shrunk: the largest pass sets it).
float* Sized(std::vector<float>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// The [rows x cols] matrix `w` as its transpose [cols x rows], in its own memory.
FloatTensor Transposed(const FloatTensor& w) {
  const int64_t rows = w.shape()[0];
  const int64_t cols = w.shape()[1];
  std::vector<float> t(w.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = w.data()[r * cols + c];
  }
  return FloatTensor::Own({cols, rows}, std::move(t));
}

}  // namespace

BertEncoder::BertEncoder(BertConfig config, std::unique_ptr<SafetensorsFile> file,
                         BertWeights weights, std::vector<FusedQkv> qkv, EncoderOptions options)
    : config_(config),
      file_(std::move(file)),
      weights_(std::move(weights)),
      qkv_(std::move(qkv)),
      options_(options) {}

// The query, key and value weights of `layer` stacked into one matrix, and their biases; the
// three are dropped from `layer` (nothing reads them again).
BertEncoder::FusedQkv BertEncoder::FuseQkv(BertLayerWeights& layer) {
  std::vector<float> weight;
  std::vector<float> bias;
  for (FloatTensor* w : {&layer.query_weight, &layer.key_weight, &layer.value_weight}) {
    weight.insert(weight.end(), w->values().begin(), w->values().end());
    *w = FloatTensor();
  }
  for (FloatTensor* b : {&layer.query_bias, &layer.key_bias, &layer.value_bias}) {
    bias.insert(bias.end(), b->values().begin(), b->values().end());
    *b = FloatTensor();
  }
  const int64_t hidden = static_cast<int64_t>(bias.size() / 3);
  return {.weight = FloatTensor::Own({3 * hidden, hidden}, std::move(weight)),
          .bias = std::move(bias)};
}

absl::StatusOr<std::unique_ptr<BertEncoder>> BertEncoder::Open(const std::filesystem::path& dir,
                                                               EncoderOptions options) {
  ASSIGN_OR_RETURN(BertConfig config, ReadBertConfig(dir));
  ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                   SafetensorsFile::Open((dir / "model.safetensors").string()));
  ASSIGN_OR_RETURN(BertWeights weights, LoadBertWeights(*file, config));
  std::vector<FusedQkv> qkv;
  for (BertLayerWeights& l : weights.layers) qkv.push_back(FuseQkv(l));
  // Quantized from the weights as torch keeps them, before the portable backend's transpose.
  std::vector<Int8Layer> int8_layers;
  if (options.int8) {
    for (size_t i = 0; i < weights.layers.size(); ++i) {
      const BertLayerWeights& l = weights.layers[i];
      int8_layers.push_back({.qkv = QuantizeRows(qkv[i].weight),
                             .attention_output = QuantizeRows(l.attention_output_weight),
                             .intermediate = QuantizeRows(l.intermediate_weight),
                             .output = QuantizeRows(l.output_weight)});
    }
  }
  if (!BlasAvailable() && options.gemm == GemmBackend::kBlas) {
    options.gemm = GemmBackend::kPortable;
  }
  if (options.gemm == GemmBackend::kPortable) {
    // The portable kernel runs twice as fast over rows of B as over dot products with them.
    for (size_t i = 0; i < weights.layers.size(); ++i) {
      BertLayerWeights& l = weights.layers[i];
      for (FloatTensor* w :
           {&qkv[i].weight, &l.attention_output_weight, &l.intermediate_weight, &l.output_weight}) {
        *w = Transposed(*w);
      }
    }
  }
  std::vector<PackedLayer> packed_layers;
  if (options.gemm == GemmBackend::kPacked) {
    for (size_t i = 0; i < weights.layers.size(); ++i) {
      const BertLayerWeights& l = weights.layers[i];
      packed_layers.push_back({.qkv = PackRows(qkv[i].weight),
                               .attention_output = PackRows(l.attention_output_weight),
                               .intermediate = PackRows(l.intermediate_weight),
                               .output = PackRows(l.output_weight)});
      qkv[i].weight = FloatTensor();  // Only its packed form is read.
    }
  }
  std::unique_ptr<BertEncoder> encoder(
      new BertEncoder(config, std::move(file), std::move(weights), std::move(qkv), options));
  encoder->packed_layers_ = std::move(packed_layers);
  encoder->weights_hash_ = encoder->file_->ContentHash();
  if (options.int8) encoder->TryInt8(std::move(int8_layers));
  return encoder;
}

void BertEncoder::TryInt8(std::vector<Int8Layer> layers) {
  // Probe texts of several lengths, ids spread over the vocabulary.
  std::vector<std::vector<int32_t>> probe;
  for (int length : {4, 12, 30, 64}) {
    std::vector<int32_t>& ids = probe.emplace_back();
    for (int i = 0; i < std::min(length, config_.max_seq_length); ++i) {
      ids.push_back(static_cast<int32_t>((static_cast<int64_t>(i + 1) * 7919 + length * 104729) %
                                         config_.vocab_size));
    }
  }
  const std::vector<float> reference = *Encode(probe);
  int8_layers_ = std::move(layers);
  int8_ = true;
  const std::vector<float> quantized = *Encode(probe);
  const int dim = dimension();
  double worst = 1.0;
  for (size_t t = 0; t < probe.size(); ++t) {
    double dot = 0;
    for (int i = 0; i < dim; ++i) dot += double{reference[t * dim + i]} * quantized[t * dim + i];
    worst = std::min(worst, dot);  // Both are unit vectors.
  }
  int8_probe_cosine_ = worst;
  if (worst < options_.int8_min_cosine) {
    int8_ = false;
    int8_layers_.clear();
  } else {
    packed_layers_.clear();  // Encode reads the int8 weights from now on.
  }
}

absl::StatusOr<std::vector<float>> BertEncoder::Encode(
    std::span<const std::vector<int32_t>> texts) const {
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::vector<int32_t>& ids = texts[t];
    if (ids.empty()) return absl::InvalidArgumentError(absl::StrCat("text ", t, " has no tokens"));
    if (ids.size() > static_cast<size_t>(config_.max_seq_length)) {
      return absl::InvalidArgumentError(
          absl::StrCat("text ", t, " has ", ids.size(), " tokens, over the model's max_seq_length ",
                       config_.max_seq_length, " (truncate it when tokenizing)"));
    }
    for (size_t p = 0; p < ids.size(); ++p) {
      if (ids[p] < 0 || ids[p] >= config_.vocab_size) {
        return absl::InvalidArgumentError(
            absl::StrCat("text ", t, ": token id ", ids[p], " at position ", p,
                         " is outside the vocabulary [0, ", config_.vocab_size, ")"));
      }
    }
  }
  std::vector<float> out(texts.size() * config_.hidden_size);
  // Texts go through in passes of at most kPassTokens tokens (a longer text alone): in
  // larger passes the activations fall out of cache and a text costs more, not less
  // (bert_benchmark, 16 texts of 100 tokens: one pass 20-25 ms a text in fp32, 16-21 in
  // int8; passes of 128 tokens 18-19 and 13).
  size_t begin = 0;
  while (begin < texts.size()) {
    size_t end = begin;
    int tokens = 0;
    while (end < texts.size() &&
           (end == begin || tokens + static_cast<int>(texts[end].size()) <= kPassTokens)) {
      tokens += static_cast<int>(texts[end].size());
      ++end;
    }
    Forward(texts.subspan(begin, end - begin), out.data() + begin * config_.hidden_size);
    begin = end;
  }
  return out;
}

void BertEncoder::Forward(std::span<const std::vector<int32_t>> texts, float* out) const {
  const int hidden = config_.hidden_size;
  const int heads = config_.num_heads;
  const int head_size = hidden / heads;
  const int inner = config_.intermediate_size;

  std::vector<Span> spans;
  spans.reserve(texts.size());
  int total = 0;
  int longest = 0;
  for (const std::vector<int32_t>& ids : texts) {
    spans.push_back({.begin = total, .length = static_cast<int>(ids.size())});
    total += static_cast<int>(ids.size());
    longest = std::max(longest, static_cast<int>(ids.size()));
  }

  // A thread's activations stay allocated between passes: fresh ones (several hundred KB,
  // from the kernel, zeroed) cost a tenth of a pass in page faults.
  thread_local Scratch scratch;
  const size_t cells = static_cast<size_t>(total) * hidden;
  // The residual stream, one row per token of every text.
  float* x = Sized(scratch.x, cells);
  const float* type0 = weights_.token_type_embeddings.data();
  for (size_t t = 0; t < texts.size(); ++t) {
    for (int p = 0; p < spans[t].length; ++p) {
      float* row = x + static_cast<size_t>(spans[t].begin + p) * hidden;
      const float* word =
          weights_.word_embeddings.data() + static_cast<size_t>(texts[t][p]) * hidden;
      const float* position = weights_.position_embeddings.data() + static_cast<size_t>(p) * hidden;
      for (int i = 0; i < hidden; ++i) row[i] = word[i] + position[i] + type0[i];
    }
  }
  LayerNorm(x, total, hidden, weights_.embedding_norm_weight.data(),
            weights_.embedding_norm_bias.data(), config_.layer_norm_eps);

  float* qkv = Sized(scratch.qkv, cells * 3);
  float* context = Sized(scratch.context, cells);
  float* sub = Sized(scratch.sub, cells);
  float* up = Sized(scratch.up, static_cast<size_t>(total) * inner);
  float* scores = Sized(scratch.scores, static_cast<size_t>(longest) * longest);
  const GemmBackend gemm = options_.gemm;
  // out[total x n] = in[total x width] * weight^T, weight [n x width] as torch keeps it, or
  // its transpose [width x n] for the portable kernel.
  const bool transposed = gemm == GemmBackend::kPortable;
  auto linear = [&](const float* in, int width, const FloatTensor& weight, const Int8Matrix* q,
                    const PackedMatrix* packed, int n, float* result) {
    if (q != nullptr) {
      Int8Linear(in, total, *q, result);
      return;
    }
    if (packed != nullptr) {
      PackedLinear(in, total, *packed, result);
      return;
    }
    Gemm(gemm, /*transpose_b=*/!transposed, total, n, width, 1.0f, in, width, weight.data(),
         transposed ? n : width, 0.0f, result, n);
  };
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  const int qkv_width = 3 * hidden;

  for (size_t l = 0; l < weights_.layers.size(); ++l) {
    const BertLayerWeights& layer = weights_.layers[l];
    const Int8Layer* quantized = int8_ ? &int8_layers_[l] : nullptr;
    // The int8 form of a weight, or null to run it in fp32.
    auto int8_of = [quantized](const Int8Matrix Int8Layer::*member) {
      return quantized != nullptr ? &(quantized->*member) : nullptr;
    };
    // The packed form of a weight, or null for Gemm.
    const PackedLayer* packed = packed_layers_.empty() ? nullptr : &packed_layers_[l];
    auto packed_of = [packed](const PackedMatrix PackedLayer::*member) {
      return packed != nullptr ? &(packed->*member) : nullptr;
    };
    // Each token's row of qkv: its query, then its key, then its value.
    linear(x, hidden, qkv_[l].weight, int8_of(&Int8Layer::qkv), packed_of(&PackedLayer::qkv),
           qkv_width, qkv);
    AddBias(qkv, total, qkv_width, qkv_[l].bias.data());
    for (const Span& span : spans) {
      const float* rows = qkv + static_cast<size_t>(span.begin) * qkv_width;
      for (int h = 0; h < heads; ++h) {
        const float* query = rows + static_cast<size_t>(h) * head_size;
        float* head_context = context + static_cast<size_t>(span.begin) * hidden + h * head_size;
        if (gemm == GemmBackend::kPacked) {
          AttentionScores(query, query + hidden, qkv_width, span.length, head_size, scale, scores,
                          span.length, scratch.kt);
        } else {
          Gemm(gemm, /*transpose_b=*/true, span.length, span.length, head_size, scale, query,
               qkv_width, query + hidden, qkv_width, 0.0f, scores, span.length);
        }
        SoftmaxRows(scores, span.length, span.length);
        if (gemm == GemmBackend::kPacked) {
          AttentionContext(scores, span.length, query + 2 * hidden, qkv_width, span.length,
                           head_size, head_context, hidden);
        } else {
          Gemm(gemm, /*transpose_b=*/false, span.length, head_size, span.length, 1.0f, scores,
               span.length, query + 2 * hidden, qkv_width, 0.0f, head_context, hidden);
        }
      }
    }
    linear(context, hidden, layer.attention_output_weight, int8_of(&Int8Layer::attention_output),
           packed_of(&PackedLayer::attention_output), hidden, sub);
    AddBiasResidual(sub, total, hidden, layer.attention_output_bias.data(), x);
    LayerNorm(x, total, hidden, layer.attention_norm_weight.data(),
              layer.attention_norm_bias.data(), config_.layer_norm_eps);

    linear(x, hidden, layer.intermediate_weight, int8_of(&Int8Layer::intermediate),
           packed_of(&PackedLayer::intermediate), inner, up);
    BiasGelu(up, total, inner, layer.intermediate_bias.data());
    linear(up, inner, layer.output_weight, int8_of(&Int8Layer::output),
           packed_of(&PackedLayer::output), hidden, sub);
    AddBiasResidual(sub, total, hidden, layer.output_bias.data(), x);
    LayerNorm(x, total, hidden, layer.output_norm_weight.data(), layer.output_norm_bias.data(),
              config_.layer_norm_eps);
  }

  for (size_t t = 0; t < texts.size(); ++t) {
    float* pooled = out + t * hidden;
    const float* first = x + static_cast<size_t>(spans[t].begin) * hidden;
    if (config_.pooling == Pooling::kCls) {
      std::copy(first, first + hidden, pooled);
    } else {
      for (int p = 0; p < spans[t].length; ++p) {
        const float* row = first + static_cast<size_t>(p) * hidden;
        for (int i = 0; i < hidden; ++i) pooled[i] += row[i];
      }
      for (int i = 0; i < hidden; ++i) pooled[i] /= static_cast<float>(spans[t].length);
    }
    double norm = 0;
    for (int i = 0; i < hidden; ++i) norm += static_cast<double>(pooled[i]) * pooled[i];
    if (norm > 0) {
      const float inverse = static_cast<float>(1.0 / std::sqrt(norm));
      for (int i = 0; i < hidden; ++i) pooled[i] *= inverse;
    }
  }
}

}  // namespace strata::embed::bert
