#pragma once
// The units of information of a body, for the rule that a new memory is merged into another
// only when it adds nothing to it.

#include <cstdint>
#include <vector>

#include "text/body_text.h"

namespace strata::dedup {

// A new key is merged only when its body has at least this many value units: a short body
// ({"title": "senior engineer"}) means something only with its key, so two keys holding it
// are two facts.
inline constexpr int kMinMergeUnits = 6;

// What a body says, as hashed units. A unit is a content word's stem (filler words dropped;
// case and punctuation ignored), an identifier as written ("v2.19.1", "scale-12"), a number,
// an object member's name, or a member's value ("title=senior engineer" for a short value).
// Order does not count: reworded sentences and reordered members have the same units.
struct ContentUnits {
  std::vector<uint64_t> units;      // Every unit, sorted and distinct.
  std::vector<uint64_t> negations;  // The negation words' units, sorted and distinct.
  // Each value term's hash in body order, repeats kept: what signatures shingle.
  std::vector<uint64_t> terms;
  // The units a short body is banded by (sorted, distinct): member=value units of labels
  // (values of a few terms), identifiers, and the terms of other values. Not member names,
  // nor a label's words again: bodies of one shape (the same members) would otherwise all
  // look alike, and every write would verify the candidate cap.
  std::vector<uint64_t> band_units;
  int value_units = 0;  // Distinct units of values: terms and identifiers, not member names.
};

ContentUnits Analyze(const text::ParsedBody& body);

// True when `b` holds no unit `a` lacks and both negate the same words (dropping a "not"
// reverses a fact without adding a word).
bool AddsNothing(const ContentUnits& b, const ContentUnits& a);

}  // namespace strata::dedup
