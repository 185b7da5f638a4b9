#include "embed/lexicon/lexicon.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "embed/lexicon/feature_ids.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::embed {
namespace {

using ::testing::IsEmpty;
using ::testing::Not;

std::vector<LexFeature> FeaturesOf(std::string_view word) {
  std::vector<LexFeature> out;
  Lexicon::Get().Features(word, out);
  return out;
}

std::vector<uint32_t> IdsOf(std::string_view word) {
  std::vector<uint32_t> ids;
  for (const LexFeature& f : FeaturesOf(word)) ids.push_back(f.id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// How many feature ids `a` and `b` have in common.
size_t SharedIds(std::string_view a, std::string_view b) {
  const std::vector<uint32_t> ids_a = IdsOf(a), ids_b = IdsOf(b);
  std::vector<uint32_t> shared;
  std::set_intersection(ids_a.begin(), ids_a.end(), ids_b.begin(), ids_b.end(),
                        std::back_inserter(shared));
  return shared.size();
}

// How many WordNet feature ids (synsets, gloss words: not thesaurus terms) `a` and `b` share.
size_t SharedWordNetIds(std::string_view a, std::string_view b) {
  std::vector<uint32_t> ids_a, ids_b, shared;
  for (uint32_t id : IdsOf(a)) {
    if (!IsTermId(id)) ids_a.push_back(id);
  }
  for (uint32_t id : IdsOf(b)) {
    if (!IsTermId(id)) ids_b.push_back(id);
  }
  std::set_intersection(ids_a.begin(), ids_a.end(), ids_b.begin(), ids_b.end(),
                        std::back_inserter(shared));
  return shared.size();
}

// The thesaurus-term features of `word` that match the word whose Snowball stem is `stem` in
// another text.
std::vector<LexFeature> TermsMatching(std::string_view word, std::string_view stem) {
  std::vector<LexFeature> out;
  for (const LexFeature& f : FeaturesOf(word)) {
    if (IsTermId(f.id) && TermKey(f.id) == TermId(stem, TermRelation::kSame)) out.push_back(f);
  }
  return out;
}

bool SameFeatures(const std::vector<LexFeature>& a, const std::vector<LexFeature>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const LexFeature& x, const LexFeature& y) {
                      return x.id == y.id && x.weight == y.weight;
                    });
}

TEST(Lexicon, HoldsMostOfWordNet) { EXPECT_GT(Lexicon::Get().words(), 50000u); }

TEST(Lexicon, GetReturnsOneTable) { EXPECT_EQ(&Lexicon::Get(), &Lexicon::Get()); }

TEST(Lexicon, TeaMeetsDrinkAndBeverage) {
  EXPECT_GE(SharedIds("tea", "drink"), 1u);
  EXPECT_GE(SharedIds("tea", "beverage"), 1u);
}

TEST(Lexicon, CatMeetsAnimal) {
  // Through the hypernym chain feline, carnivore, ..., chordate, animal.
  EXPECT_GE(SharedIds("cat", "animal"), 1u);
  EXPECT_GE(SharedIds("cats", "animals"), 1u);
}

TEST(Lexicon, HatchbackMeetsCarAndVehicle) {
  EXPECT_GE(SharedIds("hatchback", "car"), 1u);
  EXPECT_GE(SharedIds("hatchback", "vehicle"), 1u);
  EXPECT_GE(SharedIds("hatchbacks", "vehicles"), 1u);
}

TEST(Lexicon, UnrelatedWordsShareLittle) {
  // Not an exact claim about WordNet, a guard against features that tie everything together
  // (a root synset, a gloss word in every definition).
  EXPECT_LT(SharedIds("hatchback", "tea"), 2u);
  EXPECT_LT(SharedIds("cat", "beverage"), 2u);
}

TEST(Lexicon, InflectedFormsGetTheirLemmasFeatures) {
  // Detachment rules: "drinks" -> drink, "cats" -> cat.
  EXPECT_THAT(FeaturesOf("drinks"), Not(IsEmpty()));
  EXPECT_GE(SharedIds("drinks", "drink"), 1u);
  EXPECT_THAT(FeaturesOf("cats"), Not(IsEmpty()));
  EXPECT_TRUE(SameFeatures(FeaturesOf("cats"), FeaturesOf("cat")));
  // Exception lists: "drank" and "ran" follow no rule.
  EXPECT_THAT(FeaturesOf("drank"), Not(IsEmpty()));
  EXPECT_GE(SharedIds("drank", "drink"), 1u);
  EXPECT_GE(SharedIds("ran", "run"), 1u);
  // "running" is a lemma itself (the noun, the adjective) and the verb run's exception form.
  EXPECT_THAT(FeaturesOf("running"), Not(IsEmpty()));
  EXPECT_GE(SharedIds("running", "run"), 1u);
}

TEST(Lexicon, RulesOnlyReachLemmasOfTheirPartOfSpeech) {
  // "-er" is an adjective rule: "cheaper" -> cheap (an adjective), but "emailer" does not
  // reach email (a noun and a verb only).
  EXPECT_GE(SharedIds("cheaper", "cheap"), 1u);
  EXPECT_THAT(FeaturesOf("emailer"), IsEmpty());
}

TEST(Lexicon, SeveralLemmasMerge) {
  // "hoped" -> hope (-ed -> e) and hop (-ed): both verbs, both kept.
  EXPECT_GE(SharedIds("hoped", "hope"), 1u);
  EXPECT_GE(SharedIds("hoped", "hop"), 1u);
}

TEST(Lexicon, LemmaOfOnePartOfSpeechIsAFormOfAnother) {
  // "billing" is a noun lemma of its own, and as a verb it is bill's "-ing" form, like "billed".
  EXPECT_GE(SharedWordNetIds("billing", "billed"), 1u);
  EXPECT_GE(SharedWordNetIds("building", "built"), 1u);
}

TEST(Lexicon, ThesaurusLinksSynonymsWordNetFeaturesMiss) {
  // MyThes lists "maintain" in the first sense of "assert" ("state categorically"); that synset
  // is not among maintain's first three WordNet senses, so no WordNet feature links the two.
  EXPECT_EQ(SharedWordNetIds("assert", "maintain"), 0u);
  const std::vector<LexFeature> terms = TermsMatching("assert", "maintain");
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(TermRelationOf(terms[0].id), TermRelation::kSame);
  EXPECT_FLOAT_EQ(terms[0].weight, 1.0f);  // First sense, a synonym.
  // Inflected forms carry their lemma's terms.
  EXPECT_EQ(TermsMatching("asserted", "maintain").size(), 1u);
}

TEST(Lexicon, ThesaurusGenericTermsAreMarkedAndWeighLess) {
  // "car (generic term)" in hatchback's entry: a hypernym's word.
  const std::vector<LexFeature> terms = TermsMatching("hatchback", "car");
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(TermRelationOf(terms[0].id), TermRelation::kGeneric);
  EXPECT_LT(terms[0].weight, 1.0f);
  EXPECT_GT(terms[0].weight, 0.0f);
}

TEST(Lexicon, ThesaurusLeavesOutAntonymsAndTheWordsOwnStem) {
  ASSERT_THAT(TermsMatching("fast", "quick"), Not(IsEmpty()));
  EXPECT_THAT(TermsMatching("fast", "slow"), IsEmpty());  // "slow (antonym)".
  // "drink" lists "drinking" (stem "drink"): a text with "drink" has that stem already.
  EXPECT_THAT(TermsMatching("drink", "drink"), IsEmpty());
  EXPECT_THAT(TermsMatching("drinks", "drink"), IsEmpty());
}

TEST(Lexicon, UnknownWordsGetNothing) {
  EXPECT_THAT(FeaturesOf("xqzzyv"), IsEmpty());
  EXPECT_THAT(FeaturesOf(""), IsEmpty());
  EXPECT_THAT(FeaturesOf(std::string(200, 'e') + "s"), IsEmpty());
}

TEST(Lexicon, StopWordsGetNothing) {
  for (std::string_view word : {"the", "a", "an", "is", "be", "have", "do", "it", "of", "was"}) {
    EXPECT_THAT(FeaturesOf(word), IsEmpty()) << word;
  }
}

TEST(Lexicon, AppendsWithoutTouchingWhatIsThere) {
  std::vector<LexFeature> out = {{.id = 7, .weight = 0.5f}};
  Lexicon::Get().Features("tea", out);
  ASSERT_GT(out.size(), 1u);
  EXPECT_EQ(out[0].id, 7u);
  EXPECT_EQ(out[0].weight, 0.5f);
  EXPECT_TRUE(SameFeatures({out.begin() + 1, out.end()}, FeaturesOf("tea")));
}

TEST(Lexicon, FeaturesAreDeterministicDistinctAndWeighted) {
  for (std::string_view word : {"tea", "drinks", "drank", "cats", "hoped", "running", "good",
                                "quickly", "hatchbacks", "leaves", "taller", "assert", "fast"}) {
    const std::vector<LexFeature> first = FeaturesOf(word);
    ASSERT_THAT(first, Not(IsEmpty())) << word;
    EXPECT_TRUE(SameFeatures(first, FeaturesOf(word))) << word;
    EXPECT_LE(first.size(), 48u + 24u) << word;  // WordNet features, thesaurus terms.
    std::vector<uint32_t> ids;
    for (const LexFeature& f : first) {
      EXPECT_GT(f.weight, 0.0f) << word;
      EXPECT_LE(f.weight, 1.0f) << word;
      ids.push_back(f.id);
    }
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << word << ": repeated id";
  }
}

TEST(Lexicon, WordsOwnSynsetWeighsMost) {
  // The first sense of a lemma counts fully; everything reached from it counts less.
  const std::vector<LexFeature> tea = FeaturesOf("tea");
  ASSERT_THAT(tea, Not(IsEmpty()));
  EXPECT_EQ(
      std::max_element(tea.begin(), tea.end(),
                       [](const LexFeature& a, const LexFeature& b) { return a.weight < b.weight; })
          ->weight,
      1.0f);
}

}  // namespace
}  // namespace strata::embed
