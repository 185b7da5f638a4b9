// The forward pass against golden vectors of an independent reference
// (tools/golden/bert_reference/make_golden.py, double precision, one text at a time), on tiny
// random models this test writes; the packing, norm and input invariants; and every way a
// model directory can be refused.

#include "embed/bert/encoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/bert/config.h"
#include "embed/bert/int8.h"
#include "testing/bert_model.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::embed::bert {
namespace {

using ::strata::testing::BertConfigJson;
using ::strata::testing::BertModelSpec;
using ::strata::testing::BertShape;
using ::strata::testing::BertTensors;
using ::strata::testing::MakeRawTensor;
using ::strata::testing::SafetensorsBytes;
using ::strata::testing::StatusIs;
using ::strata::testing::WriteBertModel;
using ::strata::testing::WriteTextFile;
using ::testing::HasSubstr;

nlohmann::json Golden() {
  std::ifstream in(STRATA_TESTS_DIR "/embed/testdata/bert_golden.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);
}

BertModelSpec SpecOf(const nlohmann::json& model, const std::string& dtype) {
  const nlohmann::json& c = model["config"];
  return {.shape = {.vocab_size = c["vocab_size"],
                    .hidden_size = c["hidden_size"],
                    .num_layers = c["num_hidden_layers"],
                    .num_heads = c["num_attention_heads"],
                    .intermediate_size = c["intermediate_size"],
                    .max_positions = c["max_position_embeddings"],
                    .type_vocab_size = c["type_vocab_size"],
                    .layer_norm_eps = c["layer_norm_eps"]},
          .seed = model["seed"],
          .pooling = model["pooling"],
          .dtype = dtype};
}

// Where the build found OpenBLAS, its library opens (it is not linked: gemm.cc opens it).
TEST(Gemm, OpenBlasServesWhereTheBuildFoundIt) {
  EXPECT_EQ(BlasAvailable(), STRATA_TEST_OPENBLAS != 0);
}

// kPacked runs its portable kernel on a CPU without AVX-512: tested either way.
std::vector<GemmBackend> Backends() {
  std::vector<GemmBackend> backends = {GemmBackend::kPortable, GemmBackend::kPacked};
  if (BlasAvailable()) backends.push_back(GemmBackend::kBlas);
  return backends;
}

const char* Name(GemmBackend b) {
  switch (b) {
    case GemmBackend::kBlas:
      return "blas";
    case GemmBackend::kPortable:
      return "portable";
    case GemmBackend::kPacked:
      return "packed";
  }
  return "?";
}

std::vector<float> Uniform(strata::testing::SplitMix64& rng, size_t n, float low, float high) {
  std::vector<float> v(n);
  for (float& x : v) {
    x = low + (high - low) * static_cast<float>(static_cast<double>(rng.Next() >> 40) / (1 << 24));
  }
  return v;
}

double MaxDifference(std::span<const float> a, std::span<const float> b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(double{a[i]} - b[i]));
  return worst;
}

TEST(BertEncoder, MatchesTheReferenceForEveryModelDtypeAndBackend) {
  const nlohmann::json golden = Golden();
  ASSERT_TRUE(golden.is_object()) << "cannot read "
                                  << STRATA_TESTS_DIR "/embed/testdata/bert_golden.json";
  ASSERT_EQ(golden["models"].size(), 2u);
  for (const nlohmann::json& model : golden["models"]) {
    for (const std::string dtype : {"F32", "F16"}) {
      strata::testing::TempDir dir;
      BertModelSpec spec = SpecOf(model, dtype);
      // The second model is stored under the "bert." prefix, as BertForMaskedLM saves it.
      if (model["pooling"] == "cls") spec.prefix = "bert.";
      WriteBertModel(dir.path(), spec);
      const auto inputs = model["inputs"].get<std::vector<std::vector<int32_t>>>();
      const auto expected = model["vectors"].get<std::vector<std::vector<double>>>();
      for (GemmBackend backend : Backends()) {
        SCOPED_TRACE(
            absl::StrCat(model["name"].get<std::string>(), " ", dtype, " ", Name(backend)));
        ASSERT_OK_AND_ASSIGN(auto encoder, BertEncoder::Open(dir.path(), {.gemm = backend}));
        EXPECT_EQ(encoder->config().pooling,
                  model["pooling"] == "cls" ? Pooling::kCls : Pooling::kMean);
        ASSERT_OK_AND_ASSIGN(const std::vector<float> packed, encoder->Encode(inputs));
        const int dim = encoder->dimension();
        ASSERT_EQ(packed.size(), inputs.size() * dim);
        for (size_t t = 0; t < inputs.size(); ++t) {
          ASSERT_OK_AND_ASSIGN(const std::vector<float> alone,
                               encoder->Encode(std::span(&inputs[t], 1)));
          for (int i = 0; i < dim; ++i) {
            EXPECT_NEAR(alone[i], expected[t][i], 1e-5) << "text " << t << " component " << i;
          }
          EXPECT_LE(MaxDifference(alone, std::span(packed).subspan(t * dim, dim)), 1e-6)
              << "text " << t << " alone and packed";
        }
      }
    }
  }
}

class BertModelTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteBertModel(dir_.path(), spec_); }
  absl::StatusOr<std::unique_ptr<BertEncoder>> Open() { return BertEncoder::Open(dir_.path()); }
  void WriteJson(const std::string& name, const nlohmann::json& value) {
    WriteTextFile(dir_.path() / name, value.dump());
  }

  strata::testing::TempDir dir_;
  BertModelSpec spec_;
};

