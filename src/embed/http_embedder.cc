#include "embed/http_embedder.h"

namespace strata::embed {

absl::StatusOr<std::unique_ptr<Embedder>> MakeHttpEmbedder(
    HttpApi, const std::vector<std::pair<std::string, std::string>>&) {
  return absl::UnimplementedError("the HTTP embedder is being written");
}

}  // namespace strata::embed
