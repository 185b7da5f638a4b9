#include "embed/registry.h"

#include "absl/strings/str_cat.h"
#include "embed/bert_embedder.h"
#include "embed/builtin_embedder.h"
#include "embed/http_embedder.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::embed {

absl::StatusOr<std::unique_ptr<Embedder>> MakeEmbedder(std::string_view spec) {
  const size_t colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  ASSIGN_OR_RETURN(const auto options, ParseOptions(rest));
  if (name == "builtin") return MakeBuiltinEmbedder(options);
  if (name == "bert") return MakeBertEmbedder(options);
  if (name == "openai") return MakeHttpEmbedder(HttpApi::kOpenAi, options);
  if (name == "ollama") return MakeHttpEmbedder(HttpApi::kOllama, options);
  if (name == "none") {
    if (!options.empty()) return absl::InvalidArgumentError("embedder none: takes no options");
    return nullptr;
  }
  return absl::InvalidArgumentError(absl::StrCat("embedder \"", ToAbsl(name),
                                                 "\": unknown (known: builtin, bert, openai, "
                                                 "ollama, none)"));
}

}  // namespace strata::embed