// Texts of `lengths` tokens with ids from a fixed generator.
std::vector<std::vector<int32_t>> RandomTexts(const std::vector<int>& lengths, int vocab) {
  strata::testing::SplitMix64 rng(42);
  std::vector<std::vector<int32_t>> texts;
  for (int n : lengths) {
    std::vector<int32_t>& ids = texts.emplace_back();
    for (int i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>(rng.Next() % vocab));
  }
  return texts;
}

TEST_F(BertModelTest, PackedTextsEqualTextsAloneAndAreUnitVectors) {
  const auto texts = RandomTexts({1, 32, 5, 17, 2, 32, 9}, spec_.shape.vocab_size);
  for (GemmBackend backend : Backends()) {
    SCOPED_TRACE(Name(backend));
    ASSERT_OK_AND_ASSIGN(auto encoder, BertEncoder::Open(dir_.path(), {.gemm = backend}));
    ASSERT_OK_AND_ASSIGN(const std::vector<float> packed, encoder->Encode(texts));
    const int dim = encoder->dimension();
    for (size_t t = 0; t < texts.size(); ++t) {
      const std::span<const float> v = std::span(packed).subspan(t * dim, dim);
      double norm = 0;
      for (float x : v) norm += double{x} * x;
      EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-6);
      ASSERT_OK_AND_ASSIGN(const std::vector<float> alone,
                           encoder->Encode(std::span(&texts[t], 1)));
      EXPECT_LE(MaxDifference(alone, v), 1e-6) << "text " << t;
    }
  }
}

TEST_F(BertModelTest, BackendsAgree) {
  const auto texts = RandomTexts({3, 30, 11}, spec_.shape.vocab_size);
  ASSERT_OK_AND_ASSIGN(auto portable,
                       BertEncoder::Open(dir_.path(), {.gemm = GemmBackend::kPortable}));
  ASSERT_OK_AND_ASSIGN(const std::vector<float> a, portable->Encode(texts));
  for (GemmBackend backend : Backends()) {
    ASSERT_OK_AND_ASSIGN(auto other, BertEncoder::Open(dir_.path(), {.gemm = backend}));
    ASSERT_OK_AND_ASSIGN(const std::vector<float> b, other->Encode(texts));
    EXPECT_LE(MaxDifference(a, b), 1e-6) << Name(backend);
  }
}

