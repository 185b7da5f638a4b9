#include "embed/bert_embedder.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "embed/bert/config.h"
#include "embed/bert/encoder.h"
#include "embed/bert/int8.h"
#include "embed/bert/wordpiece.h"
#include "embed/model_store.h"
#include "util/hash.h"

namespace strata::embed {
namespace {

namespace fs = std::filesystem;

absl::Status Prefixed(const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("embedder bert: ", status.message()));
}

// Hashes `name`, then the file's bytes (or a marker when it is absent), into `state`.
uint64_t HashFile(const fs::path& dir, const std::string& name, uint64_t state) {
  state = Fnv1a64(name, state);
  std::ifstream in(dir / name, std::ios::binary);
  if (!in) return Fnv1a64(std::string_view("\0absent", 7), state);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  state = Fnv1a64(absl::StrCat(bytes.size(), ":"), state);
  return Fnv1a64(bytes, state);
}

class BertEmbedder final : public Embedder {
 public:
  BertEmbedder(bert::WordPieceTokenizer tokenizer, std::unique_ptr<bert::BertEncoder> encoder,
               EmbedderInfo info)
      : tokenizer_(std::move(tokenizer)), encoder_(std::move(encoder)), info_(std::move(info)) {}

  const EmbedderInfo& info() const override { return info_; }
  int batch_size() const override { return 16; }

  // Both roles alike: a model's prefixes are put on by WithRolePrefixes (registry.cc).
  absl::StatusOr<std::vector<float>> Embed(std::span<const std::string> texts, Role) override {
    std::vector<std::vector<int32_t>> ids;
    ids.reserve(texts.size());
    for (const std::string& text : texts) ids.push_back(tokenizer_.Encode(text));
    if (ids.empty()) return std::vector<float>();
    auto vectors = encoder_->Encode(ids);
    if (!vectors.ok()) return Prefixed(vectors.status());
    return std::move(*vectors);
  }

 private:
  const bert::WordPieceTokenizer tokenizer_;
  const std::unique_ptr<bert::BertEncoder> encoder_;
  const EmbedderInfo info_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Embedder>> MakeBertEmbedder(
    const std::vector<std::pair<std::string, std::string>>& options) {
  std::string dir_option;
  std::string model_option;
  bert::EncoderOptions encoder_options;
  // auto: int8 where this CPU has a SIMD int8 kernel (3x fp32's speed at ~100 tokens, PERF.md
  // "The BERT encoder"), else fp32; the encoder's self-check may still keep fp32.
  encoder_options.int8 = bert::BestInt8Kernel() != bert::Int8Kernel::kPortable;
  for (const auto& [key, value] : options) {
    if (key == "dir") {
      dir_option = value;
    } else if (key == "model") {
      model_option = value;
    } else if (key == "int8") {
      if (value != "0" && value != "1" && value != "auto") {
        return absl::InvalidArgumentError(
            absl::StrCat("embedder bert: int8 must be 0, 1 or auto, got \"", value, "\""));
      }
      if (value != "auto") encoder_options.int8 = value == "1";
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("embedder bert: unknown option \"", key, "\" (known: dir, model, int8)"));
    }
  }
  if (dir_option.empty() == model_option.empty()) {
    return absl::InvalidArgumentError(
        "embedder bert: give one of dir=PATH (a sentence-transformers model directory) or "
        "model=NAME (one installed by `strata model fetch` or `strata model import`)");
  }
  if (!model_option.empty()) {
    auto installed = InstalledModelDir(ModelCacheDir(), model_option);
    if (!installed.ok()) return Prefixed(installed.status());
    dir_option = installed->string();
  }
  const fs::path dir(dir_option);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("embedder bert: model directory ", dir.string(), " not found"));
  }
  // The encoder reads the configuration (first, so that a bad config.json is what is named).
  auto encoder = bert::BertEncoder::Open(dir, encoder_options);
  if (!encoder.ok()) return Prefixed(encoder.status());
  auto tokenizer = bert::WordPieceTokenizer::Load(dir);
  if (!tokenizer.ok()) return Prefixed(tokenizer.status());
  // The tokenizer cuts at its own max length; the encoder refuses more than the config's.
  if (tokenizer->options().max_length > (*encoder)->config().max_seq_length) {
    bert::TokenizerOptions tokenizer_options = tokenizer->options();
    tokenizer_options.max_length = (*encoder)->config().max_seq_length;
    tokenizer = bert::WordPieceTokenizer::Create(tokenizer->vocab(), tokenizer_options);
    if (!tokenizer.ok()) return Prefixed(tokenizer.status());
  }

  uint64_t hash = kFnv1a64Basis;
  for (const char* name : {"config.json", "modules.json", "sentence_bert_config.json",
                           "tokenizer_config.json", "vocab.txt"}) {
    hash = HashFile(dir, name, hash);
  }
  hash = Mix64(Fnv1a64("model.safetensors", hash) ^ (*encoder)->weights_hash());
  const bool cls = (*encoder)->config().pooling == bert::Pooling::kCls;
  std::string model = dir.lexically_normal().filename().string();
  if (model.empty()) model = dir.lexically_normal().parent_path().filename().string();
  EmbedderInfo info{.name = "bert",
                    .version = "1",
                    .dimension = (*encoder)->dimension(),
                    .options = absl::StrCat("model=", model, ",pooling=", cls ? "cls" : "mean",
                                            ",sha=", absl::StrFormat("%016x", hash),
                                            (*encoder)->int8() ? ",dtype=int8" : "")};
  return std::make_unique<BertEmbedder>(std::move(*tokenizer), std::move(*encoder),
                                        std::move(info));
}

}  // namespace strata::embed
