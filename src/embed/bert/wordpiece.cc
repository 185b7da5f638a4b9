#include "embed/bert/wordpiece.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "embed/bert/normalizer.h"
#include "nlohmann/json.hpp"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::embed::bert {
namespace {

constexpr std::string_view kContinuation = "##";
// A longer word is [UNK] whole, as in Hugging Face (max_input_chars_per_word, in code points).
constexpr size_t kMaxWordChars = 100;

absl::Status VocabError(std::string_view source, std::string_view message) {
  return absl::DataLossError(absl::StrCat(ToAbsl(source), ": ", ToAbsl(message)));
}

}  // namespace

absl::StatusOr<Vocab> Vocab::Load(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat(path.string(), ": no such vocabulary file"));
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  if (!in.good() && !in.eof()) return VocabError(path.string(), "cannot be read");
  return Parse(contents.str(), path.string());
}

absl::StatusOr<Vocab> Vocab::Parse(std::string_view contents, std::string_view source) {
  if (contents.empty()) return VocabError(source, "empty vocabulary");
  Vocab vocab;
  size_t line_start = 0;
  while (line_start < contents.size()) {
    size_t line_end = contents.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = contents.size();
    const std::string_view line = contents.substr(line_start, line_end - line_start);
    const int32_t id = vocab.size();
    bool valid = true;
    std::u32string token = DecodeUtf8(line, &valid);
    if (!valid) return VocabError(source, absl::StrCat("line ", id + 1, ": not valid UTF-8"));
    while (!token.empty() && IsUnicodeWhitespace(token.back())) token.pop_back();
    vocab.tokens_.push_back(EncodeUtf8(token));
    vocab.ids_.insert_or_assign(vocab.tokens_.back(), id);
    line_start = line_end + 1;
  }

  const auto special = [&vocab](std::string_view token) -> std::optional<int32_t> {
    std::optional<int32_t> id = vocab.Find(token);
    if (id) vocab.special_tokens_.emplace_back(token, *id);
    return id;
  };
  vocab.pad_id_ = special("[PAD]");
  const std::optional<int32_t> unk = special("[UNK]");
  const std::optional<int32_t> cls = special("[CLS]");
  const std::optional<int32_t> sep = special("[SEP]");
  vocab.mask_id_ = special("[MASK]");
  for (const auto& [token, id] : {std::pair{"[UNK]", unk}, {"[CLS]", cls}, {"[SEP]", sep}}) {
    if (!id) return VocabError(source, absl::StrCat("no ", token, " token"));
  }
  vocab.unk_id_ = *unk;
  vocab.cls_id_ = *cls;
  vocab.sep_id_ = *sep;
  return vocab;
}

