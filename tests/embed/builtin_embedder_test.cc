// embed::MakeBuiltinEmbedder and embed::MakeEmbedder: determinism (across instances and
// threads), unit norm, the zero vector, options and their errors, the fingerprint, and a
// paraphrase sanity check of the similarity the dense arm relies on.

#include "embed/builtin_embedder.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "embed/embedder.h"
#include "embed/lexicon/lexicon.h"
#include "embed/registry.h"
#include "testing/status_matchers.h"

namespace strata::embed {
namespace {

using ::strata::testing::StatusIs;
using ::testing::_;
using ::testing::AllOf;
using ::testing::HasSubstr;

using Options = std::vector<std::pair<std::string, std::string>>;

std::unique_ptr<Embedder> MakeOrDie(const Options& options = {}) {
  absl::StatusOr<std::unique_ptr<Embedder>> embedder = MakeBuiltinEmbedder(options);
  EXPECT_TRUE(embedder.ok()) << embedder.status();
  return embedder.ok() ? std::move(*embedder) : nullptr;
}

// The vector of one text; empty on error (which fails the test).
std::vector<float> EmbedOne(Embedder& embedder, const std::string& text) {
  absl::StatusOr<std::vector<float>> v =
      embedder.Embed(std::span<const std::string>(&text, 1), Role::kDocument);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>();
}

double Norm(const std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += double{x} * x;
  return std::sqrt(sum);
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) dot += double{a[i]} * b[i];
  return dot / (Norm(a) * Norm(b));
}

const std::vector<std::string>& Texts() {
  static const auto* texts = new std::vector<std::string>{
      "She drinks green tea after lunch",
      "We chose PostgreSQL for billing because of its transactional guarantees",
      "deploy the kubernetes cluster upgrade on Friday",
      "Alice's favourite colour is blue",
      "naïve café résumé — non-ASCII words count too",
      "running runs ran runner",
  };
  return *texts;
}

TEST(BuiltinEmbedder, SameTextGivesIdenticalFloatsAcrossInstances) {
  std::unique_ptr<Embedder> first = MakeOrDie();
  std::unique_ptr<Embedder> second = MakeOrDie();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> a, first->Embed(Texts(), Role::kDocument));
  ASSERT_OK_AND_ASSIGN(const std::vector<float> b, second->Embed(Texts(), Role::kDocument));
  ASSERT_OK_AND_ASSIGN(const std::vector<float> again, first->Embed(Texts(), Role::kDocument));
  ASSERT_EQ(a.size(), Texts().size() * kBuiltinDefaultDim);
  EXPECT_EQ(a, b);  // Bit for bit, not approximately.
  EXPECT_EQ(a, again);
}

TEST(BuiltinEmbedder, BatchEqualsOneAtATime) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> batch, embedder->Embed(Texts(), Role::kDocument));
  const size_t dim = embedder->info().dimension;
  for (size_t i = 0; i < Texts().size(); ++i) {
    const std::vector<float> one = EmbedOne(*embedder, Texts()[i]);
    EXPECT_EQ(one, std::vector<float>(batch.begin() + i * dim, batch.begin() + (i + 1) * dim))
        << Texts()[i];
  }
}

TEST(BuiltinEmbedder, SameTextGivesIdenticalFloatsAcrossThreads) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> expected,
                       embedder->Embed(Texts(), Role::kDocument));
  constexpr int kThreads = 8;
  constexpr int kRounds = 20;
  std::vector<int> mismatches(kThreads, 0);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRounds; ++r) {
          absl::StatusOr<std::vector<float>> v = embedder->Embed(Texts(), Role::kDocument);
          if (!v.ok() || *v != expected) ++mismatches[t];
        }
      });
    }
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(BuiltinEmbedder, VectorsHaveUnitNorm) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  for (const std::string& text : Texts()) {
    const std::vector<float> v = EmbedOne(*embedder, text);
    ASSERT_EQ(v.size(), static_cast<size_t>(kBuiltinDefaultDim));
    EXPECT_NEAR(Norm(v), 1.0, 1e-5) << text;
  }
}

