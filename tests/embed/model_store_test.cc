// Installing models into the cache: import from a directory, the checks that keep a wrong
// file out, the refusals, verify, and bert:model=NAME. (Downloads: tests/e2e/test_model.py.)

#include "embed/model_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "embed/model_download.h"
#include "embed/registry.h"
#include "testing/bert_model.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "util/sha256.h"

namespace strata::embed {
namespace {

namespace fs = std::filesystem;
using ::strata::testing::BertModelSpec;
using ::strata::testing::StatusIs;
using ::strata::testing::TempDir;
using ::testing::HasSubstr;

constexpr const char* kFiles[] = {"config.json",           "vocab.txt",
                                  "tokenizer_config.json", "modules.json",
                                  "1_Pooling/config.json", "model.safetensors"};

// A tiny random model in tmp/source and a confirmed card whose sizes and digests are its own.
ModelCard WriteSourceModel(const TempDir& tmp) {
  const fs::path source = tmp.path() / "source";
  testing::WriteBertModel(source, BertModelSpec{});
  testing::WriteBertTokenizer(source);
  ModelCard card{.name = "tiny",
                 .repository = "test/tiny",
                 .revision = "abc",
                 .dimension = 16,
                 .pooling = "mean",
                 .confirmed = true};
  for (const char* path : kFiles) {
    const std::string digest = *Sha256File(source / path);
    card.files.push_back(ModelFile{.path = path,
                                   .size = static_cast<int64_t>(fs::file_size(source / path)),
                                   .sha256 = digest});
  }
  return card;
}

TEST(ModelStore, CacheDirFollowsXdgThenHome) {
  ASSERT_EQ(setenv("XDG_CACHE_HOME", "/x/cache", 1), 0);
  EXPECT_EQ(ModelCacheDir(), fs::path("/x/cache/strata/models"));
  ASSERT_EQ(unsetenv("XDG_CACHE_HOME"), 0);
  ASSERT_EQ(setenv("HOME", "/home/u", 1), 0);
  EXPECT_EQ(ModelCacheDir(), fs::path("/home/u/.cache/strata/models"));
}

TEST(ModelStore, ImportInstallsACheckedModelThatBertLoadsByName) {
  TempDir tmp;
  const ModelCard card = WriteSourceModel(tmp);
  const fs::path cache = tmp.path() / "cache" / "strata" / "models";
  EXPECT_THAT(InstalledModelDir(cache, "tiny"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("strata model fetch tiny")));
  auto report = ImportModel(card, tmp.path() / "source", cache, false);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->dir, cache / "tiny");
  ASSERT_EQ(report->files.size(), card.files.size());
  EXPECT_EQ(report->files[5].sha256, card.files[5].sha256);
  EXPECT_FALSE(fs::exists(cache / "tiny.partial"));
  ASSERT_TRUE(InstalledModelDir(cache, "tiny").ok());
  fs::create_directories(cache / "other.partial");
  EXPECT_THAT(InstalledModelDir(cache, "other.partial"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("not installed")));

  ASSERT_EQ(setenv("XDG_CACHE_HOME", (tmp.path() / "cache").c_str(), 1), 0);
  auto by_name = MakeEmbedder("bert:model=tiny");
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  auto by_dir = MakeEmbedder("bert:dir=" + (cache / "tiny").string());
  ASSERT_TRUE(by_dir.ok()) << by_dir.status();
  EXPECT_EQ((*by_name)->info().Fingerprint(), (*by_dir)->info().Fingerprint());
  EXPECT_THAT(MakeEmbedder("bert:model=absent"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("not installed")));
  EXPECT_THAT(MakeEmbedder("bert:model=tiny,dir=/x"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("one of")));
  ASSERT_EQ(unsetenv("XDG_CACHE_HOME"), 0);

  // An installed model is never written over.
  EXPECT_THAT(ImportModel(card, tmp.path() / "source", cache, false),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("already installed")));
}

