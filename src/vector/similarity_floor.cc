#include "vector/similarity_floor.h"

#include <algorithm>
#include <array>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "util/status_macros.h"
#include "vector/codec.h"

namespace strata::vector {
namespace {

// One sentence per topic, no two topics alike, none about software: the memories an agent
// keeps are mostly about software, and the floor must not sit above what a related memory
// scores. Changing this list changes every store's floor; keep it fixed.
constexpr std::array<const char*, 40> kProbes = {
    "Simmer the onions in butter until they turn golden, then add the garlic.",
    "Spring tides are strongest when the sun and the moon line up with the earth.",
    "She castled early and traded her bishop for the knight on the queen's side.",
    "Capital gains on shares held longer than a year are taxed at a lower rate.",
    "The goalkeeper saved the penalty in the last minute of extra time.",
    "Honeybees dance to tell the hive where the flowers with nectar are.",
    "The cathedral's rose window was restored with glass from the fourteenth century.",
    "Knit two stitches, purl two, and repeat until the scarf is long enough.",
    "The violinist tuned her instrument to the oboe's A before the symphony began.",
    "Glaciers carved the valley into a U shape during the last ice age.",
    "The defendant pleaded not guilty and the jury was sworn in on Monday.",
    "Tomatoes need six hours of direct sunlight and deep watering twice a week.",
    "The marathon route passes the harbour twice before finishing in the park.",
    "A sonnet has fourteen lines and often ends with a rhyming couplet.",
    "The midwife checked the newborn's breathing and weighed her on the scale.",
    "Volcanic ash from the eruption grounded flights across northern Europe.",
    "The bakery's sourdough rises overnight in baskets lined with linen.",
    "Our grandmother kept pressed wildflowers between the pages of her bible.",
    "The surveyor marked the boundary of the farm with oak stakes.",
    "Whales migrate thousands of miles to calve in warm shallow lagoons.",
    "The tailor took in the waist of the trousers by two centimetres.",
    "A rainbow forms when sunlight is refracted inside falling raindrops.",
    "The regiment marched through the mountain pass in the winter of 1799.",
    "He repainted the rowing boat and replaced the rusty oarlocks.",
    "Saffron is the dried stigma of a crocus and is picked by hand.",
    "The orchestra's percussionist struck the timpani at the climax of the overture.",
    "Children collected conkers under the chestnut trees after school.",
    "The pharmacist warned that the antibiotic should be taken with food.",
    "Medieval monks copied manuscripts by candlelight in the scriptorium.",
    "The jockey wore green silks and won the steeplechase by a length.",
    "Moss grows on the north side of trees in damp northern forests.",
    "The bride's veil was embroidered with pearls by her aunt.",
    "Lighthouse keepers once trimmed the wicks of the lamps every night.",
    "The archaeologists uncovered a Roman mosaic beneath the vineyard.",
    "Penguins huddle together through the polar night to keep warm.",
    "The potter centred the clay on the wheel and pulled up the walls of a bowl.",
    "Ballet dancers rehearse the pas de deux for weeks before the premiere.",
    "The ferry to the island leaves at dawn when the sea is calm.",
    "A good espresso needs finely ground beans and water just below boiling.",
    "The village fair awarded a ribbon to the heaviest pumpkin.",
};

// The share of unrelated pairs that score below the floor.
constexpr size_t kFloorPercentile = 95;

}  // namespace

absl::StatusOr<float> MeasureSimilarityFloor(embed::Embedder& embedder) {
  const std::vector<std::string> texts(kProbes.begin(), kProbes.end());
  const size_t dim = static_cast<size_t>(embedder.info().dimension);
  // Each probe as a query against every other as a stored memory, as recall compares them. An
  // embedder without role prefixes scores (i, j) as (j, i): each pair counts twice, and the
  // percentile is that of the distinct pairs.
  ASSIGN_OR_RETURN(const std::vector<float> queries,
                   embed::EmbedAll(embedder, texts, embed::Role::kQuery));
  ASSIGN_OR_RETURN(const std::vector<float> documents,
                   embed::EmbedAll(embedder, texts, embed::Role::kDocument));
  auto row = [&](const std::vector<float>& vectors, size_t i) {
    return std::span<const float>(vectors.data() + i * dim, dim);
  };
  std::vector<float> similarities;
  for (size_t i = 0; i < texts.size(); ++i) {
    for (size_t j = 0; j < texts.size(); ++j) {
      if (i != j) similarities.push_back(Dot(row(queries, i), row(documents, j)));
    }
  }
  // Not the highest: two unrelated sentences may still share a word ("two stitches", "by two
  // centimetres"), and hashed word features score that pair like a weak paraphrase.
  const size_t at = similarities.size() * (100 - kFloorPercentile) / 100;
  std::nth_element(similarities.begin(), similarities.begin() + at, similarities.end(),
                   std::greater<>());
  return std::max(0.0f, similarities[at]);
}

}  // namespace strata::vector