TEST(BuiltinEmbedder, TextWithNothingToEmbedIsTheZeroVector) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  for (const std::string text :
       {"", "   ", "?!.,;:", "the and of to", "What does she usually do"}) {
    const std::vector<float> v = EmbedOne(*embedder, text);
    ASSERT_EQ(v.size(), static_cast<size_t>(kBuiltinDefaultDim)) << "\"" << text << "\"";
    EXPECT_EQ(Norm(v), 0.0) << "\"" << text << "\"";
  }
}

TEST(BuiltinEmbedder, EmptyBatchGivesNoFloats) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> v, embedder->Embed({}, Role::kDocument));
  EXPECT_TRUE(v.empty());
}

TEST(BuiltinEmbedder, DimensionOptionIsRespected) {
  for (const int dim : {64, 128, 1000, 4096}) {
    std::unique_ptr<Embedder> embedder = MakeOrDie({{"dim", std::to_string(dim)}});
    ASSERT_NE(embedder, nullptr) << dim;
    EXPECT_EQ(embedder->info().dimension, dim);
    const std::vector<float> v = EmbedOne(*embedder, "green tea after lunch");
    EXPECT_EQ(v.size(), static_cast<size_t>(dim));
    EXPECT_NEAR(Norm(v), 1.0, 1e-5) << dim;
  }
}

TEST(BuiltinEmbedder, DefaultInfo) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  EXPECT_EQ(embedder->info().name, "builtin");
  EXPECT_EQ(embedder->info().dimension, kBuiltinDefaultDim);
  EXPECT_GT(embedder->batch_size(), 0);
}

