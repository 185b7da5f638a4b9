#pragma once
// The BERT forward pass in fp32 (or int8 Linear layers): token ids in, one pooled unit vector
// per text out. Texts run in passes of up to kPassTokens tokens without padding: a pass's
// tokens are stacked into one matrix so every dense layer is one matrix product, and
// attention stays inside each text.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/bert/config.h"
#include "embed/bert/gemm.h"
#include "embed/bert/int8.h"
#include "embed/bert/safetensors.h"

namespace strata::embed::bert {

struct EncoderOptions {
  // Tests run each; kBlas means kPortable in a build without OpenBLAS. kPortable keeps
  // transposed copies of the Linear weights (its kernel is faster on them) and kPacked
  // packed ones (gemm.h) instead of reading them from the mapping.
  GemmBackend gemm = DefaultGemmBackend();
  // Run the Linear layers in int8 (int8.h) if, on a fixed probe set, every vector keeps a
  // cosine of at least int8_min_cosine with fp32's; else stay in fp32.
  bool int8 = false;
  double int8_min_cosine = 0.99;
};

// Thread safety: immutable after Open; Encode may run on several threads at once (each call
// has its own scratch).
class BertEncoder {
 public:
  // Loads the model in `dir` (config.h says which files and what is accepted; the weights
  // are model.safetensors, mmapped). Errors: those of ReadBertConfig, SafetensorsFile::Open
  // and LoadBertWeights.
  static absl::StatusOr<std::unique_ptr<BertEncoder>> Open(const std::filesystem::path& dir,
                                                           EncoderOptions options = {});

  const BertConfig& config() const { return config_; }
  int dimension() const { return config_.hidden_size; }
  // Whether the Linear layers run in int8 (asked for, and the self-check held).
  bool int8() const { return int8_; }
  // The lowest probe cosine between int8 and fp32 vectors; 1 when int8 was not asked for.
  double int8_probe_cosine() const { return int8_probe_cosine_; }
  // SafetensorsFile::ContentHash of the weights, computed at Open.
  uint64_t weights_hash() const { return weights_hash_; }

  // texts.size() * dimension() floats: for each text (its token ids, special tokens
  // included, all of token type 0) the mean of its last hidden states or its first one (the
  // model's pooling), L2-normalized. Longer texts are refused, not truncated: truncating is
  // the tokenizer's part. Errors: InvalidArgument for a text with no tokens, more than
  // config().max_seq_length tokens, or a token id outside the vocabulary.
  absl::StatusOr<std::vector<float>> Encode(std::span<const std::vector<int32_t>> texts) const;

 private:
  // A layer's query, key and value projections as one [3 hidden x hidden] Linear (rows in
  // that order), so that one matrix product makes all three.
  struct FusedQkv {
    // Transposed for the portable kernel, as the other weights are; empty with kPacked.
    FloatTensor weight;
    std::vector<float> bias;
  };
  // Moves `layer`'s query, key and value weights and biases into one FusedQkv.
  static FusedQkv FuseQkv(BertLayerWeights& layer);

  struct Int8Layer {
    Int8Matrix qkv, attention_output, intermediate, output;
  };
  struct PackedLayer {
    PackedMatrix qkv, attention_output, intermediate, output;
  };

  BertEncoder(BertConfig config, std::unique_ptr<SafetensorsFile> file, BertWeights weights,
              std::vector<FusedQkv> qkv, EncoderOptions options);
  // Tokens a forward pass takes at most (a longer text takes one alone).
  static constexpr int kPassTokens = 128;

  // The pooled unit vectors of `texts` (checked by Encode) into out[texts.size() x hidden],
  // in one pass.
  void Forward(std::span<const std::vector<int32_t>> texts, float* out) const;
  // Keeps the int8 `layers` if the probe set's vectors hold up against fp32's.
  void TryInt8(std::vector<Int8Layer> layers);

  BertConfig config_;
  std::unique_ptr<SafetensorsFile> file_;  // Mapped for as long as weights_ view it.
  BertWeights weights_;
  std::vector<FusedQkv> qkv_;  // One per layer.
  // One per layer with GemmBackend::kPacked, unless int8_.
  std::vector<PackedLayer> packed_layers_;
  EncoderOptions options_;
  std::vector<Int8Layer> int8_layers_;  // Empty unless int8_.
  bool int8_ = false;
  double int8_probe_cosine_ = 1.0;
  uint64_t weights_hash_ = 0;
};

}  // namespace strata::embed::bert
