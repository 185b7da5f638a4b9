// The compiled-in model manifest and the manifest file format ($STRATA_MODEL_MANIFEST).

#include "embed/model_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::embed {
namespace {

using ::strata::testing::StatusIs;
using ::strata::testing::TempDir;
using ::testing::HasSubstr;

constexpr char kDigest[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Card(const std::string& fields) {
  return R"({"name": "tiny", "repository": "test/tiny", "revision": "abc", "dimension": 4,
             "pooling": "mean", "files": [{"path": "config.json"}])" +
         fields + "}";
}

TEST(ModelManifest, NamesTheThreeModelsWithTheirShapes) {
  const auto cards = BuiltinManifest();
  const ModelCard* minilm = FindModel(cards, "all-MiniLM-L6-v2");
  const ModelCard* bge = FindModel(cards, "bge-small-en-v1.5");
  const ModelCard* e5 = FindModel(cards, "e5-small-v2");
  ASSERT_NE(minilm, nullptr);
  ASSERT_NE(bge, nullptr);
  ASSERT_NE(e5, nullptr);
  EXPECT_EQ(FindModel(cards, "all-minilm-l6-v2"), nullptr);
  EXPECT_EQ(minilm->repository, "sentence-transformers/all-MiniLM-L6-v2");
  EXPECT_EQ(minilm->pooling, "mean");
  EXPECT_EQ(bge->pooling, "cls");
  EXPECT_EQ(bge->query_prefix, "Represent this sentence for searching relevant passages: ");
  EXPECT_EQ(bge->document_prefix, "");
  EXPECT_EQ(e5->query_prefix, "query: ");
  EXPECT_EQ(e5->document_prefix, "passage: ");
  for (const ModelCard& card : cards) {
    EXPECT_EQ(card.dimension, 384) << card.name;
    EXPECT_TRUE(std::any_of(card.files.begin(), card.files.end(), [](const ModelFile& f) {
      return f.path == "model.safetensors";
    })) << card.name;
  }
}

// Nothing checked these against the hub: no card may claim otherwise.
TEST(ModelManifest, UnconfirmedCardsRecordNoDigestAsIfChecked) {
  for (const ModelCard& card : BuiltinManifest()) {
    if (card.confirmed) continue;
    for (const ModelFile& file : card.files) {
      EXPECT_TRUE(file.sha256.empty()) << card.name << " " << file.path;
      EXPECT_EQ(file.size, -1) << card.name << " " << file.path;
    }
    EXPECT_TRUE(card.known_answer.empty()) << card.name;
  }
}

TEST(ModelManifest, ParsesACard) {
  auto cards = ParseManifest("[" +
                             Card(R"(, "query_prefix": "q: ", "known_answer": [1, 0, 0, 0],
                                    "confirmed": true,
                                    "files": [{"path": "1_Pooling/config.json", "size": 0,
                                               "sha256": ")" +
                                  std::string(kDigest) + R"("}])") +
                             "]");
  ASSERT_TRUE(cards.ok()) << cards.status();
  ASSERT_EQ(cards->size(), 1u);
  const ModelCard& card = (*cards)[0];
  EXPECT_EQ(card.name, "tiny");
  EXPECT_EQ(card.query_prefix, "q: ");
  EXPECT_TRUE(card.confirmed);
  ASSERT_EQ(card.files.size(), 1u);
  EXPECT_EQ(card.files[0].path, "1_Pooling/config.json");
  EXPECT_EQ(card.files[0].size, 0);
  EXPECT_EQ(card.files[0].sha256, kDigest);
  EXPECT_EQ(card.known_answer, (std::vector<float>{1, 0, 0, 0}));
}

TEST(ModelManifest, RefusesWhatCouldEscapeTheCacheOrClaimAnUncheckedDigest) {
  const auto fails = [](const std::string& text, const std::string& why) {
    EXPECT_THAT(ParseManifest(text), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(why)))
        << text;
  };
  fails("{}", "array");
  fails("[" + Card(R"(, "name": "../up")") + "]", "name");
  fails("[" + Card(R"(, "files": [{"path": "../config.json"}])") + "]", "path");
  fails("[" + Card(R"(, "files": [{"path": "/etc/passwd"}])") + "]", "path");
  fails("[" + Card(R"(, "files": [{"path": "a", "sha256": "ABC"}])") + "]", "sha256");
  fails("[" + Card(R"(, "confirmed": true)") + "]", "confirmed");
  fails("[" + Card(R"(, "pooling": "max")") + "]", "pooling");
  fails("[" + Card(R"(, "known_answer": [1])") + "]", "known_answer");
  fails("[" + Card("") + "," + Card("") + "]", "twice");
  fails(R"([{"name": "tiny"}])", "tiny");
}

TEST(ModelManifest, TheEnvironmentNamesAManifestFile) {
  TempDir tmp;
  std::ofstream(tmp.File("manifest.json")) << "[" << Card("") << "]";
  ASSERT_EQ(setenv("STRATA_MODEL_MANIFEST", tmp.File("manifest.json").c_str(), 1), 0);
  auto cards = LoadManifest();
  ASSERT_TRUE(cards.ok()) << cards.status();
  EXPECT_NE(FindModel(*cards, "tiny"), nullptr);
  EXPECT_EQ(FindModel(*cards, "e5-small-v2"), nullptr);
  ASSERT_EQ(setenv("STRATA_MODEL_MANIFEST", tmp.File("missing.json").c_str(), 1), 0);
  EXPECT_THAT(LoadManifest(), StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.json")));
  ASSERT_EQ(unsetenv("STRATA_MODEL_MANIFEST"), 0);
  auto builtin = LoadManifest();
  ASSERT_TRUE(builtin.ok());
  EXPECT_EQ(builtin->size(), BuiltinManifest().size());
}

}  // namespace
}  // namespace strata::embed
