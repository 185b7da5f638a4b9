#pragma once
// The models `strata model` knows: a compiled-in manifest of sentence-transformers BERT
// repositories on the model hub, each with its pinned files and what an embedder needs to
// know about it (dimension, pooling, prefixes).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::embed {

// One file of a model repository, by its path inside the repository.
struct ModelFile {
  std::string path;    // "config.json", "1_Pooling/config.json".
  int64_t size = -1;   // Bytes; -1 when not recorded.
  std::string sha256;  // 64 lowercase hex digits; empty when not recorded.
};

struct ModelCard {
  std::string name;        // What `strata model fetch NAME` and bert:model=NAME take.
  std::string repository;  // "sentence-transformers/all-MiniLM-L6-v2".
  std::string revision;    // A commit id, or a branch name while unconfirmed.
  std::vector<ModelFile> files;
  int dimension = 0;
  std::string pooling;          // "mean" or "cls".
  std::string query_prefix;     // Put before a query, e.g. "query: ".
  std::string document_prefix;  // Put before a stored text, e.g. "passage: ".
  // The unit vector the model gives kKnownAnswerInput as a document (no prefix); empty
  // when none is recorded.
  std::vector<float> known_answer;
  // False while the revision, sizes and digests have not been checked against the hub by a
  // maintainer with network access: `fetch` then refuses unless told to trust the download.
  bool confirmed = false;
};

// The fixed input of every card's known-answer vector.
inline constexpr std::string_view kKnownAnswerInput =
    "strata remembers what an agent learned, and when it was true.";

// The compiled-in cards, or, when $STRATA_MODEL_MANIFEST names a JSON file, the cards it
// holds (an array of objects with the fields of ModelCard; for tests and for maintainers
// confirming an entry). Errors: NotFound / InvalidArgument for a missing or malformed file.
absl::StatusOr<std::vector<ModelCard>> LoadManifest();

// The card named `name` in `cards`, or nullptr.
const ModelCard* FindModel(std::span<const ModelCard> cards, std::string_view name);

// The compiled-in cards alone.
std::span<const ModelCard> BuiltinManifest();

// `cards` parsed from the JSON text of a manifest file. Errors: InvalidArgument naming the
// card and field.
absl::StatusOr<std::vector<ModelCard>> ParseManifest(std::string_view json_text);

}  // namespace strata::embed
