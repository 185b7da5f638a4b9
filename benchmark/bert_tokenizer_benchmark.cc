// The BERT tokenizer's speed on natural text: tokens per second through Encode, with the
// bert-base-uncased vocabulary of the golden tests (full size, so lookups cost what they do in
// a model). It first checks its own answer: every golden case gives Hugging Face's ids.
// Run: meson test -C build --benchmark bert_tokenizer, or the binary directly.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "embed/bert/wordpiece.h"
#include "testing/bert_golden.h"

namespace strata::embed::bert {
namespace {

const WordPieceTokenizer& Uncased() {
  static const WordPieceTokenizer* tokenizer = [] {
    absl::StatusOr<Vocab> vocab =
        Vocab::Parse(testing::BertGoldenVocabText(), "bert_vocab_sparse.tsv");
    absl::StatusOr<WordPieceTokenizer> made =
        vocab.ok() ? WordPieceTokenizer::Create(*std::move(vocab), {})
                   : absl::StatusOr<WordPieceTokenizer>(vocab.status());
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
      std::exit(1);
    }
    int wrong = 0;
    for (const testing::BertGoldenCase& golden : testing::ReadBertGoldenCases()) {
      if (golden.variant == "uncased" && golden.max_length == 512 &&
          made->Encode(golden.text) != golden.ids) {
        ++wrong;
      }
    }
    if (wrong > 0) {
      std::fprintf(stderr, "%d golden cases give other ids than Hugging Face\n", wrong);
      std::exit(1);
    }
    return new WordPieceTokenizer(*std::move(made));
  }();
  return *tokenizer;
}

// Natural text of about `words` words: sentences of the golden prose, repeated.
std::string Prose(int words) {
  static const char* const kSentences[] = {
      "She drinks green tea after lunch.",
      "We chose PostgreSQL for billing because of its transactional guarantees.",
      "Deploy the Kubernetes cluster upgrade on Friday, not Monday!",
      "Don't forget: the meeting's at 3:30pm (room 4B).",
      "Prices rose 3.5% to $1,234.56 in Q3 2024.",
      "The user prefers dark mode and vim keybindings.",
      "Remember that Alice is allergic to peanuts.",
      "Naïve café owners serve crème brûlée à la carte.",
      "Recall returns the five most relevant memories, newest first when tied.",
      "BM25 and dense retrieval are fused with reciprocal rank fusion (k=60).",
  };
  std::string text;
  int count = 0;
  for (size_t i = 0; count < words; ++i) {
    const std::string sentence = kSentences[i % std::size(kSentences)];
    absl::StrAppend(&text, text.empty() ? "" : " ", sentence);
    count += static_cast<int>(std::count(sentence.begin(), sentence.end(), ' ')) + 1;
  }
  return text;
}

void BM_Encode(benchmark::State& state) {
  const WordPieceTokenizer& tokenizer = Uncased();
  const std::string text = Prose(static_cast<int>(state.range(0)));
  size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<int32_t> ids = tokenizer.Encode(text);
    tokens += ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["tokens"] = static_cast<double>(tokenizer.Encode(text).size());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_Encode)->RangeMultiplier(4)->Range(16, 1024)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata::embed::bert

BENCHMARK_MAIN();