TEST(BuiltinEmbedder, UnknownOptionIsRejectedNamingIt) {
  EXPECT_THAT(MakeBuiltinEmbedder({{"dimension", "128"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dimension")));
  EXPECT_THAT(MakeBuiltinEmbedder({{"model", "x"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("model")));
}

TEST(BuiltinEmbedder, BadValueIsRejectedNamingTheOptionAndValue) {
  const Options bad[] = {
      {{"dim", "63"}},     {{"dim", "4097"}},    {{"dim", "abc"}},      {{"dim", ""}},
      {{"dim", "128x"}},   {{"dim", "-1"}},      {{"ngram", "-0.5"}},   {{"lexicon", "11"}},
      {{"bigram", "nan"}}, {{"ngram", "1e999"}}, {{"thesaurus", "-1"}}, {{"thgeneric", "x"}},
      {{"seed", "1.5"}},   {{"seed", "-2"}},     {{"seed", "2000000"}},
  };
  for (const Options& options : bad) {
    const auto& [key, value] = options[0];
    EXPECT_THAT(MakeBuiltinEmbedder(options), StatusIs(absl::StatusCode::kInvalidArgument,
                                                       AllOf(HasSubstr(key), HasSubstr(value))))
        << key << "=" << value;
  }
}

TEST(BuiltinEmbedder, DefaultFingerprintNamesTheVersionAndTheLexicon) {
  // Version 3, then the compiled-in lexicon's checksum: a store embedded by an older version,
  // or by a build against other WordNet files, re-embeds into a new space.
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  char checksum[9];
  std::snprintf(checksum, sizeof checksum, "%08x",
                static_cast<unsigned>(Lexicon::Get().checksum() & 0xffffffffu));
  EXPECT_EQ(embedder->info().Fingerprint(), absl::StrCat("builtin/3.", checksum, "/384/"));
  EXPECT_NE(Lexicon::Get().checksum(), 0u);
}

TEST(BuiltinEmbedder, FingerprintChangesWithDimensionAndWeights) {
  auto fingerprint = [](const Options& options) {
    absl::StatusOr<std::unique_ptr<Embedder>> e = MakeBuiltinEmbedder(options);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? (*e)->info().Fingerprint() : std::string("<error>");
  };
  const std::string base = fingerprint({});
  EXPECT_EQ(base, fingerprint({}));
  EXPECT_EQ(base, fingerprint({{"dim", std::to_string(kBuiltinDefaultDim)}}));
  EXPECT_NE(base, fingerprint({{"dim", "128"}}));
  EXPECT_NE(base, fingerprint({{"ngram", "0.25"}}));
  EXPECT_NE(base, fingerprint({{"lexicon", "0"}}));
  EXPECT_NE(base, fingerprint({{"bigram", "0.3"}}));
  EXPECT_NE(base, fingerprint({{"thesaurus", "0"}}));
  EXPECT_NE(base, fingerprint({{"thgeneric", "2"}}));
  EXPECT_NE(base, fingerprint({{"seed", "1"}}));
  EXPECT_NE(fingerprint({{"seed", "1"}}), fingerprint({{"seed", "2"}}));
  EXPECT_NE(fingerprint({{"ngram", "0.25"}}), fingerprint({{"lexicon", "0.25"}}));
  // Options are recorded sorted: the order they were given in does not matter.
  EXPECT_EQ(fingerprint({{"ngram", "0.25"}, {"bigram", "0.3"}}),
            fingerprint({{"bigram", "0.3"}, {"ngram", "0.25"}}));
}

TEST(BuiltinEmbedder, DifferentWeightsGiveDifferentVectors) {
  std::unique_ptr<Embedder> base = MakeOrDie();
  std::unique_ptr<Embedder> no_lexicon = MakeOrDie({{"lexicon", "0"}});
  ASSERT_NE(base, nullptr);
  ASSERT_NE(no_lexicon, nullptr);
  EXPECT_NE(EmbedOne(*base, "green tea"), EmbedOne(*no_lexicon, "green tea"));
}

TEST(BuiltinEmbedder, ThesaurusTermsMeetTheOtherTextsWords) {
  // MyThes lists "maintain" as a synonym of "assert"; no WordNet feature links the two (see
  // lexicon_test.cc), so without the thesaurus the texts share only hashing noise.
  std::unique_ptr<Embedder> with = MakeOrDie();
  std::unique_ptr<Embedder> without = MakeOrDie({{"thesaurus", "0"}});
  ASSERT_NE(with, nullptr);
  ASSERT_NE(without, nullptr);
  const double linked = Cosine(EmbedOne(*with, "they assert it"), EmbedOne(*with, "we maintain"));
  const double unlinked =
      Cosine(EmbedOne(*without, "they assert it"), EmbedOne(*without, "we maintain"));
  EXPECT_GT(linked, unlinked + 0.05) << "with thesaurus " << linked << ", without " << unlinked;
  // Inflected forms too ("asserted" -> assert; "maintaining" has the stem "maintain").
  EXPECT_GT(Cosine(EmbedOne(*with, "she asserted"), EmbedOne(*with, "maintaining")),
            Cosine(EmbedOne(*without, "she asserted"), EmbedOne(*without, "maintaining")) + 0.05);
}

TEST(BuiltinEmbedder, ThesaurusRelationWeightsApply) {
  // "hatchback" has generic terms ("car"): weighing them differently changes its vector; a text
  // without thesaurus terms of that relation does not change.
  std::unique_ptr<Embedder> base = MakeOrDie();
  std::unique_ptr<Embedder> no_generic = MakeOrDie({{"thgeneric", "0"}});
  ASSERT_NE(base, nullptr);
  ASSERT_NE(no_generic, nullptr);
  EXPECT_NE(EmbedOne(*base, "hatchback"), EmbedOne(*no_generic, "hatchback"));
  EXPECT_EQ(EmbedOne(*base, "PostgreSQL xqzzyv"), EmbedOne(*no_generic, "PostgreSQL xqzzyv"));
}

TEST(BuiltinEmbedder, SeedChangesTheHashNotTheDeterminism) {
  std::unique_ptr<Embedder> base = MakeOrDie();
  std::unique_ptr<Embedder> seeded = MakeOrDie({{"seed", "3"}});
  std::unique_ptr<Embedder> seeded_again = MakeOrDie({{"seed", "3"}});
  ASSERT_NE(base, nullptr);
  ASSERT_NE(seeded, nullptr);
  ASSERT_NE(seeded_again, nullptr);
  ASSERT_OK_AND_ASSIGN(const std::vector<float> a, base->Embed(Texts(), Role::kDocument));
  ASSERT_OK_AND_ASSIGN(const std::vector<float> b, seeded->Embed(Texts(), Role::kDocument));
  ASSERT_OK_AND_ASSIGN(const std::vector<float> c, seeded_again->Embed(Texts(), Role::kDocument));
  EXPECT_NE(a, b);
  EXPECT_EQ(b, c);
  EXPECT_EQ(MakeOrDie({{"seed", "0"}})->Embed(Texts(), Role::kDocument).value(), a);
}

TEST(BuiltinEmbedder, ParaphraseIsCloserThanAnUnrelatedMemory) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  const std::vector<float> memory = EmbedOne(*embedder, "She drinks green tea after lunch");
  const std::vector<float> paraphrase = EmbedOne(*embedder, "hot beverage in the afternoon");
  const std::vector<float> unrelated = EmbedOne(*embedder, "We chose PostgreSQL for billing");
  const double related = Cosine(memory, paraphrase);
  const double other = Cosine(memory, unrelated);
  EXPECT_GT(related, other) << "paraphrase " << related << ", unrelated " << other;
  EXPECT_GT(related, 0.0);
}

TEST(BuiltinEmbedder, WordFormsShareTheirStem) {
  std::unique_ptr<Embedder> embedder = MakeOrDie();
  ASSERT_NE(embedder, nullptr);
  const std::vector<float> runs = EmbedOne(*embedder, "she runs every morning");
  EXPECT_GT(Cosine(runs, EmbedOne(*embedder, "running")),
            Cosine(runs, EmbedOne(*embedder, "database schema migration")));
}

TEST(MakeEmbedder, NoneIsNull) {
  ASSERT_OK_AND_ASSIGN(const std::unique_ptr<Embedder> embedder, MakeEmbedder("none"));
  EXPECT_EQ(embedder, nullptr);
  EXPECT_THAT(MakeEmbedder("none:dim=3"), StatusIs(absl::StatusCode::kInvalidArgument, _));
}

TEST(MakeEmbedder, UnknownNameIsRejectedNamingIt) {
  EXPECT_THAT(MakeEmbedder("foo"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("foo")));
  EXPECT_THAT(MakeEmbedder("foo:dim=3"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("foo")));
}

TEST(MakeEmbedder, BuiltinSpecCarriesOptions) {
  ASSERT_OK_AND_ASSIGN(const std::unique_ptr<Embedder> plain, MakeEmbedder("builtin"));
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->info().dimension, kBuiltinDefaultDim);
  ASSERT_OK_AND_ASSIGN(const std::unique_ptr<Embedder> small, MakeEmbedder("builtin:dim=128"));
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->info().dimension, 128);
  EXPECT_NE(plain->info().Fingerprint(), small->info().Fingerprint());
  EXPECT_THAT(MakeEmbedder("builtin:size=3"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("size")));
}

TEST(MakeEmbedder, AnyEmbedderTakesRolePrefixes) {
  ASSERT_OK_AND_ASSIGN(const std::unique_ptr<Embedder> plain, MakeEmbedder("builtin"));
  ASSERT_OK_AND_ASSIGN(const std::unique_ptr<Embedder> prefixed,
                       MakeEmbedder("builtin:query_prefix=find: ,document_prefix=note: "));
  EXPECT_EQ(prefixed->info().Fingerprint(), plain->info().Fingerprint() + "document_prefix=note: ");
  const std::vector<std::string> text = {"the invoices live in postgres"};
  const std::vector<std::string> as_query = {"find: the invoices live in postgres"};
  const std::vector<std::string> as_document = {"note: the invoices live in postgres"};
  EXPECT_EQ(*prefixed->Embed(text, Role::kQuery), *plain->Embed(as_query, Role::kQuery));
  EXPECT_EQ(*prefixed->Embed(text, Role::kDocument), *plain->Embed(as_document, Role::kDocument));
}

}  // namespace
}  // namespace strata::embed
