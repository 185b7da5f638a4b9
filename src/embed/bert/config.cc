#include "embed/bert/config.h"

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/status_macros.h"

namespace strata::embed::bert {
namespace {

using nlohmann::json;

// The JSON object in `path`. Errors: NotFound when the file is missing (and `required`; else
// an empty object), DataLoss when it is not a JSON object.
absl::StatusOr<json> ReadJsonObject(const std::filesystem::path& path, bool required = true) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!required && !std::filesystem::exists(path)) return json::object();
    return absl::NotFoundError(absl::StrCat(path.string(), ": cannot be read"));
  }
  std::stringstream text;
  text << in.rdbuf();
  json value = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return absl::DataLossError(absl::StrCat(path.string(), ": not JSON"));
  if (!value.is_object() && !value.is_array()) {
    return absl::DataLossError(absl::StrCat(path.string(), ": not a JSON object"));
  }
  return value;
}

// object[field] as an int in [min, max]; `fallback` when absent and not negative.
absl::StatusOr<int> IntField(const json& object, const std::filesystem::path& path,
                             const char* field, int min, int max, int fallback = -1) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) {
    if (fallback >= 0) return fallback;
    return absl::DataLossError(absl::StrCat(path.string(), ": ", field, " is missing"));
  }
  if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > max) {
    return absl::DataLossError(absl::StrCat(path.string(), ": ", field, " must be an integer in [",
                                            min, ", ", max, "], got ", it->dump()));
  }
  return static_cast<int>(it->get<int64_t>());
}

// object[field] as a string; `fallback` when absent.
absl::StatusOr<std::string> StringField(const json& object, const std::filesystem::path& path,
                                        const char* field, std::string fallback) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string()) {
    return absl::DataLossError(
        absl::StrCat(path.string(), ": ", field, " must be a string, got ", it->dump()));
  }
  return it->get<std::string>();
}

absl::Status ReadArchitecture(const std::filesystem::path& dir, BertConfig& config) {
  const std::filesystem::path path = dir / "config.json";
  ASSIGN_OR_RETURN(const json object, ReadJsonObject(path));
  if (!object.is_object()) return absl::DataLossError(path.string() + ": not a JSON object");
  auto unsupported = [&path](auto&&... parts) {
    return absl::FailedPreconditionError(absl::StrCat(path.string(), ": ", parts...));
  };
  ASSIGN_OR_RETURN(const std::string model_type, StringField(object, path, "model_type", "bert"));
  if (model_type != "bert") {
    return unsupported("model_type \"", model_type, "\" is not supported (only \"bert\")");
  }
  ASSIGN_OR_RETURN(const std::string act, StringField(object, path, "hidden_act", "gelu"));
  if (act != "gelu") {
    return unsupported("hidden_act \"", act, "\" is not supported (only \"gelu\", erf GELU)");
  }
  ASSIGN_OR_RETURN(const std::string positions,
                   StringField(object, path, "position_embedding_type", "absolute"));
  if (positions != "absolute") {
    return unsupported("position_embedding_type \"", positions,
                       "\" is not supported (only \"absolute\")");
  }
  constexpr int kBig = 1 << 24;
  ASSIGN_OR_RETURN(config.vocab_size, IntField(object, path, "vocab_size", 1, kBig));
  ASSIGN_OR_RETURN(config.hidden_size, IntField(object, path, "hidden_size", 1, 1 << 16));
  ASSIGN_OR_RETURN(config.num_layers, IntField(object, path, "num_hidden_layers", 1, 1024));
  ASSIGN_OR_RETURN(config.num_heads, IntField(object, path, "num_attention_heads", 1, 1024));
  ASSIGN_OR_RETURN(config.intermediate_size,
                   IntField(object, path, "intermediate_size", 1, 1 << 18));
  ASSIGN_OR_RETURN(config.max_positions,
                   IntField(object, path, "max_position_embeddings", 1, 1 << 20));
  ASSIGN_OR_RETURN(config.type_vocab_size,
                   IntField(object, path, "type_vocab_size", 1, 1 << 16, /*fallback=*/2));
  if (config.hidden_size % config.num_heads != 0) {
    return absl::DataLossError(absl::StrCat(path.string(), ": hidden_size ", config.hidden_size,
                                            " is not a multiple of num_attention_heads ",
                                            config.num_heads));
  }
  if (const auto eps = object.find("layer_norm_eps"); eps != object.end()) {
    if (!eps->is_number() || eps->get<double>() <= 0 || eps->get<double>() > 1) {
      return absl::DataLossError(absl::StrCat(
          path.string(), ": layer_norm_eps must be a number in (0, 1], got ", eps->dump()));
    }
    config.layer_norm_eps = eps->get<float>();
  }
  return absl::OkStatus();
}

