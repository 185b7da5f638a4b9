#include "embed/embedder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/sv.h"

namespace strata::embed {

std::string EmbedderInfo::Fingerprint() const {
  return absl::StrCat(name, "/", version, "/", dimension, "/", options);
}

namespace {

class PrefixingEmbedder final : public Embedder {
 public:
  PrefixingEmbedder(std::unique_ptr<Embedder> inner, RolePrefixes prefixes)
      : inner_(std::move(inner)), prefixes_(std::move(prefixes)), info_(inner_->info()) {
    if (!prefixes_.document.empty()) {
      absl::StrAppend(&info_.options, info_.options.empty() ? "" : ",",
                      "document_prefix=", prefixes_.document);
    }
  }

  const EmbedderInfo& info() const override { return info_; }
  int batch_size() const override { return inner_->batch_size(); }

  absl::StatusOr<std::vector<float>> Embed(std::span<const std::string> texts, Role role) override {
    const std::string& prefix = role == Role::kQuery ? prefixes_.query : prefixes_.document;
    if (prefix.empty()) return inner_->Embed(texts, role);
    std::vector<std::string> prefixed;
    prefixed.reserve(texts.size());
    for (const std::string& text : texts) prefixed.push_back(absl::StrCat(prefix, text));
    return inner_->Embed(prefixed, role);
  }

 private:
  const std::unique_ptr<Embedder> inner_;
  const RolePrefixes prefixes_;
  EmbedderInfo info_;
};

}  // namespace

std::unique_ptr<Embedder> WithRolePrefixes(std::unique_ptr<Embedder> inner, RolePrefixes prefixes) {
  if (inner == nullptr || (prefixes.query.empty() && prefixes.document.empty())) return inner;
  return std::make_unique<PrefixingEmbedder>(std::move(inner), std::move(prefixes));
}

absl::StatusOr<std::vector<float>> EmbedAll(Embedder& embedder, std::span<const std::string> texts,
                                            Role role) {
  const size_t dim = static_cast<size_t>(embedder.info().dimension);
  const size_t batch = static_cast<size_t>(std::max(1, embedder.batch_size()));
  std::vector<float> vectors;
  vectors.reserve(texts.size() * dim);
  for (size_t begin = 0; begin < texts.size(); begin += batch) {
    const size_t n = std::min(batch, texts.size() - begin);
    absl::StatusOr<std::vector<float>> part = embedder.Embed(texts.subspan(begin, n), role);
    if (!part.ok()) return part.status();
    if (part->size() != n * dim) {
      return absl::InternalError(absl::StrCat("the embedder gave ", part->size(), " floats for ", n,
                                              " texts of dimension ", dim));
    }
    vectors.insert(vectors.end(), part->begin(), part->end());
  }
  return vectors;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseOptions(
    std::string_view options) {
  std::vector<std::pair<std::string, std::string>> out;
  if (options.empty()) return out;
  for (absl::string_view entry : absl::StrSplit(ToAbsl(options), ',')) {
    const size_t eq = entry.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("embedder option \"", entry, "\": expected key=value"));
    }
    std::string key(entry.substr(0, eq));
    for (const auto& [k, v] : out) {
      if (k == key) {
        return absl::InvalidArgumentError(absl::StrCat("embedder option \"", key, "\": repeated"));
      }
    }
    out.emplace_back(std::move(key), std::string(entry.substr(eq + 1)));
  }
  return out;
}

}  // namespace strata::embed
