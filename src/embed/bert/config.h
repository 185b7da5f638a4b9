#pragma once
// What a sentence-transformers / Hugging Face BERT directory says about its model: the
// architecture (config.json), the pooling (modules.json and the Pooling module's
// config.json), the longest input (sentence_bert_config.json), and the weights' names and
// shapes in model.safetensors.

#include <filesystem>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/bert/safetensors.h"

namespace strata::embed::bert {

enum class Pooling { kMean, kCls };

struct BertConfig {
  int vocab_size = 0;
  int hidden_size = 0;
  int num_layers = 0;
  int num_heads = 0;
  int intermediate_size = 0;
  int max_positions = 0;  // max_position_embeddings
  int type_vocab_size = 0;
  float layer_norm_eps = 1e-12f;
  Pooling pooling = Pooling::kMean;
  // Whether modules.json ends in a Normalize module. The encoder's vectors are unit vectors
  // either way (the Embedder contract); this only records what the model card says.
  bool normalize = false;
  // sentence_bert_config.json's max_seq_length, at most max_positions; max_positions when
  // the file is absent.
  int max_seq_length = 0;
};

// Reads config.json, modules.json with its Pooling module's config.json, and
// sentence_bert_config.json (optional) from `dir`. Only BertModel with absolute positions
// and erf GELU, and mean or CLS pooling, are accepted. Errors: NotFound (config.json or
// modules.json missing), DataLoss (a file that is not JSON or a field of the wrong type or
// range), FailedPrecondition (a model this encoder does not run: another hidden_act, relative
// positions, max or weighted pooling), each naming the file and the field.
absl::StatusOr<BertConfig> ReadBertConfig(const std::filesystem::path& dir);

// The weights of one encoder layer; each matrix is [out x in], as torch.nn.Linear keeps it.
struct BertLayerWeights {
  FloatTensor query_weight, query_bias;
  FloatTensor key_weight, key_bias;
  FloatTensor value_weight, value_bias;
  FloatTensor attention_output_weight, attention_output_bias;
  FloatTensor attention_norm_weight, attention_norm_bias;
  FloatTensor intermediate_weight, intermediate_bias;
  FloatTensor output_weight, output_bias;
  FloatTensor output_norm_weight, output_norm_bias;
};

struct BertWeights {
  FloatTensor word_embeddings;        // [vocab_size x hidden]
  FloatTensor position_embeddings;    // [max_positions x hidden]
  FloatTensor token_type_embeddings;  // [type_vocab_size x hidden]
  FloatTensor embedding_norm_weight, embedding_norm_bias;
  std::vector<BertLayerWeights> layers;
};

// Finds every tensor `config` needs in `file`, by its Hugging Face name with or without the
// "bert." prefix (LayerNorm "weight"/"bias" or the older "gamma"/"beta"); the pooler and any
// other tensor are ignored. F32 tensors stay views into the mapping: `file` outlives the
// result. Errors: DataLoss naming the file and the tensor that is missing or has the wrong
// shape, FailedPrecondition for a dtype other than F32, F16 or BF16.
absl::StatusOr<BertWeights> LoadBertWeights(const SafetensorsFile& file, const BertConfig& config);

}  // namespace strata::embed::bert