TEST(PackedLinear, EqualsTheReferenceProductOnOddShapes) {
  // 13 rows (a tile of eight and a copied tail of five), 37 columns, and 61 or 115 outputs
  // (panels of 16 with a tail; tiles of three panels with one or two left).
  strata::testing::SplitMix64 rng(9);
  for (const auto& [rows, cols, out_rows] :
       {std::tuple{13, 37, 61}, std::tuple{1, 5, 115}, std::tuple{8, 384, 48}}) {
    const std::vector<float> in = Uniform(rng, rows * cols, -2.0f, 2.0f);
    const std::vector<float> weight = Uniform(rng, out_rows * cols, -0.5f, 0.5f);
    const PackedMatrix packed = PackRows(FloatTensor::View({out_rows, cols}, weight.data()));
    std::vector<float> out(rows * out_rows, -1.0f);
    PackedLinear(in.data(), rows, packed, out.data());
    std::vector<float> reference(rows * out_rows);
    Gemm(GemmBackend::kPortable, /*transpose_b=*/true, rows, out_rows, cols, 1.0f, in.data(), cols,
         weight.data(), cols, 0.0f, reference.data(), out_rows);
    for (int i = 0; i < rows * out_rows; ++i) {
      EXPECT_NEAR(out[i], reference[i], 1e-5 * cols)
          << "row " << i / out_rows << " output " << i % out_rows;
    }
  }
}

TEST_F(BertModelTest, ThreadsEncodingAtOnceGetTheSameVectors) {
  ASSERT_OK_AND_ASSIGN(auto encoder, Open());
  const auto texts = RandomTexts({4, 20, 7, 32}, spec_.shape.vocab_size);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> expected, encoder->Encode(texts));
  std::vector<std::vector<float>> got(4);
  {
    std::vector<std::jthread> threads;
    for (auto& out : got) {
      threads.emplace_back([&] {
        for (int i = 0; i < 20; ++i) out = *encoder->Encode(texts);
      });
    }
  }
  for (const auto& out : got) EXPECT_EQ(out, expected);
}

TEST_F(BertModelTest, RefusesTextsItCannotRun) {
  ASSERT_OK_AND_ASSIGN(auto encoder, Open());
  EXPECT_THAT(encoder->Encode(RandomTexts({3, 0}, 64)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("text 1 has no tokens")));
  EXPECT_THAT(encoder->Encode(RandomTexts({33}, 64)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("text 0 has 33 tokens, over the model's max_seq_length 32")));
  const std::vector<std::vector<int32_t>> bad_ids = {{1, 2}, {5, 64}, {-1}};
  EXPECT_THAT(encoder->Encode(bad_ids),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("text 1: token id 64 at position 1 is outside the vocabulary")));
  ASSERT_OK_AND_ASSIGN(const std::vector<float> none, encoder->Encode({}));
  EXPECT_TRUE(none.empty());
}