absl::Status ReadPoolingModule(const std::filesystem::path& path, BertConfig& config) {
  ASSIGN_OR_RETURN(const json object, ReadJsonObject(path));
  if (!object.is_object()) return absl::DataLossError(path.string() + ": not a JSON object");
  if (const auto dim = object.find("word_embedding_dimension");
      dim != object.end() && *dim != config.hidden_size) {
    return absl::DataLossError(absl::StrCat(path.string(), ": word_embedding_dimension ",
                                            dim->dump(), " is not hidden_size ",
                                            config.hidden_size));
  }
  std::vector<std::string> modes;
  for (const auto& [key, value] : object.items()) {
    if (absl::StartsWith(key, "pooling_mode_") && value.is_boolean() && value.get<bool>()) {
      modes.push_back(key);
    }
  }
  if (modes == std::vector<std::string>{"pooling_mode_mean_tokens"}) {
    config.pooling = Pooling::kMean;
  } else if (modes == std::vector<std::string>{"pooling_mode_cls_token"}) {
    config.pooling = Pooling::kCls;
  } else {
    return absl::FailedPreconditionError(absl::StrCat(
        path.string(), ": the pooling modes set are [", absl::StrJoin(modes, ", "),
        "]; only pooling_mode_mean_tokens or pooling_mode_cls_token alone is supported"));
  }
  return absl::OkStatus();
}

absl::Status ReadModules(const std::filesystem::path& dir, BertConfig& config) {
  const std::filesystem::path path = dir / "modules.json";
  ASSIGN_OR_RETURN(const json modules, ReadJsonObject(path));
  if (!modules.is_array()) return absl::DataLossError(path.string() + ": not a JSON array");
  bool pooling_seen = false;
  for (const json& module : modules) {
    if (!module.is_object())
      return absl::DataLossError(path.string() + ": a module is not an object");
    ASSIGN_OR_RETURN(const std::string type, StringField(module, path, "type", ""));
    ASSIGN_OR_RETURN(const std::string module_path, StringField(module, path, "path", ""));
    if (absl::EndsWith(type, ".Transformer")) continue;
    if (absl::EndsWith(type, ".Pooling") && !pooling_seen) {
      RETURN_IF_ERROR(ReadPoolingModule(dir / module_path / "config.json", config));
      pooling_seen = true;
    } else if (absl::EndsWith(type, ".Normalize") && pooling_seen) {
      config.normalize = true;
    } else {
      return absl::FailedPreconditionError(absl::StrCat(
          path.string(), ": module \"", type, "\" at \"", module_path,
          "\" is not supported (only Transformer, then Pooling, then optionally Normalize)"));
    }
  }
  if (!pooling_seen) {
    return absl::DataLossError(path.string() + ": no sentence_transformers Pooling module");
  }
  return absl::OkStatus();
}

// The first of `names` that `file` holds, as fp32 of exactly `shape`.
absl::StatusOr<FloatTensor> LoadTensor(const SafetensorsFile& file,
                                       std::initializer_list<std::string> names,
                                       std::vector<int64_t> shape) {
  for (const std::string& name : names) {
    for (const char* prefix : {"", "bert."}) {
      const TensorInfo* info = file.Find(absl::StrCat(prefix, name));
      if (info == nullptr) continue;
      if (info->shape != shape) {
        return absl::DataLossError(absl::StrCat(file.path(), ": tensor \"", info->name,
                                                "\" has shape [", absl::StrJoin(info->shape, ", "),
                                                "], the config needs [", absl::StrJoin(shape, ", "),
                                                "]"));
      }
      return file.LoadFloat(*info);
    }
  }
  return absl::DataLossError(absl::StrCat(file.path(), ": tensor \"", *names.begin(),
                                          "\" (with or without \"bert.\") is missing"));
}

