#pragma once
// An embedder backed by a model server over plain HTTP/1.1 (a server on this machine or the
// local network; no TLS): OpenAI-compatible POST /v1/embeddings or Ollama POST /api/embed.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/embedder.h"

namespace strata::embed {

enum class HttpApi { kOpenAi, kOllama };

// `options` from the --embedder spec ("openai:url=...,model=...,dim=..."):
//   url         required, http://host[:port]/path (https is refused: there is no TLS)
//   model       required, sent as "model"
//   dim         required, the vector size the model returns (1..65536); any other size is an
//               error
//   batch       texts per request (default 32, 1..2048)
//   timeout_ms  per attempt, covering connect, send and receive (default 10000, 1..600000)
//   retries     extra attempts after an Unavailable failure, with backoff (default 2, 0..10)
// Only url-independent options that change vectors (model, dim) go into info().options.
// Errors: InvalidArgument naming the option that is missing, unknown or malformed.
//
// The embedder's errors start with its name and url ("openai embedder at http://...: "). A text
// that is empty or only whitespace gets the zero vector without a request. One Embed call may
// take up to (1 + retries) * timeout_ms plus the backoff per batch.
// Thread safety: the embedder holds no mutable state and opens one connection per request, so
// Embed may run on several threads at once.
absl::StatusOr<std::unique_ptr<Embedder>> MakeHttpEmbedder(
    HttpApi api, const std::vector<std::pair<std::string, std::string>>& options);

}  // namespace strata::embed