TEST_F(BertModelTest, MaxSeqLengthComesFromSentenceBertConfig) {
  WriteJson("sentence_bert_config.json", {{"max_seq_length", 8}, {"do_lower_case", true}});
  ASSERT_OK_AND_ASSIGN(auto encoder, Open());
  EXPECT_EQ(encoder->config().max_seq_length, 8);
  EXPECT_TRUE(encoder->config().normalize);
  EXPECT_OK(encoder->Encode(RandomTexts({8}, 64)));
  EXPECT_THAT(encoder->Encode(RandomTexts({9}, 64)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_seq_length 8")));
  // Never past the position table.
  WriteJson("sentence_bert_config.json", {{"max_seq_length", 512}});
  ASSERT_OK_AND_ASSIGN(encoder, Open());
  EXPECT_EQ(encoder->config().max_seq_length, 32);
}

TEST_F(BertModelTest, F32WeightsStayMapped) {
  ASSERT_OK_AND_ASSIGN(auto file,
                       SafetensorsFile::Open((dir_.path() / "model.safetensors").string()));
  ASSERT_OK_AND_ASSIGN(auto config, ReadBertConfig(dir_.path()));
  ASSERT_OK_AND_ASSIGN(BertWeights weights, LoadBertWeights(*file, config));
  EXPECT_TRUE(weights.word_embeddings.mapped());
  EXPECT_TRUE(weights.layers[1].output_weight.mapped());
}

TEST_F(BertModelTest, IgnoresThePoolerAndOtherTensors) {
  auto tensors = BertTensors(spec_);
  tensors.push_back(
      MakeRawTensor("pooler.dense.weight", "F32", {16, 16}, std::vector<float>(256, 0.5f)));
  tensors.push_back({.name = "embeddings.position_ids",
                     .dtype = "I64",
                     .shape = {1, 32},
                     .bytes = std::string(32 * 8, '\0')});
  WriteTextFile(dir_.path() / "model.safetensors", SafetensorsBytes(tensors));
  EXPECT_OK(Open());
}

TEST_F(BertModelTest, RefusesMissingTensorsAndWrongShapes) {
  auto tensors = BertTensors(spec_);
  auto without = tensors;
  std::erase_if(without,
                [](const auto& t) { return t.name == "encoder.layer.1.output.dense.bias"; });
  WriteTextFile(dir_.path() / "model.safetensors", SafetensorsBytes(without));
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss,
                               AllOf(HasSubstr("model.safetensors"),
                                     HasSubstr("tensor \"encoder.layer.1.output.dense.bias\" "
                                               "(with or without \"bert.\") is missing"))));

  auto reshaped = tensors;
  for (auto& t : reshaped) {
    if (t.name == "encoder.layer.0.intermediate.dense.weight") t.shape = {16, 32};
  }
  WriteTextFile(dir_.path() / "model.safetensors", SafetensorsBytes(reshaped));
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss,
                               HasSubstr("tensor \"encoder.layer.0.intermediate.dense.weight\" "
                                         "has shape [16, 32], the config needs [32, 16]")));

  // A config that disagrees with the file: more layers than it holds.
  nlohmann::json config = BertConfigJson(spec_.shape);
  config["num_hidden_layers"] = 3;
  WriteTextFile(dir_.path() / "model.safetensors", SafetensorsBytes(tensors));
  WriteJson("config.json", config);
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss,
                               HasSubstr("\"encoder.layer.2.attention.self.query.weight\"")));
}

TEST_F(BertModelTest, RefusesAWeightOfAnIntegerDtype) {
  auto tensors = BertTensors(spec_);
  tensors[3] = {
      .name = tensors[3].name, .dtype = "I32", .shape = {16}, .bytes = std::string(64, '\0')};
  WriteTextFile(dir_.path() / "model.safetensors", SafetensorsBytes(tensors));
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr("embeddings.LayerNorm.weight"), HasSubstr("I32"))));
}

TEST_F(BertModelTest, RefusesCorruptWeights) {
  const std::string header = "{not json at all}";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  WriteTextFile(dir_.path() / "model.safetensors", bytes + header);
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not valid JSON")));
  std::filesystem::remove(dir_.path() / "model.safetensors");
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kNotFound, HasSubstr("model.safetensors")));
}

TEST_F(BertModelTest, RefusesArchitecturesItDoesNotRun) {
  const std::vector<std::tuple<std::string, nlohmann::json, std::string>> cases = {
      {"hidden_act", "relu", "hidden_act \"relu\" is not supported"},
      {"hidden_act", "gelu_new", "hidden_act \"gelu_new\" is not supported"},
      {"position_embedding_type", "relative_key", "position_embedding_type \"relative_key\""},
      {"model_type", "roberta", "model_type \"roberta\" is not supported"},
  };
  for (const auto& [field, value, message] : cases) {
    nlohmann::json config = BertConfigJson(spec_.shape);
    config[field] = value;
    WriteJson("config.json", config);
    EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                 AllOf(HasSubstr("config.json"), HasSubstr(message))));
  }
}