// A Linear layer's weight [out x in] and bias [out] at `name`.weight/.bias.
absl::Status LoadLinear(const SafetensorsFile& file, const std::string& name, int out, int in,
                        FloatTensor& weight, FloatTensor& bias) {
  ASSIGN_OR_RETURN(weight, LoadTensor(file, {name + ".weight"}, {out, in}));
  ASSIGN_OR_RETURN(bias, LoadTensor(file, {name + ".bias"}, {out}));
  return absl::OkStatus();
}

// A LayerNorm's scale and shift at `name`, by either generation of names.
absl::Status LoadNorm(const SafetensorsFile& file, const std::string& name, int width,
                      FloatTensor& weight, FloatTensor& bias) {
  ASSIGN_OR_RETURN(weight, LoadTensor(file, {name + ".weight", name + ".gamma"}, {width}));
  ASSIGN_OR_RETURN(bias, LoadTensor(file, {name + ".bias", name + ".beta"}, {width}));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BertConfig> ReadBertConfig(const std::filesystem::path& dir) {
  BertConfig config;
  RETURN_IF_ERROR(ReadArchitecture(dir, config));
  RETURN_IF_ERROR(ReadModules(dir, config));
  const std::filesystem::path path = dir / "sentence_bert_config.json";
  ASSIGN_OR_RETURN(const json sentence, ReadJsonObject(path, /*required=*/false));
  if (!sentence.is_object()) return absl::DataLossError(path.string() + ": not a JSON object");
  ASSIGN_OR_RETURN(const int max_seq_length,
                   IntField(sentence, path, "max_seq_length", 1, 1 << 20, config.max_positions));
  config.max_seq_length = std::min(max_seq_length, config.max_positions);
  return config;
}

absl::StatusOr<BertWeights> LoadBertWeights(const SafetensorsFile& file, const BertConfig& config) {
  const int hidden = config.hidden_size;
  BertWeights w;
  ASSIGN_OR_RETURN(w.word_embeddings, LoadTensor(file, {"embeddings.word_embeddings.weight"},
                                                 {config.vocab_size, hidden}));
  ASSIGN_OR_RETURN(
      w.position_embeddings,
      LoadTensor(file, {"embeddings.position_embeddings.weight"}, {config.max_positions, hidden}));
  ASSIGN_OR_RETURN(w.token_type_embeddings,
                   LoadTensor(file, {"embeddings.token_type_embeddings.weight"},
                              {config.type_vocab_size, hidden}));
  RETURN_IF_ERROR(LoadNorm(file, "embeddings.LayerNorm", hidden, w.embedding_norm_weight,
                           w.embedding_norm_bias));
  w.layers.resize(config.num_layers);
  for (int i = 0; i < config.num_layers; ++i) {
    const std::string at = absl::StrCat("encoder.layer.", i, ".");
    BertLayerWeights& l = w.layers[i];
    RETURN_IF_ERROR(LoadLinear(file, at + "attention.self.query", hidden, hidden, l.query_weight,
                               l.query_bias));
    RETURN_IF_ERROR(
        LoadLinear(file, at + "attention.self.key", hidden, hidden, l.key_weight, l.key_bias));
    RETURN_IF_ERROR(LoadLinear(file, at + "attention.self.value", hidden, hidden, l.value_weight,
                               l.value_bias));
    RETURN_IF_ERROR(LoadLinear(file, at + "attention.output.dense", hidden, hidden,
                               l.attention_output_weight, l.attention_output_bias));
    RETURN_IF_ERROR(LoadNorm(file, at + "attention.output.LayerNorm", hidden,
                             l.attention_norm_weight, l.attention_norm_bias));
    RETURN_IF_ERROR(LoadLinear(file, at + "intermediate.dense", config.intermediate_size, hidden,
                               l.intermediate_weight, l.intermediate_bias));
    RETURN_IF_ERROR(LoadLinear(file, at + "output.dense", hidden, config.intermediate_size,
                               l.output_weight, l.output_bias));
    RETURN_IF_ERROR(
        LoadNorm(file, at + "output.LayerNorm", hidden, l.output_norm_weight, l.output_norm_bias));
  }
  return w;
}

}  // namespace strata::embed::bert
