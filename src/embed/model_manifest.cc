#include "embed/model_manifest.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace strata::embed {
namespace {

using nlohmann::json;

// The files a sentence-transformers BERT repository holds that the bert embedder reads.
// Sizes and digests are not recorded: they could not be checked against the hub from where
// this manifest was written (no network), and a digest nobody has checked is no check.
std::vector<ModelFile> SentenceTransformerFiles() {
  std::vector<ModelFile> files;
  for (const char* path :
       {"config.json", "vocab.txt", "tokenizer_config.json", "modules.json",
        "1_Pooling/config.json", "sentence_bert_config.json", "model.safetensors"}) {
    files.push_back(ModelFile{.path = path});
  }
  return files;
}

// Every card is unconfirmed: a maintainer with network access replaces "main" with the
// commit id, fills in each file's size and SHA-256 (as the hub's tree API lists them) and a
// known-answer vector (`strata encode` on kKnownAnswerInput), then sets `confirmed`.
const std::vector<ModelCard>& Builtin() {
  static const std::vector<ModelCard>* const cards = new std::vector<ModelCard>{
      ModelCard{.name = "all-MiniLM-L6-v2",
                .repository = "sentence-transformers/all-MiniLM-L6-v2",
                .revision = "main",
                .files = SentenceTransformerFiles(),
                .dimension = 384,
                .pooling = "mean"},
      ModelCard{.name = "bge-small-en-v1.5",
                .repository = "BAAI/bge-small-en-v1.5",
                .revision = "main",
                .files = SentenceTransformerFiles(),
                .dimension = 384,
                .pooling = "cls",
                .query_prefix = "Represent this sentence for searching relevant passages: "},
      ModelCard{.name = "e5-small-v2",
                .repository = "intfloat/e5-small-v2",
                .revision = "main",
                .files = SentenceTransformerFiles(),
                .dimension = 384,
                .pooling = "mean",
                .query_prefix = "query: ",
                .document_prefix = "passage: "},
  };
  return *cards;
}

bool IsHexDigest(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(c) || absl::ascii_isupper(c)) return false;
  }
  return true;
}

// A name is a directory name under the cache: letters, digits, '.', '_' and '-'.
bool IsSafeName(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// A relative path without "..", "." or empty components.
bool IsSafeFilePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(begin, end - begin);
    if (part.empty() || part == "." || part == ".." || !IsSafeName(part)) return false;
    begin = end + 1;
  }
  return true;
}

absl::Status CardError(const std::string& card, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("model manifest: ", card, ": ", what));
}

absl::StatusOr<ModelCard> ParseCard(const json& j) {
  if (!j.is_object()) return CardError("?", "each card must be an object");
  const std::string label =
      j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : std::string("?");
  ModelCard card;
  try {
    card.name = j.at("name").get<std::string>();
    card.repository = j.at("repository").get<std::string>();
    card.revision = j.at("revision").get<std::string>();
    card.dimension = j.at("dimension").get<int>();
    card.pooling = j.at("pooling").get<std::string>();
    card.query_prefix = j.value("query_prefix", "");
    card.document_prefix = j.value("document_prefix", "");
    card.known_answer = j.value("known_answer", std::vector<float>());
    card.confirmed = j.value("confirmed", false);
    for (const json& f : j.at("files")) {
      card.files.push_back(ModelFile{.path = f.at("path").get<std::string>(),
                                     .size = f.value("size", int64_t{-1}),
                                     .sha256 = f.value("sha256", "")});
    }
  } catch (const json::exception& e) {
    return CardError(label, e.what());
  }
  if (!IsSafeName(card.name)) return CardError(label, "name must be letters, digits, . _ -");
  if (card.repository.empty() || card.revision.empty()) {
    return CardError(label, "repository and revision are required");
  }
  if (card.dimension <= 0) return CardError(label, "dimension must be positive");
  if (card.pooling != "mean" && card.pooling != "cls") {
    return CardError(label, "pooling must be mean or cls");
  }
  if (!card.known_answer.empty() && card.known_answer.size() != size_t(card.dimension)) {
    return CardError(label, "known_answer must have dimension numbers");
  }
  if (card.files.empty()) return CardError(label, "files must not be empty");
  for (const ModelFile& f : card.files) {
    if (!IsSafeFilePath(f.path)) return CardError(label, absl::StrCat("bad file path ", f.path));
    if (!f.sha256.empty() && !IsHexDigest(f.sha256)) {
      return CardError(label, absl::StrCat(f.path, ": sha256 must be 64 lowercase hex digits"));
    }
    if (card.confirmed && (f.size < 0 || f.sha256.empty())) {
      return CardError(label, absl::StrCat(f.path, ": a confirmed card records size and sha256"));
    }
  }
  return card;
}

}  // namespace

std::span<const ModelCard> BuiltinManifest() { return Builtin(); }

const ModelCard* FindModel(std::span<const ModelCard> cards, std::string_view name) {
  for (const ModelCard& card : cards) {
    if (card.name == name) return &card;
  }
  return nullptr;
}

absl::StatusOr<std::vector<ModelCard>> ParseManifest(std::string_view json_text) {
  const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) {
    return absl::InvalidArgumentError("model manifest: must be a JSON array of cards");
  }
  std::vector<ModelCard> cards;
  for (const json& entry : j) {
    absl::StatusOr<ModelCard> card = ParseCard(entry);
    if (!card.ok()) return card.status();
    if (FindModel(cards, card->name) != nullptr) {
      return CardError(card->name, "named twice");
    }
    cards.push_back(std::move(*card));
  }
  return cards;
}

absl::StatusOr<std::vector<ModelCard>> LoadManifest() {
  const char* path = std::getenv("STRATA_MODEL_MANIFEST");
  if (path == nullptr || *path == '\0') {
    return std::vector<ModelCard>(Builtin().begin(), Builtin().end());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("STRATA_MODEL_MANIFEST ", path, ": cannot be read"));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseManifest(text);
}

}  // namespace strata::embed
