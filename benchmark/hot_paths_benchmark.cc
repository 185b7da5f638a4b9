// Micro-benchmarks of the hot paths of a write and a recall, in process. Fixed seeds; setup
// outside the timed loops. Run: meson test -C build --benchmark, or the binary directly.

#include <benchmark/benchmark.h>
#include <sqlite3.h>  // SQLite's own tokenizers, called as FTS5 calls them, for comparison.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dedup/signature.h"
#include "embed/registry.h"
#include "mcp/dispatcher.h"
#include "recall/fusion.h"
#include "store/db.h"
#include "strata/strata.h"
#include "text/body_text.h"
#include "text/fts5_extensions.h"
#include "text/fts_query.h"
#include "text/tokenizer.h"
#include "tools/registry.h"
#include "vector/codec.h"
#include "vector/hnsw_index.h"

namespace strata {
namespace {

// A body in the shape of the scale corpus: "[i] <words>", "entity i in group i%977", a nonce.
std::string CorpusBody(int i, int words) {
  std::mt19937 rng(static_cast<uint32_t>(i));
  static const char* const kSyllables[] = {"ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "vu"};
  std::string text = absl::StrCat("[", i, "]");
  for (int w = 0; w < words; ++w) {
    text += ' ';
    for (int s = 0; s < 3; ++s) text += kSyllables[rng() % 9];
  }
  return absl::StrCat(R"({"text": ")", text, R"(", "detail": "entity )", i, " in group ", i % 977,
                      R"(", "nonce": ")", rng(), R"("})");
}

void BM_ParseBody(benchmark::State& state) {
  const std::string body = CorpusBody(7, static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(text::ParseBody(body));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
}
BENCHMARK(BM_ParseBody)->Arg(40)->Arg(120);

// What a write computes for the near-duplicate check: the body's units, then its band keys.
void BM_AnalyzeAndBandKeys(benchmark::State& state) {
  const text::ParsedBody body = *text::ParseBody(CorpusBody(7, static_cast<int>(state.range(0))));
  const uint64_t scope = dedup::ScopeHash("fact", "");
  for (auto _ : state) {
    benchmark::DoNotOptimize(dedup::BandKeys(dedup::Analyze(body), body.normal_hash, scope));
  }
}
BENCHMARK(BM_AnalyzeAndBandKeys)->Arg(40)->Arg(120);

// One candidate verification: trigram sets of two bodies and their Jaccard similarity.
void BM_TrigramJaccard(benchmark::State& state) {
  const text::ParsedBody a = *text::ParseBody(CorpusBody(1, 80));
  const text::ParsedBody b = *text::ParseBody(CorpusBody(2, 80));
  double similarity = 0;
  for (auto _ : state) {
    similarity = dedup::Jaccard(dedup::Trigrams(a.normal_json), dedup::Trigrams(b.normal_json));
    benchmark::DoNotOptimize(similarity);
  }
  state.counters["similarity"] = similarity;
}
BENCHMARK(BM_TrigramJaccard);

void BM_FtsQueryBuild(benchmark::State& state) {
  const std::string query = "what did we decide about \"entity 48213\" AND group 97 (NEAR*)?";
  for (auto _ : state)
    benchmark::DoNotOptimize(text::MatchExpression(text::ParseQuery(query).terms));
}
BENCHMARK(BM_FtsQueryBuild);

// The vocabulary of Perseus Vault's scale corpus (WORDS in benchmark/scale/corpus.py), the
// bodies the write path tokenizes in the corpus of record.
constexpr const char* kScaleVocabulary[] = {
    "service", "latency",   "schema",  "deploy",   "index",    "queue",     "worker",  "retry",
    "cache",   "shard",     "vault",   "memory",   "recall",   "decay",     "layer",   "topic",
    "entity",  "journal",   "replica", "merge",    "postgres", "sqlite",    "onnx",    "embedding",
    "vector",  "keyword",   "hybrid",  "ranking",  "fusion",   "timeout",   "breaker", "fallback",
    "config",  "workspace", "scope",   "audit",    "chain",    "commit",    "release", "binary",
    "stdio",   "transport", "tool",    "argument", "budget",   "threshold", "gate"};
static_assert(std::size(kScaleVocabulary) == 47);

// `words` words of the scale vocabulary, drawn with a fixed seed, separated by spaces.
std::string VocabularyBody(int words, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string body;
  for (int w = 0; w < words; ++w) {
    if (w > 0) body += ' ';
    body += kScaleVocabulary[rng() % std::size(kScaleVocabulary)];
  }
  return body;
}

// An FTS5 tokenizer of a connection, as FTS5 makes one for a table: `name` with `args`.
struct Fts5Tokenizer {
  Fts5Tokenizer(sqlite3* db, const char* name, std::vector<const char*> args) {
    fts5_api* api = store::Fts5ApiOf(db);
    void* context = nullptr;
    if (api == nullptr || api->xFindTokenizer(api, name, &context, &module) != SQLITE_OK ||
        module.xCreate(context, args.data(), static_cast<int>(args.size()), &tokenizer) !=
            SQLITE_OK) {
      tokenizer = nullptr;
    }
  }
  ~Fts5Tokenizer() {
    if (tokenizer != nullptr) module.xDelete(tokenizer);
  }
  fts5_tokenizer module{};
  ::Fts5Tokenizer* tokenizer = nullptr;
};

// One 80-word body of the scale vocabulary through a tokenizer as FTS5 calls it when a row is
// written (FTS5_TOKENIZE_DOCUMENT, a callback per token): "strata" against what the index
// used before, "porter unicode61 remove_diacritics 2". Reports tokens per body.
void BM_TokenizeBody(benchmark::State& state, const char* name, std::vector<const char*> args) {
  if (!text::InstallFts5Extensions().ok()) state.SkipWithError("cannot install the tokenizer");
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  {
    Fts5Tokenizer t(db, name, std::move(args));
    if (t.tokenizer == nullptr) state.SkipWithError("no such tokenizer");
    const std::string body = VocabularyBody(80, 7);
    int64_t tokens = 0;
    auto count = [](void* counter, int, const char*, int, int, int) {
      ++*static_cast<int64_t*>(counter);
      return SQLITE_OK;
    };
    for (auto _ : state) {
      if (t.tokenizer == nullptr) break;
      t.module.xTokenize(t.tokenizer, &tokens, FTS5_TOKENIZE_DOCUMENT, body.data(),
                         static_cast<int>(body.size()), count);
    }
    state.counters["tokens_per_body"] =
        static_cast<double>(tokens) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(body.size()));
  }
  sqlite3_close(db);
}
BENCHMARK_CAPTURE(BM_TokenizeBody, strata, "strata", {});
BENCHMARK_CAPTURE(BM_TokenizeBody, porter_unicode61, "porter",
                  {"unicode61", "remove_diacritics", "2"});

// Rows of 80-word bodies into a contentless FTS5 table like strata's, one transaction of
// 1,000 rows at a time (an import): the whole of FTS5's write cost with each tokenizer.
void BM_FtsInsert(benchmark::State& state, const char* tokenize) {
  if (!text::InstallFts5Extensions().ok()) state.SkipWithError("cannot install the tokenizer");
  absl::StatusOr<std::unique_ptr<store::Db>> db = store::Db::Open(":memory:", {});
  if (!db.ok() || !(*db)
                       ->Exec(absl::StrCat("CREATE VIRTUAL TABLE fts USING fts5(text, key, "
                                           "category, content = '', tokenize = '",
                                           tokenize, "')"))
                       .ok()) {
    state.SkipWithError("cannot create the table");
    return;
  }
  std::vector<std::string> bodies;
  for (uint32_t i = 0; i < 1000; ++i) bodies.push_back(VocabularyBody(80, i));
  int64_t rowid = 0;
  (void)(*db)->Exec("BEGIN");
  for (auto _ : state) {
    absl::StatusOr<store::Stmt> insert =
        (*db)->Prepare("INSERT INTO fts (rowid, text, key, category) VALUES (?1, ?2, ?3, 'fact')");
    if (!insert.ok()) break;
    ++rowid;
    insert->Bind(1, rowid).Bind(2, bodies[rowid % 1000]).Bind(3, absl::StrCat("scale-", rowid));
    if (!insert->Run().ok()) state.SkipWithError("insert failed");
    if (rowid % 1000 == 0) (void)(*db)->Exec("COMMIT; BEGIN");
  }
  (void)(*db)->Exec("COMMIT");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_FtsInsert, strata, "strata")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_FtsInsert, porter_unicode61, "porter unicode61 remove_diacritics 2")
    ->Unit(benchmark::kMicrosecond);

