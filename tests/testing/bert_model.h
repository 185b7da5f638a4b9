#pragma once
// Random BERT models on disk for the encoder's tests and benchmark: a sentence-transformers
// directory (config.json, modules.json, 1_Pooling/config.json, model.safetensors) whose
// weights come from a fixed generator, the same one tools/golden/bert_reference/make_golden.py
// implements to compute the golden vectors:
//   - splitmix64 (state += 0x9E3779B97F4A7C15; z = state; z = (z ^ z>>30) * 0xBF58476D1CE4E5B9;
//     z = (z ^ z>>27) * 0x94D049BB133111EB; z ^ z>>31), one stream per tensor seeded with
//     FNV-1a-64 of its name (without "bert.") XOR the model's seed;
//   - per value, in row-major order, k = (next() >> 56) - 128: LayerNorm weight 1 + k/1024,
//     LayerNorm and Linear bias k/1024, everything else k/256 (all exact in F16).
// Header-only: the benchmark uses it without the test library.

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::testing {

struct BertShape {
  int vocab_size = 64;
  int hidden_size = 16;
  int num_layers = 2;
  int num_heads = 4;
  int intermediate_size = 32;
  int max_positions = 32;
  int type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
};

struct BertModelSpec {
  BertShape shape;
  uint64_t seed = 1;
  std::string pooling = "mean";  // "mean" or "cls"
  std::string dtype = "F32";     // "F32" or "F16"
  std::string prefix;            // "" or "bert."
};

// One tensor as the file stores it.
struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

inline uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// The `count` values of tensor `name` (without "bert.") of the model seeded `seed`.
inline std::vector<float> RandomBertTensor(const std::string& name, size_t count, uint64_t seed) {
  SplitMix64 rng(Fnv1a64(name) ^ seed);
  const bool norm = name.find(".LayerNorm.") != std::string::npos;
  const bool bias = name.ends_with(".bias");
  std::vector<float> values(count);
  for (float& v : values) {
    const int k = static_cast<int>(rng.Next() >> 56) - 128;
    if (norm && !bias) {
      v = 1.0f + static_cast<float>(k) / 1024;
    } else if (bias) {
      v = static_cast<float>(k) / 1024;
    } else {
      v = static_cast<float>(k) / 256;
    }
  }
  return values;
}

// IEEE binary16 bits of `f`, which must be zero or a normal half exactly (the generator's
// values are).
inline uint16_t ExactHalf(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if ((bits & 0x7fffffff) == 0) return sign;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  return static_cast<uint16_t>(sign | (exponent << 10) | ((bits & 0x7fffff) >> 13));
}

inline RawTensor MakeRawTensor(std::string name, const std::string& dtype,
                               std::vector<int64_t> shape, const std::vector<float>& values) {
  RawTensor t{.name = std::move(name), .dtype = dtype, .shape = std::move(shape)};
  if (dtype == "F16") {
    t.bytes.resize(values.size() * 2);
    for (size_t i = 0; i < values.size(); ++i) {
      const uint16_t half = ExactHalf(values[i]);
      std::memcpy(t.bytes.data() + 2 * i, &half, 2);
    }
  } else {
    t.bytes.resize(values.size() * 4);
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  }
  return t;
}

// The whole .safetensors file: the header (padded with spaces to 8 bytes, as the reference
// writer does) and the tensors' bytes in order.
inline std::string SafetensorsBytes(const std::vector<RawTensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  size_t offset = 0;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  const uint64_t length = text.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  out += text;
  for (const RawTensor& t : tensors) out += t.bytes;
  return out;
}

// Every tensor of a BertModel of `spec`, with its Hugging Face name (and spec.prefix).
inline std::vector<RawTensor> BertTensors(const BertModelSpec& spec) {
  const BertShape& s = spec.shape;
  const int64_t h = s.hidden_size;
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes = {
      {"embeddings.word_embeddings.weight", {s.vocab_size, h}},
      {"embeddings.position_embeddings.weight", {s.max_positions, h}},
      {"embeddings.token_type_embeddings.weight", {s.type_vocab_size, h}},
      {"embeddings.LayerNorm.weight", {h}},
      {"embeddings.LayerNorm.bias", {h}},
  };
  auto linear = [&shapes](const std::string& name, int64_t out, int64_t in) {
    shapes.push_back({name + ".weight", {out, in}});
    shapes.push_back({name + ".bias", {out}});
  };
  auto norm = [&shapes, h](const std::string& name) {
    shapes.push_back({name + ".weight", {h}});
    shapes.push_back({name + ".bias", {h}});
  };
  for (int i = 0; i < s.num_layers; ++i) {
    const std::string at = "encoder.layer." + std::to_string(i) + ".";
    linear(at + "attention.self.query", h, h);
    linear(at + "attention.self.key", h, h);
    linear(at + "attention.self.value", h, h);
    linear(at + "attention.output.dense", h, h);
    norm(at + "attention.output.LayerNorm");
    linear(at + "intermediate.dense", s.intermediate_size, h);
    linear(at + "output.dense", h, s.intermediate_size);
    norm(at + "output.LayerNorm");
  }
  std::vector<RawTensor> tensors;
  for (auto& [name, shape] : shapes) {
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    tensors.push_back(MakeRawTensor(spec.prefix + name, spec.dtype, shape,
                                    RandomBertTensor(name, count, spec.seed)));
  }
  return tensors;
}

inline nlohmann::json BertConfigJson(const BertShape& s) {
  return {{"architectures", {"BertModel"}},
          {"model_type", "bert"},
          {"vocab_size", s.vocab_size},
          {"hidden_size", s.hidden_size},
          {"num_hidden_layers", s.num_layers},
          {"num_attention_heads", s.num_heads},
          {"intermediate_size", s.intermediate_size},
          {"max_position_embeddings", s.max_positions},
          {"type_vocab_size", s.type_vocab_size},
          {"layer_norm_eps", s.layer_norm_eps},
          {"hidden_act", "gelu"},
          {"position_embedding_type", "absolute"}};
}

inline void WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Writes the whole model directory for `spec` into `dir`.
inline void WriteBertModel(const std::filesystem::path& dir, const BertModelSpec& spec) {
  WriteTextFile(dir / "config.json", BertConfigJson(spec.shape).dump(1));
  WriteTextFile(dir / "modules.json",
                nlohmann::json::array({{{"idx", 0},
                                        {"name", "0"},
                                        {"path", ""},
                                        {"type", "sentence_transformers.models.Transformer"}},
                                       {{"idx", 1},
                                        {"name", "1"},
                                        {"path", "1_Pooling"},
                                        {"type", "sentence_transformers.models.Pooling"}},
                                       {{"idx", 2},
                                        {"name", "2"},
                                        {"path", "2_Normalize"},
                                        {"type", "sentence_transformers.models.Normalize"}}})
                    .dump(1));
  WriteTextFile(dir / "1_Pooling" / "config.json",
                nlohmann::json{{"word_embedding_dimension", spec.shape.hidden_size},
                               {"pooling_mode_cls_token", spec.pooling == "cls"},
                               {"pooling_mode_mean_tokens", spec.pooling == "mean"},
                               {"pooling_mode_max_tokens", false},
                               {"pooling_mode_mean_sqrt_len_tokens", false}}
                    .dump(1));
  WriteTextFile(dir / "model.safetensors", SafetensorsBytes(BertTensors(spec)));
}

// Writes a 64-token vocabulary (the test model's default vocab_size) and a
// tokenizer_config.json.
inline void WriteBertTokenizer(const std::filesystem::path& dir) {
  std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n";
  const char* words[] = {"hello", "world", "the",  "cat", "sat", "on",     "mat",
                         "dog",   "ran",   "fast", "a",   "is",  "memory", "server",
                         "##s",   "##ing", ".",    ",",   "!",   "?"};
  int count = 5;
  for (const char* w : words) {
    vocab += std::string(w) + "\n";
    ++count;
  }
  for (char c = 'a'; c <= 'z' && count < 64; ++c, ++count) vocab += std::string("##") + c + "\n";
  for (; count < 64; ++count) vocab += "[unused" + std::to_string(count) + "]\n";
  WriteTextFile(dir / "vocab.txt", vocab);
  WriteTextFile(dir / "tokenizer_config.json", R"({"do_lower_case": true})");
}

}  // namespace strata::testing
