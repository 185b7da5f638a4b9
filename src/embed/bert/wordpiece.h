#pragma once
// The BERT tokenizer, exactly as Hugging Face's fast tokenizer (the `tokenizers` library) runs
// it for bert-base-uncased and the sentence models built on it: the BertNormalizer (clean text,
// CJK ideographs split, NFD + accent stripping, lowercasing), the BertPreTokenizer (whitespace
// and punctuation) and the WordPiece model (greedy longest match, "##" continuations), with the
// special tokens ([CLS], [SEP], ...) written in a text kept whole, then [CLS] ... [SEP] and
// truncation. tests/embed/bert_tokenizer_test.cc holds golden ids from the real one.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "util/check.h"

namespace strata::embed::bert {

// A WordPiece vocabulary: `vocab.txt`, one token per line, the id of a token its line number
// (from 0). As Hugging Face reads it: "\n" or "\r\n" ends a line, trailing whitespace is not
// part of a token, and a token on two lines keeps the id of the last.
// Thread safety: immutable once loaded; may be shared between threads.
class Vocab {
 public:
  // Errors: NotFound (no such file), DataLoss (unreadable, empty, a line that is not UTF-8,
  // or no [UNK], [CLS] or [SEP] token), each naming the file (and the line).
  static absl::StatusOr<Vocab> Load(const std::filesystem::path& path);
  // The same from the file's contents; `source` names them in errors.
  static absl::StatusOr<Vocab> Parse(std::string_view contents, std::string_view source);

  std::optional<int32_t> Find(std::string_view token) const;
  // The token on line `id`. REQUIRES: 0 <= id < size().
  const std::string& Token(int32_t id) const {
    STRATA_DCHECK(0 <= id && id < size());
    return tokens_[id];
  }
  // Lines, which is the number of ids (a model's embedding rows), duplicates included.
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }

  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t unk_id() const { return unk_id_; }
  std::optional<int32_t> pad_id() const { return pad_id_; }
  std::optional<int32_t> mask_id() const { return mask_id_; }
  // [PAD] [UNK] [CLS] [SEP] [MASK], those in the vocabulary, with their ids: the tokens a text
  // may contain literally (they are kept whole, never normalized or split).
  const std::vector<std::pair<std::string, int32_t>>& special_tokens() const {
    return special_tokens_;
  }

 private:
  Vocab() = default;

  std::vector<std::string> tokens_;
  absl::flat_hash_map<std::string, int32_t> ids_;
  int32_t cls_id_ = 0;
  int32_t sep_id_ = 0;
  int32_t unk_id_ = 0;
  std::optional<int32_t> pad_id_;
  std::optional<int32_t> mask_id_;
  std::vector<std::pair<std::string, int32_t>> special_tokens_;
};

// How a model tokenizes, from its tokenizer_config.json and sentence_bert_config.json.
struct TokenizerOptions {
  bool lowercase = true;
  // Unset: the same as `lowercase` (Hugging Face's default, strip_accents: null).
  std::optional<bool> strip_accents;
  bool tokenize_chinese_chars = true;
  // Ids per text, [CLS] and [SEP] included; longer texts are cut, [SEP] kept last. >= 2.
  int max_length = 512;

  bool strips_accents() const { return strip_accents.value_or(lowercase); }
};

// Reads the options from a model directory, as sentence-transformers would:
// tokenizer_config.json (do_lower_case, strip_accents, tokenize_chinese_chars), and for
// max_length sentence_bert_config.json's max_seq_length, else the smaller of
// tokenizer_config.json's model_max_length and config.json's max_position_embeddings. Each
// file is optional; what none says keeps its default. Errors: DataLoss naming a file that is
// not a JSON object or a key of the wrong type (or a length below 2).
absl::StatusOr<TokenizerOptions> ReadTokenizerOptions(const std::filesystem::path& model_dir);

// Thread safety: immutable; Encode and Tokens may be called from several threads at once.
class WordPieceTokenizer {
 public:
  // Errors: InvalidArgument if options.max_length < 2.
  static absl::StatusOr<WordPieceTokenizer> Create(Vocab vocab, TokenizerOptions options);
  // model_dir's vocab.txt, tokenized as its JSON files say (ReadTokenizerOptions). Errors:
  // those of Vocab::Load and ReadTokenizerOptions.
  static absl::StatusOr<WordPieceTokenizer> Load(const std::filesystem::path& model_dir);

  // The ids of [CLS], the text's tokens and [SEP], at most options().max_length of them. Text
  // that is not valid UTF-8 is read as if each bad byte were U+FFFD, which cleaning drops, so
  // a bad byte vanishes without splitting the word around it.
  std::vector<int32_t> Encode(std::string_view text) const;
  // The same as the vocabulary's tokens ("[CLS]", "hello", "##s", ...), for tests and debugging.
  std::vector<std::string> Tokens(std::string_view text) const;

  const Vocab& vocab() const { return vocab_; }
  const TokenizerOptions& options() const { return options_; }

 private:
  WordPieceTokenizer(Vocab vocab, TokenizerOptions options)
      : vocab_(std::move(vocab)), options_(options) {}

  // How many ids a text keeps before [SEP]: [CLS] and the first tokens.
  size_t KeptIds() const { return static_cast<size_t>(options_.max_length) - 1; }
  // Appends the ids of one piece of text without special tokens (none past KeptIds()).
  void EncodePlain(std::u32string_view text, std::vector<int32_t>& ids) const;
  // Appends the ids of one pre-token: its WordPiece pieces, or [UNK].
  void EncodeWord(std::u32string_view word, std::vector<int32_t>& ids) const;

  Vocab vocab_;
  TokenizerOptions options_;
};

}  // namespace strata::embed::bert
