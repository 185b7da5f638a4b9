// Tests of dedup/content.h: the units of information of a body, and the rule that a body adds
// nothing to another. What does not change what a body says (case, punctuation, whitespace,
// filler words, sentence and member order, word forms) adds no unit; a content word, number,
// identifier, member, member value or negation does.

#include "dedup/content.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "text/body_text.h"

namespace strata::dedup {
namespace {

using ::testing::IsEmpty;
using ::testing::IsSubsetOf;
using ::testing::SizeIs;

// The units of the body `body_json`; an unparsable body fails the test.
ContentUnits Units(std::string_view body_json) {
  absl::StatusOr<text::ParsedBody> body = text::ParseBody(body_json);
  EXPECT_TRUE(body.ok()) << body.status() << " for " << body_json;
  return body.ok() ? Analyze(*body) : ContentUnits{};
}

// The units of a body that is the JSON string `text`.
ContentUnits TextUnits(std::string_view text) {
  return Units(nlohmann::json(std::string(text)).dump());
}

// Whether the bodies `a` and `b` say the same: each adds nothing to the other.
bool SameContent(const ContentUnits& a, const ContentUnits& b) {
  return AddsNothing(a, b) && AddsNothing(b, a) && a.units == b.units;
}

constexpr char kMaria[] = "Maria leads the storage team and prefers Go for new services.";

// ---------------------------------------------------------------------------------------------
// Analyze: what adds no unit

TEST(Analyze, UnitsAreSortedAndDistinct) {
  const ContentUnits units = TextUnits("go go go rust go rust");
  EXPECT_TRUE(std::is_sorted(units.units.begin(), units.units.end()));
  EXPECT_THAT(units.units, SizeIs(2));
  EXPECT_EQ(units.value_units, 2);
  // The terms that signatures shingle keep order and repeats.
  EXPECT_THAT(units.terms, SizeIs(6));
  EXPECT_EQ(units.terms[0], units.terms[1]);
  EXPECT_NE(units.terms[3], units.terms[4]);
}

TEST(Analyze, IsDeterministic) {
  const ContentUnits a = TextUnits(kMaria), b = TextUnits(kMaria);
  EXPECT_EQ(a.units, b.units);
  EXPECT_EQ(a.terms, b.terms);
  EXPECT_EQ(a.negations, b.negations);
  EXPECT_EQ(a.value_units, b.value_units);
}

TEST(Analyze, CaseAddsNothing) {
  EXPECT_TRUE(SameContent(TextUnits(kMaria), TextUnits("MARIA LEADS THE STORAGE TEAM AND "
                                                       "PREFERS GO FOR NEW SERVICES.")));
  EXPECT_TRUE(SameContent(TextUnits("Upgrade to V2.19.1"), TextUnits("upgrade to v2.19.1")));
}

TEST(Analyze, PunctuationAddsNothing) {
  EXPECT_TRUE(SameContent(TextUnits(kMaria),
                          TextUnits("Maria leads the storage team, and prefers Go for new "
                                    "services!")));
  EXPECT_TRUE(SameContent(TextUnits("maria leads storage team prefers go new services"),
                          TextUnits("\"Maria\" leads (the storage team); prefers: Go... "
                                    "for new services?!")));
  // Around an identifier too: a sentence's last period is not part of the version.
  EXPECT_TRUE(
      SameContent(TextUnits("We upgraded to v2.19.1."), TextUnits("We upgraded to (v2.19.1)")));
}

TEST(Analyze, WhitespaceAddsNothing) {
  EXPECT_TRUE(SameContent(TextUnits(kMaria),
                          TextUnits("  Maria\tleads the\n\nstorage   team and prefers\r\nGo "
                                    "for new services.  ")));
}

TEST(Analyze, FillerWordsAddNothing) {
  EXPECT_TRUE(SameContent(TextUnits(kMaria),
                          TextUnits("Maria really leads the storage team and also prefers Go "
                                    "for the new services.")));
  EXPECT_TRUE(SameContent(TextUnits("cache warm"), TextUnits("The cache is also really warm.")));
}

TEST(Analyze, SentenceOrderAddsNothing) {
  EXPECT_TRUE(SameContent(TextUnits("Maria leads the storage team. She prefers Go."),
                          TextUnits("She prefers Go. Maria leads the storage team.")));
}

TEST(Analyze, MemberOrderAndJsonSpacingAddNothing) {
  EXPECT_TRUE(SameContent(Units(R"({"owner":"ana","reviewer":"bo","pages":12})"),
                          Units(R"({ "pages": 12, "reviewer": "bo",  "owner": "ana" })")));
}

TEST(Analyze, WordFormsShareTheirStem) {
  EXPECT_TRUE(SameContent(TextUnits("Maria prefers Go"), TextUnits("Maria prefer Go")));
  EXPECT_TRUE(SameContent(TextUnits("the services running"), TextUnits("the service runs")));
}

// ---------------------------------------------------------------------------------------------
// Analyze and AddsNothing: what adds a unit

TEST(AddsNothing, ANewContentWordAdds) {
  const ContentUnits old = TextUnits(kMaria);
  const ContentUnits more =
      TextUnits("Maria leads the storage team and prefers Go for new backend services.");
  EXPECT_FALSE(AddsNothing(more, old));
  // The other way round the new body says less: it adds nothing.
  EXPECT_TRUE(AddsNothing(old, more));
}

TEST(AddsNothing, AChangedWordAddsInBothDirections) {
  const ContentUnits go = TextUnits(kMaria);
  const ContentUnits rust =
      TextUnits("Maria leads the storage team and prefers Rust for new services.");
  EXPECT_FALSE(AddsNothing(rust, go));
  EXPECT_FALSE(AddsNothing(go, rust));
}

TEST(AddsNothing, AChangedNumberAdds) {
  EXPECT_FALSE(AddsNothing(TextUnits("keeps 60 days of snapshots"),
                           TextUnits("keeps 30 days of snapshots")));
  EXPECT_FALSE(AddsNothing(Units(R"({"retention_days":60})"), Units(R"({"retention_days":30})")));
  EXPECT_FALSE(AddsNothing(Units(R"({"enabled":false})"), Units(R"({"enabled":true})")));
}

TEST(AddsNothing, AChangedIdentifierAdds) {
  EXPECT_FALSE(AddsNothing(TextUnits("Perseus Vault v2.19.2 is deployed"),
                           TextUnits("Perseus Vault v2.19.1 is deployed")));
  // An identifier is a unit as a whole: the same parts in another order are another version.
  EXPECT_FALSE(AddsNothing(TextUnits("Perseus Vault v2.1.19 is deployed"),
                           TextUnits("Perseus Vault v2.19.1 is deployed")));
  EXPECT_FALSE(AddsNothing(TextUnits("see ticket scale-21"), TextUnits("see ticket scale-12")));
}

TEST(AddsNothing, ANewMemberAdds) {
  const ContentUnits old = Units(R"({"owner":"ana","note":"ana and bo review it"})");
  const ContentUnits more = Units(R"({"owner":"ana","note":"ana and bo review it","team":"ana"})");
  EXPECT_FALSE(AddsNothing(more, old));
  EXPECT_TRUE(AddsNothing(old, more));
}

TEST(AddsNothing, AMembersChangedValueAdds) {
  EXPECT_FALSE(
      AddsNothing(Units(R"({"title":"staff engineer"})"), Units(R"({"title":"senior engineer"})")));
  // Even when the new value's words are already elsewhere in the body.
  EXPECT_FALSE(AddsNothing(Units(R"({"owner":"bo","note":"ana and bo review it"})"),
                           Units(R"({"owner":"ana","note":"ana and bo review it"})")));
}

TEST(AddsNothing, SwappedMemberValuesAdd) {
  const ContentUnits a = Units(R"({"owner":"ana","reviewer":"bo"})");
  const ContentUnits b = Units(R"({"owner":"bo","reviewer":"ana"})");
  EXPECT_FALSE(AddsNothing(b, a));
  EXPECT_FALSE(AddsNothing(a, b));
}

TEST(AddsNothing, APronounCounts) {
  EXPECT_FALSE(
      AddsNothing(TextUnits("she leads the storage team"), TextUnits("he leads the storage team")));
  EXPECT_FALSE(AddsNothing(TextUnits("they approved it"), TextUnits("we approved it")));
}

TEST(AddsNothing, IdenticalBodiesAddNothing) {
  EXPECT_TRUE(AddsNothing(TextUnits(kMaria), TextUnits(kMaria)));
  EXPECT_TRUE(AddsNothing(Units("{}"), Units("{}")));
  EXPECT_TRUE(AddsNothing(Units("{}"), TextUnits(kMaria)));
}

// ---------------------------------------------------------------------------------------------
// The negation rule

TEST(AddsNothing, AddingANegationAdds) {
  const ContentUnits does = TextUnits("the deploy needs approval from the storage team");
  const ContentUnits does_not =
      TextUnits("the deploy does not need approval from the storage team");
  EXPECT_FALSE(AddsNothing(does_not, does));
}

TEST(AddsNothing, DroppingANegationAddsTooThoughNoWordIsNew) {
  const ContentUnits does_not =
      TextUnits("the deploy does not need approval from the storage team");
  const ContentUnits does = TextUnits("the deploy needs approval from the storage team");
  ASSERT_THAT(does.units, IsSubsetOf(does_not.units));
  EXPECT_FALSE(AddsNothing(does, does_not));
  // "never", "no", "without"... count as "not" does.
  EXPECT_FALSE(AddsNothing(TextUnits("the job runs on fridays"),
                           TextUnits("the job never runs on fridays")));
  EXPECT_FALSE(AddsNothing(TextUnits("ship it with tests"), TextUnits("ship it without tests")));
}

TEST(AddsNothing, TheSameNegationsAddNothing) {
  EXPECT_TRUE(AddsNothing(TextUnits("The deploy does NOT need approval."),
                          TextUnits("the deploy really does not need approval")));
}

TEST(AddsNothing, ContractedNegationsCountAsNegations) {
  // "doesn't" is "doesn" + "t" as words: dropping it reverses the fact like dropping "not".
  EXPECT_FALSE(AddsNothing(TextUnits("the deploy needs approval from the storage team"),
                           TextUnits("the deploy doesn't need approval from the storage team")));
  EXPECT_FALSE(
      AddsNothing(TextUnits("we can deploy on fridays"), TextUnits("we can't deploy on fridays")));
  EXPECT_FALSE(
      AddsNothing(TextUnits("we can deploy on fridays"), TextUnits("we cannot deploy on fridays")));
}

TEST(Analyze, NegationsAreTheNegationWordsSortedAndDistinct) {
  EXPECT_THAT(TextUnits(kMaria).negations, IsEmpty());
  const ContentUnits units = TextUnits("not now, not ever, never without a reason, no");
  EXPECT_THAT(units.negations, SizeIs(4));
  EXPECT_TRUE(std::is_sorted(units.negations.begin(), units.negations.end()));
}

// ---------------------------------------------------------------------------------------------
// value_units

TEST(Analyze, ValueUnitsCountDistinctTermsAndIdentifiersOfValues) {
  // maria lead storag team prefer go new servic: "the", "and", "for" are filler.
  EXPECT_EQ(TextUnits(kMaria).value_units, 8);
  EXPECT_EQ(TextUnits("go go go").value_units, 1);
  // "v2.19.1" is one identifier and three words: v2, 19, 1.
  EXPECT_EQ(TextUnits("v2.19.1").value_units, 4);
  EXPECT_EQ(Units(R"({"balance":1200})").value_units, 1);
  EXPECT_EQ(Units("{}").value_units, 0);
  EXPECT_EQ(TextUnits("the a of and").value_units, 0);
}

TEST(Analyze, MemberNamesAreUnitsButNotValueUnits) {
  // Units: the values maria and storag, the members name and team, and each member's value.
  const ContentUnits units = Units(R"({"name":"Maria","team":"storage"})");
  EXPECT_EQ(units.value_units, 2);
  EXPECT_THAT(units.units, SizeIs(6));
  EXPECT_EQ(Units(R"({"title":"senior engineer"})").value_units, 2);
  // A member of null holds no value.
  EXPECT_EQ(Units(R"({"title":null})").value_units, 0);
}

TEST(Analyze, ALongValueIsProseAndItsWordsAreItsUnits) {
  // Beyond kMaxValueTerms content terms a value is not a unit of its own: rewording its
  // sentences keeps its units.
  EXPECT_TRUE(SameContent(
      Units(R"({"note":"Maria leads the storage team. She prefers Go for new services."})"),
      Units(R"({"note":"She prefers Go for new services. Maria leads the storage team."})")));
}

}  // namespace
}  // namespace strata::dedup