std::optional<int32_t> Vocab::Find(std::string_view token) const {
  const auto it = ids_.find(ToAbsl(token));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<TokenizerOptions> ReadTokenizerOptions(const std::filesystem::path& model_dir) {
  TokenizerOptions options;
  const auto read = [](const std::filesystem::path& path) -> absl::StatusOr<nlohmann::json> {
    std::ifstream in(path, std::ios::binary);
    if (!in) return nlohmann::json::object();
    nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object()) {
      return absl::DataLossError(absl::StrCat(path.string(), ": not a JSON object"));
    }
    return json;
  };
  const auto wrong_type = [](const std::filesystem::path& path, std::string_view key) {
    return absl::DataLossError(
        absl::StrCat(path.string(), ": \"", ToAbsl(key), "\" has the wrong type"));
  };

  const std::filesystem::path tokenizer_config = model_dir / "tokenizer_config.json";
  ASSIGN_OR_RETURN(const nlohmann::json tokenizer, read(tokenizer_config));
  for (const auto& [key, field] : {std::pair{"do_lower_case", &options.lowercase},
                                   {"tokenize_chinese_chars", &options.tokenize_chinese_chars}}) {
    if (!tokenizer.contains(key)) continue;
    if (!tokenizer[key].is_boolean()) return wrong_type(tokenizer_config, key);
    *field = tokenizer[key].get<bool>();
  }
  if (tokenizer.contains("strip_accents") && !tokenizer["strip_accents"].is_null()) {
    if (!tokenizer["strip_accents"].is_boolean()) {
      return wrong_type(tokenizer_config, "strip_accents");
    }
    options.strip_accents = tokenizer["strip_accents"].get<bool>();
  }
  // The length limit as sentence-transformers sets it: the sentence config's max_seq_length,
  // else the smaller of the tokenizer's model_max_length (where 1e30 means none) and the
  // model's max_position_embeddings.
  std::optional<int64_t> limit;
  const auto at_most = [&limit](int64_t value) {
    if (!limit || value < *limit) limit = value;
  };
  const auto read_limit = [&wrong_type](const nlohmann::json& json,
                                        const std::filesystem::path& path,
                                        const char* key) -> absl::StatusOr<std::optional<int64_t>> {
    if (!json.contains(key)) return std::nullopt;
    if (!json[key].is_number()) return wrong_type(path, key);
    const double value = json[key].get<double>();
    if (value > 1e6) return std::nullopt;
    if (value < 2) {
      return absl::DataLossError(
          absl::StrCat(path.string(), ": \"", key, "\" must be at least 2, got ", value));
    }
    return static_cast<int64_t>(value);
  };
  ASSIGN_OR_RETURN(const std::optional<int64_t> model_max_length,
                   read_limit(tokenizer, tokenizer_config, "model_max_length"));
  if (model_max_length) at_most(*model_max_length);

  const std::filesystem::path model_config = model_dir / "config.json";
  ASSIGN_OR_RETURN(const nlohmann::json model, read(model_config));
  ASSIGN_OR_RETURN(const std::optional<int64_t> positions,
                   read_limit(model, model_config, "max_position_embeddings"));
  if (positions) at_most(*positions);

  const std::filesystem::path sentence_config = model_dir / "sentence_bert_config.json";
  ASSIGN_OR_RETURN(const nlohmann::json sentence, read(sentence_config));
  ASSIGN_OR_RETURN(const std::optional<int64_t> max_seq_length,
                   read_limit(sentence, sentence_config, "max_seq_length"));
  if (max_seq_length) limit = *max_seq_length;

  if (limit) options.max_length = static_cast<int>(*limit);
  return options;
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::Load(
    const std::filesystem::path& model_dir) {
  ASSIGN_OR_RETURN(Vocab vocab, Vocab::Load(model_dir / "vocab.txt"));
  ASSIGN_OR_RETURN(const TokenizerOptions options, ReadTokenizerOptions(model_dir));
  return Create(std::move(vocab), options);
}

absl::StatusOr<WordPieceTokenizer> WordPieceTokenizer::Create(Vocab vocab,
                                                              TokenizerOptions options) {
  if (options.max_length < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_length: must be at least 2, got ", options.max_length));
  }
  return WordPieceTokenizer(std::move(vocab), options);
}

std::vector<int32_t> WordPieceTokenizer::Encode(std::string_view text) const {
  const std::u32string decoded = DecodeUtf8(text);
  const std::u32string_view all(decoded);
  std::vector<int32_t> ids = {vocab_.cls_id()};
  const size_t kept = KeptIds();

  // Special tokens are found in the text as written, before any normalization.
  size_t plain_start = 0;
  size_t i = 0;
  while (i < all.size() && ids.size() < kept) {
    std::optional<std::pair<size_t, int32_t>> special;  // Its length and id.
    if (all[i] == '[') {
      for (const auto& [token, id] : vocab_.special_tokens()) {
        if (all.size() - i >= token.size() &&
            std::equal(token.begin(), token.end(), all.begin() + static_cast<ptrdiff_t>(i),
                       [](char a, char32_t b) { return static_cast<unsigned char>(a) == b; })) {
          special = {token.size(), id};
          break;
        }
      }
    }
    if (!special) {
      ++i;
      continue;
    }
    EncodePlain(all.substr(plain_start, i - plain_start), ids);
    ids.push_back(special->second);
    i += special->first;
    plain_start = i;
  }
  if (ids.size() < kept) EncodePlain(all.substr(plain_start), ids);

  if (ids.size() > kept) ids.resize(kept);
  ids.push_back(vocab_.sep_id());
  return ids;
}

std::vector<std::string> WordPieceTokenizer::Tokens(std::string_view text) const {
  std::vector<std::string> tokens;
  for (int32_t id : Encode(text)) tokens.push_back(vocab_.Token(id));
  return tokens;
}

void WordPieceTokenizer::EncodePlain(std::u32string_view text, std::vector<int32_t>& ids) const {
  if (text.empty()) return;
  const std::u32string normalized =
      Normalize(text, {.lowercase = options_.lowercase,
                       .strip_accents = options_.strips_accents(),
                       .tokenize_chinese_chars = options_.tokenize_chinese_chars});
  // Words past the truncation point would be cut anyway.
  for (std::u32string_view word : PreTokenize(normalized)) {
    if (ids.size() >= KeptIds()) return;
    EncodeWord(word, ids);
  }
}

void WordPieceTokenizer::EncodeWord(std::u32string_view word, std::vector<int32_t>& ids) const {
  if (word.size() > kMaxWordChars) {
    ids.push_back(vocab_.unk_id());
    return;
  }
  // Byte offsets of each character in the word's UTF-8, and one past the end.
  std::string utf8;
  std::vector<size_t> offsets;
  offsets.reserve(word.size() + 1);
  for (char32_t c : word) {
    offsets.push_back(utf8.size());
    AppendUtf8(c, utf8);
  }
  offsets.push_back(utf8.size());

  // Greedy longest match first: the longest vocabulary entry the word starts with, then the
  // longest "##" entry the rest starts with, and so on; a rest that matches nothing makes the
  // whole word [UNK].
  const size_t first_id = ids.size();
  std::string piece;
  size_t start = 0;
  while (start < word.size()) {
    std::optional<int32_t> match;
    size_t end = word.size();
    for (; end > start; --end) {
      const std::string_view bytes =
          std::string_view(utf8).substr(offsets[start], offsets[end] - offsets[start]);
      if (start == 0) {
        match = vocab_.Find(bytes);
      } else {
        piece.assign(kContinuation);
        piece.append(bytes);
        match = vocab_.Find(piece);
      }
      if (match) break;
    }
    if (!match) {
      ids.resize(first_id);
      ids.push_back(vocab_.unk_id());
      return;
    }
    ids.push_back(*match);
    start = end;
  }
}

}  // namespace strata::embed::bert
