#pragma once
// The BERT forward pass in fp32: token ids in, one pooled unit vector per text out. Several
// texts run as one pass without padding: their tokens are stacked into one matrix so every
// dense layer is one matrix product, and attention stays inside each text.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/bert/config.h"
#include "embed/bert/gemm.h"
#include "embed/bert/safetensors.h"

namespace strata::embed::bert {

struct EncoderOptions {
  // Tests run both; kBlas means kPortable in a build without OpenBLAS. kPortable keeps
  // transposed copies of the Linear weights (its kernel is faster on them) instead of
  // reading them from the mapping.
  GemmBackend gemm = DefaultGemmBackend();
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

  // texts.size() * dimension() floats: for each text (its token ids, special tokens
  // included, all of token type 0) the mean of its last hidden states or its first one (the
  // model's pooling), L2-normalized. Longer texts are refused, not truncated: truncating is
  // the tokenizer's part. Errors: InvalidArgument for a text with no tokens, more than
  // config().max_seq_length tokens, or a token id outside the vocabulary.
  absl::StatusOr<std::vector<float>> Encode(std::span<const std::vector<int32_t>> texts) const;

 private:
  BertEncoder(BertConfig config, std::unique_ptr<SafetensorsFile> file, BertWeights weights,
              EncoderOptions options);

  BertConfig config_;
  std::unique_ptr<SafetensorsFile> file_;  // Mapped for as long as weights_ view it.
  BertWeights weights_;
  EncoderOptions options_;
};

}  // namespace strata::embed::bert
