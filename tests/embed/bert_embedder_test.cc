// The "bert" embedder end to end on a tiny random model directory (testing/bert_model.h plus
// a written vocab.txt): the Embedder contract, the fingerprint, and the option errors.

#include "embed/bert_embedder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "embed/bert/int8.h"
#include "embed/registry.h"
#include "testing/bert_model.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::embed {
namespace {

using ::strata::testing::BertModelSpec;
using ::strata::testing::StatusIs;
using ::strata::testing::TempDir;
using ::strata::testing::WriteBertModel;
using ::strata::testing::WriteBertTokenizer;
using ::strata::testing::WriteTextFile;
using ::testing::HasSubstr;
using ::testing::Not;

std::string WriteModel(const TempDir& tmp, const std::string& name, uint64_t seed = 1) {
  const std::filesystem::path dir = tmp.path() / name;
  BertModelSpec spec;
  spec.seed = seed;
  WriteBertModel(dir, spec);
  WriteBertTokenizer(dir);
  return dir.string();
}

TEST(BertEmbedderTest, EmbedsUnitVectorsDeterministically) {
  TempDir tmp;
  const std::string dir = WriteModel(tmp, "tiny");
  auto embedder = MakeEmbedder("bert:dir=" + dir);
  ASSERT_TRUE(embedder.ok()) << embedder.status();
  ASSERT_NE(*embedder, nullptr);
  const EmbedderInfo& info = (*embedder)->info();
  EXPECT_EQ(info.name, "bert");
  EXPECT_EQ(info.version, "1");
  EXPECT_EQ(info.dimension, 16);
  EXPECT_THAT(info.options, HasSubstr("model=tiny"));
  EXPECT_THAT(info.options, HasSubstr("pooling=mean"));
  EXPECT_THAT(info.options, HasSubstr("sha="));
  EXPECT_EQ((*embedder)->batch_size(), 16);

  const std::vector<std::string> texts = {"hello world", "The cat sat on the mat.", "",
                                          "dogs ran fast!"};
  auto batch = (*embedder)->Embed(texts, Role::kDocument);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->size(), texts.size() * 16);
  for (size_t t = 0; t < texts.size(); ++t) {
    double norm = 0;
    for (int d = 0; d < 16; ++d) norm += (*batch)[t * 16 + d] * (*batch)[t * 16 + d];
    EXPECT_NEAR(std::sqrt(norm), 1.0, 1e-5) << texts[t];
  }
  auto again = (*embedder)->Embed(texts, Role::kDocument);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *batch);
  for (size_t t = 0; t < texts.size(); ++t) {
    auto alone = (*embedder)->Embed(std::span<const std::string>(&texts[t], 1), Role::kDocument);
    ASSERT_TRUE(alone.ok());
    ASSERT_EQ(alone->size(), 16u);
    for (int d = 0; d < 16; ++d) EXPECT_NEAR((*alone)[d], (*batch)[t * 16 + d], 1e-5);
  }
  auto none = (*embedder)->Embed({}, Role::kDocument);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(BertEmbedderTest, FingerprintFollowsTheModel) {
  TempDir tmp;
  const std::string dir = WriteModel(tmp, "m");
  auto first = MakeEmbedder("bert:dir=" + dir);
  ASSERT_TRUE(first.ok()) << first.status();
  auto same = MakeEmbedder("bert:dir=" + dir);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*first)->info().Fingerprint(), (*same)->info().Fingerprint());

  // Other weights of the same shapes: the same safetensors header and size.
  BertModelSpec reseeded;
  reseeded.seed = 3;
  WriteBertModel(dir, reseeded);
  auto reweighted = MakeEmbedder("bert:dir=" + dir);
  ASSERT_TRUE(reweighted.ok()) << reweighted.status();
  EXPECT_NE((*first)->info().Fingerprint(), (*reweighted)->info().Fingerprint());

  // The same model re-exported in F16: another safetensors header and size.
  BertModelSpec other;
  other.seed = 2;
  other.dtype = "F16";
  WriteBertModel(dir, other);
  auto changed = MakeEmbedder("bert:dir=" + dir);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE((*first)->info().Fingerprint(), (*changed)->info().Fingerprint());

  WriteTextFile(std::filesystem::path(dir) / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  auto revocab = MakeEmbedder("bert:dir=" + dir);
  ASSERT_TRUE(revocab.ok()) << revocab.status();
  EXPECT_NE((*changed)->info().Fingerprint(), (*revocab)->info().Fingerprint());
}

