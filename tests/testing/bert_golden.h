#pragma once
// The BERT tokenizer's golden data in tests/embed/testdata/ (written by
// tools/golden/bert_tokenizer/generate.mjs from Hugging Face's tokenizer), for its test and its
// benchmark. REQUIRES: STRATA_TESTS_DIR defined (tests/meson.build does it).

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace strata::testing {

inline const char kBertTestData[] = STRATA_TESTS_DIR "/embed/testdata/";

struct BertGoldenCase {
  std::string text;
  std::string variant;  // "uncased" (bert-base-uncased), "cased", "uncased_accents", ...
  int max_length = 512;
  std::vector<int32_t> ids;
};

// Every case, in file order; empty if the file is missing.
inline std::vector<BertGoldenCase> ReadBertGoldenCases() {
  std::ifstream in(absl::StrCat(kBertTestData, "bert_tokenizer_golden.jsonl"));
  std::vector<BertGoldenCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json golden = nlohmann::json::parse(line);
    cases.push_back({.text = golden["text"],
                     .variant = golden["variant"],
                     .max_length = golden["max_length"],
                     .ids = golden["ids"]});
  }
  return cases;
}

// bert-base-uncased's vocab.txt as far as the golden texts can tell: the entries they may
// match at their ids, every other line a placeholder no word can match ('[' splits off).
// Empty if the file is missing.
inline std::string BertGoldenVocabText() {
  std::ifstream in(absl::StrCat(kBertTestData, "bert_vocab_sparse.tsv"));
  std::string key;
  int size = 0;
  if (!(in >> key >> size) || key != "size" || size <= 0) return "";
  std::vector<std::string> lines(size);
  for (int id = 0; id < size; ++id) lines[id] = absl::StrCat("[strata-unused-", id, "]");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    const int id = std::stoi(line.substr(0, tab));
    if (id >= 0 && id < size) lines[id] = line.substr(tab + 1);
  }
  return absl::StrJoin(lines, "\n") + "\n";
}

}  // namespace strata::testing
