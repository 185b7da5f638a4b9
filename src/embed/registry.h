#pragma once
// Choosing an embedder by name: the --embedder command-line option.

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "embed/embedder.h"

namespace strata::embed {

inline constexpr char kDefaultEmbedderSpec[] = "builtin";

// `spec` is NAME or NAME:key=value,key=value:
//   builtin   the built-in embedder (builtin_embedder.h); options dim, ngram, lexicon, bigram
//   bert      a sentence-transformers BERT directory run natively (bert_embedder.h); dir=PATH
//   openai    an OpenAI-compatible /v1/embeddings server (http_embedder.h)
//   ollama    an Ollama /api/embed server (http_embedder.h)
//   none      no embedder: recall has the keyword arm only; returns null
// Every embedder but none also takes query_prefix=TEXT and document_prefix=TEXT, put before
// queries and stored texts (WithRolePrefixes); bert:model=NAME defaults to the prefixes its
// manifest card names (e5's "query: " and "passage: ").
// Errors: InvalidArgument naming the unknown embedder or the bad option.
absl::StatusOr<std::unique_ptr<Embedder>> MakeEmbedder(std::string_view spec);

}  // namespace strata::embed