TEST_F(BertModelTest, RefusesMalformedConfigs) {
  const std::vector<std::tuple<std::string, nlohmann::json, std::string>> cases = {
      {"hidden_size", 15, "hidden_size 15 is not a multiple of num_attention_heads 4"},
      {"num_hidden_layers", 0, "num_hidden_layers must be an integer in [1, 1024], got 0"},
      {"vocab_size", "64", "vocab_size must be an integer"},
      {"vocab_size", nullptr, "vocab_size is missing"},
      {"layer_norm_eps", -1, "layer_norm_eps must be a number in (0, 1]"},
  };
  for (const auto& [field, value, message] : cases) {
    nlohmann::json config = BertConfigJson(spec_.shape);
    config[field] = value;
    WriteJson("config.json", config);
    EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr(message))) << field;
  }
  WriteTextFile(dir_.path() / "config.json", "{\"vocab_size\": ");
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("config.json: not JSON")));
  std::filesystem::remove(dir_.path() / "config.json");
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kNotFound, HasSubstr("config.json")));
}

TEST_F(BertModelTest, RefusesPoolingItDoesNotRun) {
  WriteJson("1_Pooling/config.json", {{"pooling_mode_max_tokens", true}});
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("pooling modes set are [pooling_mode_max_tokens]")));
  WriteJson("1_Pooling/config.json",
            {{"pooling_mode_mean_tokens", true}, {"pooling_mode_cls_token", true}});
  EXPECT_THAT(Open(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("only pooling_mode_mean_tokens or pooling_mode_cls_token")));
  WriteJson("1_Pooling/config.json",
            {{"pooling_mode_mean_tokens", true}, {"word_embedding_dimension", 384}});
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss,
                               HasSubstr("word_embedding_dimension 384 is not hidden_size 16")));
  WriteJson("modules.json",
            nlohmann::json::array(
                {{{"path", ""}, {"type", "sentence_transformers.models.Transformer"}},
                 {{"path", "1_Pooling"}, {"type", "sentence_transformers.models.Pooling"}},
                 {{"path", "2_Dense"}, {"type", "sentence_transformers.models.Dense"}}}));
  WriteJson("1_Pooling/config.json", {{"pooling_mode_mean_tokens", true}});
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("module \"sentence_transformers.models.Dense\"")));
  WriteJson("modules.json",
            nlohmann::json::array(
                {{{"path", ""}, {"type", "sentence_transformers.models.Transformer"}}}));
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no sentence_transformers "
                                                                      "Pooling module")));
  std::filesystem::remove(dir_.path() / "modules.json");
  EXPECT_THAT(Open(), StatusIs(absl::StatusCode::kNotFound, HasSubstr("modules.json")));
}

TEST(Int8Linear, EveryKernelEqualsTheIntegerReferenceExactly) {
  // Shapes off every multiple: 13 token rows (two tiles of six and one), 38 columns (groups of
  // four and two), 61 and 115 outputs (blocks of 16 with a tail, and tiles of three blocks
  // with one or two left). Activations skewed to one side of zero, as GELU's are. The last
  // shape takes only the extremes (u8 0 and 255, s8 -127 and 127): two products of 255 * 127
  // overflow the 16-bit sums of vpmaddubsw, which the AVX2 kernel must not use.
  strata::testing::SplitMix64 rng(5);
  for (const auto& [rows, cols, out_rows, extremes] :
       {std::tuple{13, 38, 61, false}, std::tuple{1, 5, 115, false}, std::tuple{6, 384, 48, false},
        std::tuple{7, 64, 32, true}}) {
    std::vector<float> in = Uniform(rng, rows * cols, -0.2f, 3.0f);
    std::vector<float> weight = Uniform(rng, out_rows * cols, -0.5f, 0.5f);
    if (extremes) {
      for (float& v : in) v = v < 1.4f ? -0.2f : 3.0f;
      for (float& v : weight) v = v < 0 ? -0.5f : 0.5f;
    }
    const Int8Matrix w = QuantizeRows(FloatTensor::View({out_rows, cols}, weight.data()));
    Int8Activations x;
    QuantizeActivations(in.data(), rows, cols, 1, x);
    for (Int8Kernel kernel : {Int8Kernel::kPortable, Int8Kernel::kAvx2, Int8Kernel::kAvxVnni,
                              Int8Kernel::kAvx512Vnni}) {
      if (!Int8KernelAvailable(kernel)) {
        std::cout << "int8 kernel " << static_cast<int>(kernel) << " not on this CPU\n";
        continue;
      }
      std::vector<float> out(rows * out_rows);
      Int8Linear(in.data(), rows, w, out.data(), kernel);
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < out_rows; ++j) {
          int32_t dot = 0;
          int32_t sum = 0;
          double exact = 0;
          for (int c = 0; c < cols; ++c) {
            dot += int32_t{x.values[i * x.stride + c]} * w.at(j, c);
            sum += w.at(j, c);
            exact += double{in[i * cols + c]} * weight[j * cols + c];
          }
          ASSERT_EQ(sum, w.sums[j]);
          const float expected =
              static_cast<float>(dot - x.zeros[i] * sum) * (x.scales[i] * w.scales[j]);
          ASSERT_EQ(out[i * out_rows + j], expected)
              << "kernel " << static_cast<int>(kernel) << " row " << i << " output " << j;
          // The quantization error: half a step of each factor over `cols` products.
          EXPECT_NEAR(out[i * out_rows + j], exact, 0.004 * cols) << i << " " << j;
        }
      }
    }
  }
}

