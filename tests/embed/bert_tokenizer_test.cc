// embed::bert::Vocab and WordPieceTokenizer: golden ids from Hugging Face's tokenizer with the
// bert-base-uncased vocabulary (testdata/, from tools/golden/bert_tokenizer/generate.mjs) for
// every case, then vocabulary loading and its errors, the word limit, truncation, special
// tokens, bad UTF-8 and the options a model directory gives.

#include "embed/bert/wordpiece.h"

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "testing/bert_golden.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::embed::bert {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

void WriteFile(const std::string& path, std::string_view contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

Vocab ParseOrDie(std::string_view contents) {
  absl::StatusOr<Vocab> vocab = Vocab::Parse(contents, "vocab.txt");
  EXPECT_THAT(vocab, IsOk());
  return std::move(vocab).value();
}

WordPieceTokenizer MakeOrDie(Vocab vocab, TokenizerOptions options = {}) {
  absl::StatusOr<WordPieceTokenizer> tokenizer =
      WordPieceTokenizer::Create(std::move(vocab), options);
  EXPECT_THAT(tokenizer, IsOk());
  return std::move(tokenizer).value();
}

TokenizerOptions VariantOptions(const std::string& variant, int max_length) {
  TokenizerOptions options = {.max_length = max_length};
  if (variant == "cased") {
    options.lowercase = false;
    options.strip_accents = false;
  } else if (variant == "uncased_accents") {
    options.strip_accents = false;
  } else if (variant == "cased_stripped") {
    options.lowercase = false;
    options.strip_accents = true;
  } else if (variant == "no_chinese") {
    options.tokenize_chinese_chars = false;
  } else {
    EXPECT_EQ(variant, "uncased");
  }
  return options;
}

TEST(BertTokenizer, GoldenIdsFromHuggingFace) {
  // Through a file, as a model directory would give it.
  testing::TempDir dir;
  const std::string vocab_text = testing::BertGoldenVocabText();
  ASSERT_FALSE(vocab_text.empty()) << "testdata/bert_vocab_sparse.tsv is missing or bad";
  WriteFile(dir.File("vocab.txt"), vocab_text);
  absl::StatusOr<Vocab> vocab = Vocab::Load(dir.File("vocab.txt"));
  ASSERT_THAT(vocab, IsOk());
  EXPECT_EQ(vocab->size(), 30522);

  std::map<std::pair<std::string, int>, WordPieceTokenizer> tokenizers;
  std::map<std::string, int> cases;  // By variant.
  for (const testing::BertGoldenCase& golden : testing::ReadBertGoldenCases()) {
    const std::pair key = {golden.variant, golden.max_length};
    auto it = tokenizers.find(key);
    if (it == tokenizers.end()) {
      it = tokenizers
               .emplace(key, MakeOrDie(*vocab, VariantOptions(golden.variant, golden.max_length)))
               .first;
    }
    const std::vector<int32_t> ids = it->second.Encode(golden.text);
    if (ids != golden.ids) {
      std::vector<std::string> expected_tokens;
      for (int32_t id : golden.ids) expected_tokens.push_back(vocab->Token(id));
      ADD_FAILURE() << golden.variant << ", max_length " << golden.max_length << ": "
                    << nlohmann::json(golden.text)
                    << "\n  expected: " << absl::StrJoin(expected_tokens, " ")
                    << "\n  got:      " << absl::StrJoin(it->second.Tokens(golden.text), " ");
    }
    ++cases[golden.variant];
  }
  EXPECT_GE(cases["uncased"], 500);
  EXPECT_GE(cases["cased"], 100);
}

TEST(Vocab, IdsAreLineNumbers) {
  const Vocab vocab = ParseOrDie("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\n");
  EXPECT_EQ(vocab.size(), 7);
  EXPECT_THAT(vocab.Find("hello"), Optional(5));
  EXPECT_THAT(vocab.Find("##s"), Optional(6));
  EXPECT_EQ(vocab.Find("s"), std::nullopt);
  EXPECT_EQ(vocab.Token(5), "hello");
  EXPECT_EQ(vocab.pad_id(), 0);
  EXPECT_EQ(vocab.unk_id(), 1);
  EXPECT_EQ(vocab.cls_id(), 2);
  EXPECT_EQ(vocab.sep_id(), 3);
  EXPECT_EQ(vocab.mask_id(), 4);
}

TEST(Vocab, ReadsCrlfNoFinalNewlineAndTrailingWhitespaceAsHuggingFace) {
  const Vocab vocab = ParseOrDie("[UNK]\r\n[CLS]\r\n[SEP]\r\nhello \t\r\nworld");
  EXPECT_EQ(vocab.size(), 5);
  EXPECT_THAT(vocab.Find("hello"), Optional(3));
  EXPECT_THAT(vocab.Find("world"), Optional(4));
  EXPECT_EQ(vocab.pad_id(), std::nullopt);
  EXPECT_EQ(vocab.mask_id(), std::nullopt);
  // An empty line is an id too.
  const Vocab gaps = ParseOrDie("[UNK]\n\n[CLS]\n[SEP]\n");
  EXPECT_EQ(gaps.size(), 4);
  EXPECT_EQ(gaps.cls_id(), 2);
}

TEST(Vocab, DuplicateKeepsTheLastId) {
  const Vocab vocab = ParseOrDie("[UNK]\n[CLS]\n[SEP]\nhello\nworld\nhello\n");
  EXPECT_EQ(vocab.size(), 6);
  EXPECT_THAT(vocab.Find("hello"), Optional(5));
  EXPECT_EQ(vocab.Token(3), "hello");
}

TEST(Vocab, ErrorsNameTheFileAndLine) {
  testing::TempDir dir;
  EXPECT_THAT(Vocab::Load(dir.File("missing.txt")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.txt")));
  WriteFile(dir.File("empty.txt"), "");
  EXPECT_THAT(Vocab::Load(dir.File("empty.txt")),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("empty.txt: empty")));
  WriteFile(dir.File("no_unk.txt"), "[CLS]\n[SEP]\nhello\n");
  EXPECT_THAT(Vocab::Load(dir.File("no_unk.txt")),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no_unk.txt: no [UNK] token")));
  WriteFile(dir.File("no_sep.txt"), "[UNK]\n[CLS]\n");
  EXPECT_THAT(Vocab::Load(dir.File("no_sep.txt")),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no [SEP] token")));
  WriteFile(dir.File("bad_utf8.txt"), "[UNK]\n[CLS]\nh\xffllo\n[SEP]\n");
  EXPECT_THAT(
      Vocab::Load(dir.File("bad_utf8.txt")),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("bad_utf8.txt: line 3: not valid UTF-8")));
}

const char kSmallVocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nun\n##aff\n##able\nhello\nworld\n,\n!\n[\n]\na\n##a\n";

TEST(WordPieceTokenizer, GreedyLongestMatchWithContinuations) {
  const WordPieceTokenizer tokenizer = MakeOrDie(ParseOrDie(kSmallVocab));
  EXPECT_THAT(tokenizer.Tokens("Unaffable, hello WORLD!"),
              ElementsAre("[CLS]", "un", "##aff", "##able", ",", "hello", "world", "!", "[SEP]"));
  // A word with an unmatched rest is [UNK] whole.
  EXPECT_THAT(tokenizer.Tokens("unaffablex hello"),
              ElementsAre("[CLS]", "[UNK]", "hello", "[SEP]"));
  EXPECT_THAT(tokenizer.Encode(""), ElementsAre(2, 3));
}

TEST(WordPieceTokenizer, WordOverOneHundredCharactersIsUnknown) {
  const WordPieceTokenizer tokenizer = MakeOrDie(ParseOrDie(kSmallVocab));
  EXPECT_EQ(tokenizer.Encode(std::string(100, 'a')).size(), 2u + 100u);
  EXPECT_THAT(tokenizer.Tokens(std::string(101, 'a')), ElementsAre("[CLS]", "[UNK]", "[SEP]"));
  // Characters, not bytes: 100 two-byte 'à' strip to 100 'a'.
  std::string accented;
  for (int i = 0; i < 100; ++i) accented += "\xc3\xa0";
  EXPECT_EQ(tokenizer.Encode(accented).size(), 2u + 100u);
}

TEST(WordPieceTokenizer, TruncationKeepsSepLast) {
  const WordPieceTokenizer tokenizer = MakeOrDie(ParseOrDie(kSmallVocab), {.max_length = 5});
  EXPECT_THAT(tokenizer.Tokens("hello world hello world hello"),
              ElementsAre("[CLS]", "hello", "world", "hello", "[SEP]"));
  EXPECT_THAT(tokenizer.Tokens("hello world"), ElementsAre("[CLS]", "hello", "world", "[SEP]"));
  const WordPieceTokenizer tightest = MakeOrDie(ParseOrDie(kSmallVocab), {.max_length = 2});
  EXPECT_THAT(tightest.Tokens("hello"), ElementsAre("[CLS]", "[SEP]"));
  EXPECT_THAT(WordPieceTokenizer::Create(ParseOrDie(kSmallVocab), {.max_length = 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_length")));
}

TEST(WordPieceTokenizer, SpecialTokensInTextStayWhole) {
  const WordPieceTokenizer tokenizer = MakeOrDie(ParseOrDie(kSmallVocab));
  EXPECT_THAT(tokenizer.Tokens("hello[SEP]world [MASK]"),
              ElementsAre("[CLS]", "hello", "[SEP]", "world", "[MASK]", "[SEP]"));
  // Matched as written, before normalization: other spellings are plain text.
  EXPECT_THAT(tokenizer.Tokens("[sep] [SE\u200bP]"),
              ElementsAre("[CLS]", "[", "[UNK]", "]", "[", "[UNK]", "]", "[SEP]"));
}

TEST(WordPieceTokenizer, BadUtf8IsDroppedWithoutSplitting) {
  const WordPieceTokenizer tokenizer = MakeOrDie(ParseOrDie(kSmallVocab));
  EXPECT_EQ(tokenizer.Encode("hel\xfflo wor\xe4\xb8ld"), tokenizer.Encode("hello world"));
  EXPECT_EQ(tokenizer.Encode("\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80"), tokenizer.Encode(""));
  EXPECT_EQ(tokenizer.Encode("\xff[SEP]\xff"), tokenizer.Encode("[SEP]"));
  std::string noise;
  for (int i = 0; i < 4096; ++i) noise += static_cast<char>(i * 37 + 11);
  EXPECT_GE(tokenizer.Encode(noise).size(), 2u);
}

TEST(ReadTokenizerOptions, DefaultsWithoutFiles) {
  testing::TempDir dir;
  absl::StatusOr<TokenizerOptions> options = ReadTokenizerOptions(dir.path());
  ASSERT_THAT(options, IsOk());
  EXPECT_TRUE(options->lowercase);
  EXPECT_TRUE(options->strips_accents());
  EXPECT_TRUE(options->tokenize_chinese_chars);
  EXPECT_EQ(options->max_length, 512);
}

TEST(ReadTokenizerOptions, ReadsTokenizerAndSentenceConfigs) {
  testing::TempDir dir;
  WriteFile(dir.File("tokenizer_config.json"),
            R"({"do_lower_case": false, "strip_accents": null, "model_max_length": 1e30,
                "tokenize_chinese_chars": false})");
  absl::StatusOr<TokenizerOptions> options = ReadTokenizerOptions(dir.path());
  ASSERT_THAT(options, IsOk());
  EXPECT_FALSE(options->lowercase);
  EXPECT_FALSE(options->strips_accents());  // Follows lowercase.
  EXPECT_FALSE(options->tokenize_chinese_chars);
  EXPECT_EQ(options->max_length, 512);  // 1e30 means no limit.

  WriteFile(dir.File("tokenizer_config.json"),
            R"({"do_lower_case": true, "strip_accents": false, "model_max_length": 512})");
  WriteFile(dir.File("sentence_bert_config.json"),
            R"({"max_seq_length": 256, "do_lower_case": false})");
  options = ReadTokenizerOptions(dir.path());
  ASSERT_THAT(options, IsOk());
  EXPECT_TRUE(options->lowercase);
  EXPECT_FALSE(options->strips_accents());
  EXPECT_EQ(options->max_length, 256);
}

TEST(ReadTokenizerOptions, LengthIsTheSmallerOfTokenizerAndPositionsWithoutSentenceConfig) {
  testing::TempDir dir;
  WriteFile(dir.File("config.json"), R"({"max_position_embeddings": 128})");
  absl::StatusOr<TokenizerOptions> options = ReadTokenizerOptions(dir.path());
  ASSERT_THAT(options, IsOk());
  EXPECT_EQ(options->max_length, 128);

  WriteFile(dir.File("tokenizer_config.json"), R"({"model_max_length": 64})");
  options = ReadTokenizerOptions(dir.path());
  ASSERT_THAT(options, IsOk());
  EXPECT_EQ(options->max_length, 64);

  WriteFile(dir.File("sentence_bert_config.json"), R"({"max_seq_length": 256})");
  options = ReadTokenizerOptions(dir.path());
  ASSERT_THAT(options, IsOk());
  EXPECT_EQ(options->max_length, 256);
}

TEST(WordPieceTokenizer, LoadsAModelDirectory) {
  testing::TempDir dir;
  WriteFile(dir.File("vocab.txt"), kSmallVocab);
  WriteFile(dir.File("tokenizer_config.json"), R"({"do_lower_case": false})");
  WriteFile(dir.File("sentence_bert_config.json"), R"({"max_seq_length": 4})");
  absl::StatusOr<WordPieceTokenizer> tokenizer = WordPieceTokenizer::Load(dir.path());
  ASSERT_THAT(tokenizer, IsOk());
  EXPECT_THAT(tokenizer->Tokens("hello Hello world"),
              ElementsAre("[CLS]", "hello", "[UNK]", "[SEP]"));

  testing::TempDir empty;
  EXPECT_THAT(WordPieceTokenizer::Load(empty.path()),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("vocab.txt")));
}

TEST(ReadTokenizerOptions, BadFilesAreErrorsNamingThem) {
  testing::TempDir dir;
  WriteFile(dir.File("tokenizer_config.json"), "{not json");
  EXPECT_THAT(ReadTokenizerOptions(dir.path()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("tokenizer_config.json")));
  WriteFile(dir.File("tokenizer_config.json"), R"({"do_lower_case": "yes"})");
  EXPECT_THAT(ReadTokenizerOptions(dir.path()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("do_lower_case")));
  WriteFile(dir.File("tokenizer_config.json"), "{}");
  WriteFile(dir.File("sentence_bert_config.json"), R"({"max_seq_length": 1})");
  EXPECT_THAT(ReadTokenizerOptions(dir.path()),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("max_seq_length")));
}

}  // namespace
}  // namespace strata::embed::bert