TEST(BertEmbedderTest, Int8IsInTheFingerprintWhenItRuns) {
  TempDir tmp;
  const std::string dir = WriteModel(tmp, "m");
  auto fp32 = MakeEmbedder("bert:dir=" + dir + ",int8=0");
  auto int8 = MakeEmbedder("bert:dir=" + dir + ",int8=1");
  auto automatic = MakeEmbedder("bert:dir=" + dir);
  auto named_auto = MakeEmbedder("bert:dir=" + dir + ",int8=auto");
  ASSERT_TRUE(fp32.ok() && int8.ok() && automatic.ok() && named_auto.ok()) << int8.status();
  EXPECT_THAT((*fp32)->info().options, Not(HasSubstr("dtype")));
  // The default: int8 where a SIMD kernel runs it, else fp32.
  const bool simd = bert::BestInt8Kernel() != bert::Int8Kernel::kPortable;
  EXPECT_EQ((*automatic)->info().Fingerprint(),
            (simd ? *int8 : *fp32)->info().Fingerprint());
  EXPECT_EQ((*named_auto)->info().Fingerprint(), (*automatic)->info().Fingerprint());
  const std::vector<std::string> texts = {"hello world", "The cat sat on the mat."};
  auto reference = (*fp32)->Embed(texts, Role::kDocument);
  auto quantized = (*int8)->Embed(texts, Role::kDocument);
  ASSERT_TRUE(reference.ok() && quantized.ok());
  // int8 runs only when its self-check held; then its vectors, and so its space, differ.
  const bool runs = (*int8)->info().options.find(",dtype=int8") != std::string::npos;
  EXPECT_EQ(runs, (*fp32)->info().Fingerprint() != (*int8)->info().Fingerprint());
  EXPECT_EQ(runs, *reference != *quantized);
  EXPECT_THAT(MakeEmbedder("bert:dir=" + dir + ",int8=yes").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("int8 must be 0, 1 or auto")));
}

TEST(BertEmbedderTest, ClearErrors) {
  TempDir tmp;
  EXPECT_THAT(MakeEmbedder("bert").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dir")));
  EXPECT_THAT(MakeEmbedder("bert:").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dir")));
  const std::string dir = WriteModel(tmp, "m");
  EXPECT_THAT(MakeEmbedder("bert:dir=" + dir + ",size=3").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"size\"")));
  EXPECT_THAT(MakeEmbedder("bert:dir=" + tmp.File("nowhere")).status(),
              StatusIs(absl::StatusCode::kNotFound,
                       ::testing::AllOf(HasSubstr("embedder bert: "), HasSubstr("nowhere"))));
  std::filesystem::remove(std::filesystem::path(dir) / "vocab.txt");
  EXPECT_THAT(
      MakeEmbedder("bert:dir=" + dir).status(),
      ::testing::Property(&absl::Status::message,
                          ::testing::AllOf(HasSubstr("embedder bert: "), HasSubstr("vocab.txt"))));
  WriteBertTokenizer(dir);
  WriteTextFile(std::filesystem::path(dir) / "config.json", "{not json");
  EXPECT_THAT(
      MakeEmbedder("bert:dir=" + dir).status(),
      ::testing::Property(&absl::Status::message, ::testing::AllOf(HasSubstr("embedder bert: "),
                                                                   HasSubstr("config.json"))));
  EXPECT_THAT(MakeEmbedder("nope").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bert")));
}

}  // namespace
}  // namespace strata::embed
