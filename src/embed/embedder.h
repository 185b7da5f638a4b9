#pragma once
// Embedders turn text into fixed-size unit vectors; the dense arm compares them by cosine.

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::embed {

// What made a vector. Vectors of different fingerprints are never compared.
struct EmbedderInfo {
  std::string name;     // "builtin", "openai", "ollama".
  std::string version;  // Changes whenever the same input would give a different vector.
  int dimension = 0;
  std::string options;  // Those that change vectors (model, dimension), as "k=v,k=v", sorted.

  // name/version/dimension/options in one line, e.g. "ollama/1/768/model=nomic-embed-text".
  std::string Fingerprint() const;
};

// What a text is to the model: a stored memory, or a query looking for memories. Some models
// are trained with a different prefix for each (e5's "query: " and "passage: "); the others
// treat both alike.
enum class Role { kDocument, kQuery };

// Thread safety: Embed may be called from several threads at once.
class Embedder {
 public:
  virtual ~Embedder() = default;
  virtual const EmbedderInfo& info() const = 0;
  // How many texts one Embed call should carry.
  virtual int batch_size() const = 0;
  // texts.size() * info().dimension floats: one unit vector (L2 norm 1, or all zeros for a
  // text with nothing to embed) per text, in order, each text embedded in `role`.
  // Errors: Unavailable (a server that cannot be reached, timed out, or answered 5xx: worth
  // retrying), FailedPrecondition (an answer of the wrong shape or dimension, a 4xx: retrying
  // will not help until the configuration changes).
  virtual absl::StatusOr<std::vector<float>> Embed(std::span<const std::string> texts,
                                                   Role role) = 0;
};

// The text put before each text of a role, for models trained with prefixes.
struct RolePrefixes {
  std::string query;
  std::string document;
};

// `inner` with `prefixes` put before its texts. A document prefix changes stored vectors, so
// it joins info().options ("document_prefix=..."); a query prefix changes only queries and
// does not. Returns `inner` itself when both prefixes are empty.
std::unique_ptr<Embedder> WithRolePrefixes(std::unique_ptr<Embedder> inner, RolePrefixes prefixes);

// All of `texts` embedded in `role`, batch_size() texts (at least one) an Embed call:
// texts.size() * info().dimension floats, in order. Errors: the embedder's; Internal when it
// gives other than info().dimension floats a text.
absl::StatusOr<std::vector<float>> EmbedAll(Embedder& embedder, std::span<const std::string> texts,
                                            Role role);

// Parses "key=value,key=value" (the part of an --embedder spec after ':'). Errors:
// InvalidArgument for an entry without '=' or a repeated key.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseOptions(
    std::string_view options);

}  // namespace strata::embed
