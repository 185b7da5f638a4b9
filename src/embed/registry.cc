#include "embed/registry.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "embed/bert_embedder.h"
#include "embed/builtin_embedder.h"
#include "embed/http_embedder.h"
#include "embed/model_manifest.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::embed {
namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

// Removes query_prefix and document_prefix from `options` (every embedder takes them). A
// bert:model=NAME embedder defaults to its manifest card's prefixes.
absl::StatusOr<RolePrefixes> TakePrefixes(std::string_view name, Options& options) {
  RolePrefixes prefixes;
  std::optional<std::string> query;
  std::optional<std::string> document;
  std::string model;
  for (auto it = options.begin(); it != options.end();) {
    if (it->first == "query_prefix" || it->first == "document_prefix") {
      (it->first == "query_prefix" ? query : document) = std::move(it->second);
      it = options.erase(it);
      continue;
    }
    if (it->first == "model") model = it->second;
    ++it;
  }
  if (name == "bert" && !model.empty()) {
    ASSIGN_OR_RETURN(const std::vector<ModelCard> cards, LoadManifest());
    if (const ModelCard* card = FindModel(cards, model); card != nullptr) {
      prefixes = {.query = card->query_prefix, .document = card->document_prefix};
    }
  }
  if (query.has_value()) prefixes.query = std::move(*query);
  if (document.has_value()) prefixes.document = std::move(*document);
  return prefixes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Embedder>> MakeEmbedder(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  ASSIGN_OR_RETURN(auto options, ParseOptions(rest));
  if (name == "none") {
    if (!options.empty()) return absl::InvalidArgumentError("embedder none: takes no options");
    return nullptr;
  }
  ASSIGN_OR_RETURN(const RolePrefixes prefixes, TakePrefixes(name, options));
  std::unique_ptr<Embedder> embedder;
  if (name == "builtin") {
    ASSIGN_OR_RETURN(embedder, MakeBuiltinEmbedder(options));
  } else if (name == "bert") {
    ASSIGN_OR_RETURN(embedder, MakeBertEmbedder(options));
  } else if (name == "openai") {
    ASSIGN_OR_RETURN(embedder, MakeHttpEmbedder(HttpApi::kOpenAi, options));
  } else if (name == "ollama") {
    ASSIGN_OR_RETURN(embedder, MakeHttpEmbedder(HttpApi::kOllama, options));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("embedder \"", ToAbsl(name),
                                                   "\": unknown (known: builtin, bert, openai, "
                                                   "ollama, none)"));
  }
  return WithRolePrefixes(std::move(embedder), prefixes);
}

}  // namespace strata::embed