TEST(Int8Linear, ActivationsUseAllOfTheirByteWithTheZeroPoint) {
  const std::vector<float> in = {-0.1f, 0.0f, 2.5f, 5.0f, /*second row*/ 1.0f, 1.0f, 1.0f, 1.0f};
  Int8Activations x;
  QuantizeActivations(in.data(), 2, 4, 1, x);
  EXPECT_EQ(x.zeros[0], 5);  // 0.1 of a 5.1 range, in 255 steps
  EXPECT_EQ(x.values[0], 0);
  EXPECT_EQ(x.values[1], 5);
  EXPECT_EQ(x.values[3], 255);
  EXPECT_FLOAT_EQ(x.scales[0], 5.1f / 255);
  // A row of one value on one side of zero: the range reaches down to 0.
  EXPECT_EQ(x.zeros[1], 0);
  EXPECT_EQ(x.values[x.stride], 255);
}

TEST_F(BertModelTest, Int8KeepsItsSelfCheckOrFallsBack) {
  const auto texts = RandomTexts({3, 30, 11, 32}, spec_.shape.vocab_size);
  ASSERT_OK_AND_ASSIGN(auto fp32, Open());
  ASSERT_OK_AND_ASSIGN(const std::vector<float> reference, fp32->Encode(texts));
  EXPECT_FALSE(fp32->int8());

  ASSERT_OK_AND_ASSIGN(auto int8, BertEncoder::Open(dir_.path(), {.int8 = true}));
  EXPECT_GT(int8->int8_probe_cosine(), 0.9);
  EXPECT_LT(int8->int8_probe_cosine(), 1.0);
  EXPECT_EQ(int8->int8(), int8->int8_probe_cosine() >= 0.99);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> quantized, int8->Encode(texts));
  const int dim = int8->dimension();
  for (size_t t = 0; t < texts.size(); ++t) {
    double dot = 0, norm = 0;
    for (int i = 0; i < dim; ++i) {
      dot += double{reference[t * dim + i]} * quantized[t * dim + i];
      norm += double{quantized[t * dim + i]} * quantized[t * dim + i];
    }
    EXPECT_NEAR(norm, 1.0, 1e-5);
    EXPECT_GT(dot, 0.97) << "text " << t;
  }

  // A check that cannot hold leaves the encoder in fp32, exactly.
  ASSERT_OK_AND_ASSIGN(auto strict,
                       BertEncoder::Open(dir_.path(), {.int8 = true, .int8_min_cosine = 1.1}));
  EXPECT_FALSE(strict->int8());
  EXPECT_THAT(strict->Encode(texts), strata::testing::IsOkAndHolds(reference));
}

}  // namespace
}  // namespace strata::embed::bert