TEST(ModelStore, AWrongDigestOrSizeInstallsNothing) {
  TempDir tmp;
  ModelCard card = WriteSourceModel(tmp);
  const fs::path cache = tmp.path() / "cache";
  const std::string digest = card.files[5].sha256;
  card.files[5].sha256 = std::string(64, '0');
  EXPECT_THAT(
      ImportModel(card, tmp.path() / "source", cache, false),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("model.safetensors: SHA-256 " + digest)));
  EXPECT_FALSE(fs::exists(cache / "tiny"));
  EXPECT_FALSE(fs::exists(cache / "tiny.partial" / "model.safetensors"));

  card = WriteSourceModel(tmp);
  card.files[0].size += 1;
  EXPECT_THAT(ImportModel(card, tmp.path() / "source", cache, false),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("config.json: ")));
  EXPECT_FALSE(fs::exists(cache / "tiny"));

  EXPECT_THAT(ImportModel(WriteSourceModel(tmp), tmp.path() / "nowhere", cache, false),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("nowhere")));
  EXPECT_FALSE(fs::exists(cache / "tiny"));
}

TEST(ModelStore, AnUnconfirmedCardNeedsConsentAndReportsWhatItInstalled) {
  TempDir tmp;
  const ModelCard checked = WriteSourceModel(tmp);
  ModelCard card = checked;
  card.confirmed = false;
  for (ModelFile& file : card.files) file = ModelFile{.path = file.path};
  const fs::path cache = tmp.path() / "cache";
  EXPECT_THAT(ImportModel(card, tmp.path() / "source", cache, false),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("--allow-unconfirmed")));
  EXPECT_FALSE(fs::exists(cache / "tiny"));
  auto report = ImportModel(card, tmp.path() / "source", cache, true);
  ASSERT_TRUE(report.ok()) << report.status();
  for (size_t i = 0; i < card.files.size(); ++i) {
    EXPECT_EQ(report->files[i].size, checked.files[i].size);
    EXPECT_EQ(report->files[i].sha256, checked.files[i].sha256);
  }
}

TEST(ModelStore, VerifyChecksTheFilesAndTheKnownAnswer) {
  TempDir tmp;
  ModelCard card = WriteSourceModel(tmp);
  const fs::path cache = tmp.path() / "cache";
  EXPECT_THAT(VerifyModel(card, cache), StatusIs(absl::StatusCode::kNotFound, HasSubstr("tiny")));
  ASSERT_TRUE(ImportModel(card, tmp.path() / "source", cache, false).ok());

  auto plain = VerifyModel(card, cache);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->dimension, 16);
  EXPECT_FALSE(plain->known_answer_cosine.has_value());

  // The known answer is fp32's (a reference implementation's), whatever the CPU runs by default.
  auto embedder = MakeEmbedder("bert:dir=" + (cache / "tiny").string() + ",int8=0");
  ASSERT_TRUE(embedder.ok());
  const std::string input(kKnownAnswerInput);
  card.known_answer = *(*embedder)->Embed(std::span<const std::string>(&input, 1), Role::kDocument);
  auto known = VerifyModel(card, cache);
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_NEAR(*known->known_answer_cosine, 1.0, 1e-6);

  for (float& v : card.known_answer) v = -v;
  EXPECT_THAT(VerifyModel(card, cache),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("known-answer")));
  card.known_answer.clear();
  card.dimension = 384;
  EXPECT_THAT(VerifyModel(card, cache), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("384")));
  card.dimension = 16;
  std::ofstream(cache / "tiny" / "vocab.txt", std::ios::app) << "extra\n";
  EXPECT_THAT(VerifyModel(card, cache),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("vocab.txt")));
}

TEST(ModelStore, FetchFromNowhereIsUnavailableAndInstallsNothing) {
  TempDir tmp;
  const ModelCard card = WriteSourceModel(tmp);
  const fs::path cache = tmp.path() / "cache";
  // Port 1 on the loopback refuses at once.
  auto fetched = FetchModel(card, {.endpoint = "http://127.0.0.1:1",
                                   .cache_dir = cache,
                                   .stall_timeout_seconds = 2,
                                   .attempts = 2});
  if (!DownloadSupported()) {
    EXPECT_THAT(fetched, StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("import")));
  } else {
    EXPECT_THAT(fetched, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("127.0.0.1:1")));
  }
  EXPECT_FALSE(fs::exists(cache / "tiny"));
}

}  // namespace
}  // namespace strata::embed
