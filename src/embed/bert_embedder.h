#pragma once
// The "bert" embedder: a sentence-transformers BERT directory run natively (embed/bert/:
// WordPiece tokenizer, fp32 or int8 forward pass, mean or CLS pooling). No network, no Python.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/embedder.h"

namespace strata::embed {

// `options`: dir=PATH, or model=NAME for cache/NAME (embed/model_store.h), and int8=1 to run
// the Linear layers in int8 when the encoder's load-time self-check holds (encoder.h; else
// fp32). The model directory: config.json, modules.json and its Pooling
// module's config.json, model.safetensors, vocab.txt, and optionally tokenizer_config.json
// and sentence_bert_config.json. info(): name "bert", version "1", the hidden size as
// dimension, options "model=<dir's last component>,pooling=mean|cls,sha=<16 hex>" (and
// ",dtype=int8" when int8 runs: its vectors differ from fp32's), the hash
// over the JSON files, vocab.txt and every byte of model.safetensors, so a changed model
// gets a new fingerprint. A text with nothing to embed ([CLS][SEP] only) is still encoded:
// BERT gives it a (unit) vector like any other. Texts longer than the model's max length are
// cut. Errors: InvalidArgument for neither or both of dir and model, an unknown option or an
// int8 other than 0 or 1,
// NotFound for a model not installed, else the loaders'
// errors (NotFound, DataLoss, FailedPrecondition naming the file), each prefixed
// "embedder bert: ".
absl::StatusOr<std::unique_ptr<Embedder>> MakeBertEmbedder(
    const std::vector<std::pair<std::string, std::string>>& options);

}  // namespace strata::embed