// A store with `n` memories, opened once per benchmark run.
struct Fixture {
  explicit Fixture(int n) {
    dir = std::filesystem::temp_directory_path() / absl::StrCat("strata-bm-", ::getpid(), "-", n);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    store = *Store::Open({.path = (dir / "bm.db").string()});
    std::vector<WriteRequest> batch;
    for (int i = 0; i < n; ++i) {
      batch.push_back({.identity = {.category = "fact", .key = absl::StrCat("scale-", i)},
                       .body_json = CorpusBody(i, 40 + i % 81)});
      if (batch.size() == 1000 || i == n - 1) {
        (void)*store->RememberBatch(batch, {});
        batch.clear();
      }
    }
  }
  ~Fixture() {
    store.reset();
    std::filesystem::remove_all(dir);
  }
  std::filesystem::path dir;
  std::unique_ptr<Store> store;
};

void BM_Remember(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  int i = static_cast<int>(state.range(0));
  for (auto _ : state) {
    auto result =
        f.store->Remember({.identity = {.category = "fact", .key = absl::StrCat("new-", i)},
                           .body_json = CorpusBody(i, 80)});
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Remember)->Arg(1000)->Arg(20000)->Unit(benchmark::kMicrosecond);

void BM_RecallFts5(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Fixture f(n);
  std::mt19937 rng(3);
  size_t returned = 0;
  for (auto _ : state) {
    auto result =
        f.store->Recall({.query = absl::StrCat("entity ", rng() % n, " group ", rng() % 977),
                         .mode = RecallMode::kFts5});
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
    returned += result.ok() ? result->items.size() : 0;
  }
  state.counters["items_per_recall"] =
      static_cast<double>(returned) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_RecallFts5)->Arg(1000)->Arg(20000)->Unit(benchmark::kMicrosecond);

// The built-in embedder on one memory-sized text (key words plus a 40- or 120-word body).
void BM_BuiltinEmbed(benchmark::State& state) {
  auto embedder = *embed::MakeEmbedder("builtin");
  const std::vector<std::string> texts = {
      absl::StrCat("scale 7\n", text::BodyText(CorpusBody(7, static_cast<int>(state.range(0)))))};
  for (auto _ : state)
    benchmark::DoNotOptimize(embedder->Embed(texts, strata::embed::Role::kDocument));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BuiltinEmbed)->Arg(40)->Arg(120)->Unit(benchmark::kMicrosecond);

// Reciprocal rank fusion of two 50-deep arms overlapping by half.
void BM_FuseByRank(benchmark::State& state) {
  std::vector<recall::ArmHit> sparse, dense;
  for (int i = 0; i < 50; ++i) {
    sparse.push_back({i, i});
    dense.push_back({i + 25, i + 25});
  }
  for (auto _ : state) benchmark::DoNotOptimize(recall::FuseByRank(sparse, dense));
}
BENCHMARK(BM_FuseByRank);

// The built-in embedder's vectors of n corpus texts, one after another, labelled 0..n-1.
struct CorpusVectors {
  explicit CorpusVectors(int n) : labels(n) {
    auto embedder = *embed::MakeEmbedder("builtin");
    dim = embedder->info().dimension;
    std::vector<std::string> texts;
    for (int i = 0; i < n; ++i) texts.push_back(text::BodyText(CorpusBody(i, 40 + i % 81)));
    vectors = *embedder->Embed(texts, strata::embed::Role::kDocument);
    for (int i = 0; i < n; ++i) labels[i] = i;
  }
  int dim;
  std::vector<float> vectors;
  std::vector<int64_t> labels;
};

// Recall@10 of 50 self-queries of `index` against an exact scan of `corpus`.
double SelfRecallAt10(const vector::HnswIndex& index, const CorpusVectors& corpus) {
  const int n = static_cast<int>(corpus.labels.size());
  auto row = [&](int i) {
    return std::span<const float>(corpus.vectors.data() + size_t(i) * corpus.dim, corpus.dim);
  };
  int64_t found = 0;
  for (int q = 0; q < 50; ++q) {
    const int at = q * n / 50;
    std::vector<std::pair<float, int>> scored;
    for (int i = 0; i < n; ++i) scored.push_back({-vector::Dot(row(at), row(i)), i});
    std::partial_sort(scored.begin(), scored.begin() + 10, scored.end());
    for (const vector::Neighbor& hit : index.Search(row(at), 10)) {
      for (int i = 0; i < 10; ++i) found += scored[i].second == hit.label;
    }
  }
  return static_cast<double>(found) / 500.0;
}

// HNSW search over n embeddings of corpus texts, with recall@10 against an exact scan
// reported beside the speed (a faster search that finds less is not a win).
void BM_IndexSearch(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const CorpusVectors corpus(n);
  const int dim = corpus.dim;
  const std::vector<float>& vectors = corpus.vectors;
  const std::vector<int64_t>& labels = corpus.labels;
  vector::HnswIndex index(dim);
  index.AddParallel(labels, vectors, 2);
  auto row = [&](int i) { return std::span<const float>(vectors.data() + size_t(i) * dim, dim); };
  std::mt19937 rng(5);
  for (auto _ : state) benchmark::DoNotOptimize(index.Search(row(static_cast<int>(rng() % n)), 10));
  state.counters["recall_at_10"] = SelfRecallAt10(index, corpus);
}
BENCHMARK(BM_IndexSearch)->Arg(20000)->Unit(benchmark::kMicrosecond);

// Building an HNSW index of n embeddings of corpus texts on two threads, as a rebuild or a
// backlog does: the cost of insertion, which bounds the embedding drain.
void BM_IndexBuild(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const CorpusVectors corpus(n);
  const int dim = corpus.dim;
  const std::vector<float>& vectors = corpus.vectors;
  const std::vector<int64_t>& labels = corpus.labels;
  for (auto _ : state) {
    vector::HnswIndex index(dim);
    index.AddParallel(labels, vectors, 2);
    benchmark::DoNotOptimize(index.size());
  }
  state.counters["vectors_per_s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IndexBuild)->Arg(20000)->Iterations(1)->Unit(benchmark::kMillisecond);

// Saving an index of n embeddings of corpus texts (HnswIndex::Save: the graph file written and
// checksummed, fsynced and renamed, then its meta), as a node does when it stops.
void BM_IndexSave(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const CorpusVectors corpus(n);
  vector::HnswIndex index(corpus.dim);
  index.AddParallel(corpus.labels, corpus.vectors, 2);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("strata-bm-save-", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "index.hnsw").string();
  for (auto _ : state) {
    if (absl::Status s = index.Save(path, {.fingerprint = "bench", .watermark = n}); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  state.counters["bytes"] = static_cast<double>(std::filesystem::file_size(path));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_IndexSave)->Arg(20000)->Unit(benchmark::kMillisecond);

// A second node's index of n embeddings, built from the links the first node's index gave
// each one (HnswIndex::Links, read as the embedding worker reads them: after each batch of 64
// it inserted), on two threads: the insertion that skips the search. Reported beside the
// first index's recall@10 and its own (a cheaper build that finds less is not a win).
void BM_IndexBuildFromLinks(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const CorpusVectors corpus(n);
  const int dim = corpus.dim;
  vector::HnswIndex first(dim);
  std::vector<std::vector<int64_t>> links(n);
  constexpr int kBatch = 64;
  for (int at = 0; at < n; at += kBatch) {
    const int end = std::min(n, at + kBatch);
    first.AddParallel(std::span(corpus.labels).subspan(at, end - at),
                      std::span(corpus.vectors).subspan(size_t(at) * dim, size_t(end - at) * dim),
                      1);
    for (int i = at; i < end; ++i) links[i] = first.Links(i);
  }
  double recall = 0;
  for (auto _ : state) {
    vector::HnswIndex second(dim);
    second.AddParallel(corpus.labels, corpus.vectors, 2, links);
    state.PauseTiming();
    recall = SelfRecallAt10(second, corpus);
    state.ResumeTiming();
  }
  state.counters["vectors_per_s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["first_recall_at_10"] = SelfRecallAt10(first, corpus);
  state.counters["recall_at_10"] = recall;
}
BENCHMARK(BM_IndexBuildFromLinks)->Arg(20000)->Iterations(1)->Unit(benchmark::kMillisecond);

// Dense and hybrid recall through the store, once its vectors are embedded and indexed.
void BM_RecallMode(benchmark::State& state, RecallMode mode) {
  const int n = static_cast<int>(state.range(0));
  Fixture f(n);
  (void)f.store->Embed({.limit = n}, {});
  std::mt19937 rng(3);
  for (auto _ : state) {
    auto result = f.store->Recall(
        {.query = absl::StrCat("entity ", rng() % n, " group ", rng() % 977), .mode = mode});
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
  }
}
BENCHMARK_CAPTURE(BM_RecallMode, dense, RecallMode::kDense)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RecallMode, hybrid, RecallMode::kHybrid)
    ->Arg(20000)
    ->Unit(benchmark::kMicrosecond);

// A line in, a response line out: JSON parse, dispatch, tool call, serialization.
void BM_LineParseAndDispatch(benchmark::State& state) {
  Fixture f(100);
  tools::ToolRegistry registry(f.store.get(), {});
  mcp::Dispatcher dispatcher(&registry, {});
  const std::string line =
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get","arguments":{"category":"fact","key":"scale-42"}}})";
  for (auto _ : state) benchmark::DoNotOptimize(dispatcher.HandleLine(line));
}
BENCHMARK(BM_LineParseAndDispatch)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
