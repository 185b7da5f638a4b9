// The temporal oracle: random histories driven through the real Store, every time-axis read
// compared against a naive in-memory model written from the wording of docs/design.md §3, on a
// SQLite file and on a PostgreSQL database (temporal/engines.h).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/engines.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "util/clock.h"

namespace strata {
namespace {

constexpr int64_t kStart = 1772323200000;  // 2026-03-01T00:00:00Z
constexpr int kWordsPerHistory = 4;

// ---------------------------------------------------------------------------------------------
// The model: one identity's history as plain lists, queried by brute force.

struct ModelVersion {
  int64_t number = 0;
  std::string body_json;
  std::vector<int> words;  // Indexes into the history's vocabulary.
  int64_t valid_from = 0;
  std::optional<int64_t> valid_to;  // Open when absent.
  int64_t recorded_at = 0;
  std::optional<int64_t> superseded_at;  // Still believed when absent.
};

class Model {
 public:
  enum class Outcome { kCreated, kUpdated, kUnchanged, kRejected };

  // What remembering should do at `now`; applies it unless rejected or unchanged.
  Outcome Remember(int64_t now, const std::string& body_json, const std::vector<int>& words,
                   std::optional<int64_t> valid_from, std::optional<int64_t> valid_to) {
    if (current_ && SameBody(words) && (!valid_from || *valid_from == Current().valid_from) &&
        (!valid_to || valid_to == Current().valid_to)) {
      return Outcome::kUnchanged;
    }
    const int64_t recorded_at = NextRecordedAt(now);
    const int64_t effective_from = valid_from.value_or(recorded_at);
    if (valid_to && *valid_to <= effective_from) return Outcome::kRejected;
    if (current_) Current().superseded_at = recorded_at;
    versions_.push_back({.number = static_cast<int64_t>(versions_.size()) + 1,
                         .body_json = body_json,
                         .words = words,
                         .valid_from = effective_from,
                         .valid_to = valid_to,
                         .recorded_at = recorded_at});
    last_event_ = recorded_at;
    current_ = true;
    return versions_.size() == 1 ? Outcome::kCreated : Outcome::kUpdated;
  }

  // Forget at `now`: false when nothing is current.
  bool Forget(int64_t now) {
    if (!current_) return false;
    const int64_t at = NextRecordedAt(now);
    Current().superseded_at = at;
    forgets_.push_back(at);
    last_event_ = at;
    current_ = false;
    return true;
  }

  // The recorded time the next event would get: now, unless this identity's last event is
  // not before now, then one millisecond after it.
  int64_t NextRecordedAt(int64_t now) const {
    if (versions_.empty()) return now;
    return std::max(now, last_event_ + 1);
  }

  // as_of(T): the version with recorded_at <= T < superseded_at.
  const ModelVersion* AsOf(int64_t tx) const {
    const ModelVersion* found = nullptr;
    for (const ModelVersion& v : versions_) {
      const bool believed =
          v.recorded_at <= tx && (!v.superseded_at.has_value() || tx < *v.superseded_at);
      if (believed) {
        EXPECT_EQ(found, nullptr) << "two versions believed at " << tx;
        found = &v;
      }
    }
    return found;
  }

  // bitemporal(tx, v), following docs/design.md §3 word by word.
  const ModelVersion* Bitemporal(int64_t tx, int64_t valid) const {
    // "the most recent forget at or before tx"
    std::optional<int64_t> last_forget;
    for (int64_t f : forgets_) {
      if (f <= tx && (!last_forget || f > *last_forget)) last_forget = f;
    }
    // "the versions with recorded_at <= tx that were recorded after [it]"
    std::vector<const ModelVersion*> taken;
    for (const ModelVersion& v : versions_) {
      if (v.recorded_at <= tx && (!last_forget || v.recorded_at > *last_forget)) {
        taken.push_back(&v);
      }
    }
    // "newest recorded first"
    std::sort(taken.begin(), taken.end(), [](const ModelVersion* a, const ModelVersion* b) {
      return a->recorded_at > b->recorded_at;
    });
    for (size_t i = 0; i < taken.size(); ++i) {
      // "m, the smallest valid_from among versions already visited"
      std::optional<int64_t> m;
      for (size_t j = 0; j < i; ++j) {
        if (!m || taken[j]->valid_from < *m) m = taken[j]->valid_from;
      }
      // "[valid_from, min(valid_to, m if m >= valid_from))"
      const ModelVersion& v = *taken[i];
      const bool before_valid_to = !v.valid_to || valid < *v.valid_to;
      const bool before_m = !m || *m < v.valid_from || valid < *m;
      if (v.valid_from <= valid && before_valid_to && before_m) return &v;
    }
    return nullptr;
  }

  bool SameBody(const std::vector<int>& words) const { return Current().words == words; }
  bool exists() const { return !versions_.empty(); }
  bool current() const { return current_; }
  int64_t last_event() const { return last_event_; }
  const ModelVersion& Current() const { return versions_.back(); }
  ModelVersion& Current() { return versions_.back(); }
  const std::vector<ModelVersion>& versions() const { return versions_; }
  const std::vector<int64_t>& forgets() const { return forgets_; }

 private:
  std::vector<ModelVersion> versions_;  // Oldest recorded first.
  std::vector<int64_t> forgets_;        // Oldest first.
  int64_t last_event_ = 0;
  bool current_ = false;
};

// ---------------------------------------------------------------------------------------------
// The harness.

// A word no other history uses and that no stemmer rule changes: consonants between q and x.
std::string Word(int history, int index) {
  static constexpr char kLetters[] = "bcdfghjklmnpstvz";
  std::string word = "q";
  for (int n = history * kWordsPerHistory + index;; n /= 16) {
    word += kLetters[n % 16];
    if (n < 16) break;
  }
  return word + "x";
}

struct OracleOptions {
  int histories = 0;
  int events_per_history = 10;
  uint64_t seed = 0;
  bool clock_moves = true;    // False: every event of a history in the same millisecond.
  bool check_recall = false;  // Also compare temporal recall (slower).
};

// What a run exercised, so that a run which compared too little fails.
struct Coverage {
  int64_t created = 0;
  int64_t updated = 0;
  int64_t revived = 0;
  int64_t unchanged = 0;
  int64_t rejected = 0;
  int64_t forgotten = 0;
  int64_t bumped = 0;        // Events recorded after a clock that had not moved past the last one.
  int64_t out_of_order = 0;  // Versions starting before a version recorded earlier.
  int64_t reads_found = 0;
  int64_t reads_none = 0;
};

class OracleRun {
 public:
  OracleRun(Store* store, FakeClock* clock, const OracleOptions& options)
      : store_(store), clock_(clock), options_(options), rng_(options.seed) {}

  void Run() {
    for (int h = 0; h < options_.histories; ++h) {
      log_.clear();
      RunHistory(h);
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << "history " << h << " (seed " << options_.seed << "):\n" << log_;
        return;
      }
      clock_->Advance(1000);
    }
  }

  const Coverage& coverage() const { return coverage_; }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  void RunHistory(int h) {
    Model model;
    const Identity id{.category = "oracle", .key = absl::StrCat("h", h)};
    for (int e = 0; e < options_.events_per_history; ++e) {
      if (options_.clock_moves) {
        const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
        if (r < 0.4) {
          // Same millisecond: the store must bump recorded_at.
        } else if (r < 0.85) {
          clock_->Advance(Uniform(1, 20));
        } else {
          clock_->Advance(Uniform(21, 500));
        }
      }
      const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
      if (r < 0.15 && model.exists()) {
        DoForget(model, id);
      } else if (r < 0.25 && model.current()) {
        DoRewriteCurrent(model, id);
      } else if (r < 0.30) {
        DoInvalidWrite(model, id);
      } else {
        DoRemember(model, id, h);
      }
      if (::testing::Test::HasFailure()) return;
    }
    CheckReads(model, id, h);
  }

  void DoRemember(Model& model, const Identity& id, int h) {
    std::vector<int> words;
    const int a = static_cast<int>(Uniform(0, kWordsPerHistory - 1));
    int b = static_cast<int>(Uniform(0, kWordsPerHistory - 2));
    if (b >= a) ++b;
    words = {std::min(a, b), std::max(a, b)};
    const std::string text = absl::StrCat(Word(h, words[0]), " ", Word(h, words[1]));
    // Equal bodies in different spellings must compare equal.
    const std::string body = Chance(0.5) ? absl::StrCat(R"({"text":")", text, R"("})")
                                         : absl::StrCat("{ \"text\" :  \"", text, "\" }\n");
    const int64_t now = clock_->NowUnixMs();
    const int64_t recorded_at = model.NextRecordedAt(now);
    std::optional<int64_t> valid_from;
    std::optional<int64_t> valid_to;
    if (Chance(0.6)) valid_from = now + Uniform(-300, 300);
    if (Chance(0.5)) valid_to = valid_from.value_or(recorded_at) + Uniform(1, 400);
    Write(model, id, body, words, valid_from, valid_to);
  }

  // The current body again: with no bounds (unchanged), the same bounds (unchanged), or new
  // bounds (a change).
  void DoRewriteCurrent(Model& model, const Identity& id) {
    const ModelVersion current = model.Current();
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    std::optional<int64_t> valid_from;
    std::optional<int64_t> valid_to;
    if (r < 0.4) {
      valid_from = current.valid_from;
      valid_to = current.valid_to;
    } else if (r < 0.7) {
      valid_from = current.valid_from - Uniform(1, 100);
    }
    Write(model, id, current.body_json, current.words, valid_from, valid_to);
  }

  // valid_to at or before the valid_from it would get.
  void DoInvalidWrite(Model& model, const Identity& id) {
    const int64_t recorded_at = model.NextRecordedAt(clock_->NowUnixMs());
    std::optional<int64_t> valid_from;
    if (Chance(0.5)) valid_from = recorded_at + Uniform(-200, 200);
    const int64_t valid_to = valid_from.value_or(recorded_at) - Uniform(0, 50);
    Write(model, id, R"({"text":"rejected"})", {-1, -1}, valid_from, valid_to);
  }

  void Write(Model& model, const Identity& id, const std::string& body,
             const std::vector<int>& words, std::optional<int64_t> valid_from,
             std::optional<int64_t> valid_to) {
    WriteRequest request;
    request.identity = id;
    request.body_json = body;
    request.valid_from_unix_ms = valid_from;
    request.valid_to_unix_ms = valid_to;
    const int64_t now = clock_->NowUnixMs();
    absl::StrAppend(&log_, "  now=", now, " remember ", absl::CEscape(body),
                    " from=", valid_from ? absl::StrCat(*valid_from) : "-",
                    " to=", valid_to ? absl::StrCat(*valid_to) : "-", "\n");
    const std::optional<ModelVersion> before =
        model.current() ? std::optional<ModelVersion>(model.Current()) : std::nullopt;
    const bool was_current = model.current();
    const bool bumped = model.exists() && model.NextRecordedAt(now) != now;
    const Model::Outcome expected = model.Remember(now, body, words, valid_from, valid_to);
    switch (expected) {
      case Model::Outcome::kCreated:
        ++coverage_.created;
        break;
      case Model::Outcome::kUpdated:
        ++(was_current ? coverage_.updated : coverage_.revived);
        if (bumped) ++coverage_.bumped;
        for (const ModelVersion& v : model.versions()) {
          if (model.Current().valid_from < v.valid_from) {
            ++coverage_.out_of_order;
            break;
          }
        }
        break;
      case Model::Outcome::kUnchanged:
        ++coverage_.unchanged;
        break;
      case Model::Outcome::kRejected:
        ++coverage_.rejected;
        break;
    }
    absl::StatusOr<WriteResult> result = store_->Remember(request);
    if (expected == Model::Outcome::kRejected) {
      EXPECT_THAT(result, testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                            ::testing::HasSubstr("valid_to")));
      return;
    }
    ASSERT_TRUE(result.ok()) << result.status();
    if (expected == Model::Outcome::kUnchanged) {
      EXPECT_EQ(result->action, WriteAction::kUnchanged);
      EXPECT_EQ(result->version.version, before->number);
      EXPECT_EQ(result->version.recorded_at_unix_ms, before->recorded_at);
      return;
    }
    const ModelVersion& v = model.Current();
    // A revival after a forget may report created or updated; both start a new version.
    if (expected == Model::Outcome::kCreated) {
      EXPECT_EQ(result->action, WriteAction::kCreated);
    } else {
      EXPECT_NE(result->action, WriteAction::kUnchanged);
    }
    EXPECT_EQ(result->version.version, v.number);
    EXPECT_EQ(result->version.body_json, v.body_json);
    EXPECT_EQ(result->version.recorded_at_unix_ms, v.recorded_at);
    EXPECT_EQ(result->version.valid_from_unix_ms, v.valid_from);
    EXPECT_EQ(result->version.valid_to_unix_ms, v.valid_to);
    // From here on the model uses what the store reported.
    model.Current().recorded_at = result->version.recorded_at_unix_ms;
  }

  void DoForget(Model& model, const Identity& id) {
    absl::StrAppend(&log_, "  now=", clock_->NowUnixMs(), " forget\n");
    const bool expected = model.Forget(clock_->NowUnixMs());
    if (expected) ++coverage_.forgotten;
    absl::StatusOr<bool> forgotten = store_->Forget(id, "oracle");
    ASSERT_TRUE(forgotten.ok()) << forgotten.status();
    EXPECT_EQ(*forgotten, expected);
  }

  std::string Describe(const ModelVersion* v) {
    ++(v ? coverage_.reads_found : coverage_.reads_none);
    return v ? absl::StrCat("version ", v->number, " ", v->body_json) : "<none>";
  }
  static std::string Describe(const absl::StatusOr<std::optional<Version>>& v) {
    if (!v.ok()) return absl::StrCat("<error ", v.status().ToString(), ">");
    if (!v->has_value()) return "<none>";
    return absl::StrCat("version ", (*v)->version, " ", (*v)->body_json);
  }

  void CheckReads(const Model& model, const Identity& id, int h) {
    CheckHistory(model, id);
    // valid_at's "now" is the current belief: it includes every acknowledged event, also one
    // recorded a few milliseconds ahead of a clock that has not moved.
    const int64_t now = std::max(clock_->NowUnixMs(), model.last_event());

    // Boundary instants on both axes, and a few at random.
    std::set<int64_t> tx_set = {now, now + 1, kStart - 1};
    std::set<int64_t> valid_set = {now};
    for (const ModelVersion& v : model.versions()) {
      for (int d = -1; d <= 1; ++d) {
        tx_set.insert(v.recorded_at + d);
        if (v.superseded_at) tx_set.insert(*v.superseded_at + d);
        valid_set.insert(v.valid_from + d);
        if (v.valid_to) valid_set.insert(*v.valid_to + d);
      }
    }
    for (int64_t f : model.forgets()) {
      for (int d = -1; d <= 1; ++d) tx_set.insert(f + d);
    }
    const int64_t lo = *valid_set.begin() - 50;
    const int64_t hi = *valid_set.rbegin() + 50;
    for (int i = 0; i < 5; ++i) valid_set.insert(Uniform(lo, hi));
    const std::vector<int64_t> txs(tx_set.begin(), tx_set.end());
    const std::vector<int64_t> valids(valid_set.begin(), valid_set.end());

    for (int64_t tx : txs) {
      EXPECT_EQ(Describe(store_->AsOf(id, tx)), Describe(model.AsOf(tx))) << "as_of " << tx;
    }
    for (int64_t v : valids) {
      EXPECT_EQ(Describe(store_->ValidAt(id, v)), Describe(model.Bitemporal(now, v)))
          << "valid_at " << v << " (now " << now << ")";
    }
    // Every pair would be too many; the boundary pairs on recorded times and a random sample.
    constexpr int kPairs = 100;
    for (int i = 0; i < kPairs; ++i) {
      const int64_t tx = txs[Uniform(0, static_cast<int64_t>(txs.size()) - 1)];
      const int64_t v = valids[Uniform(0, static_cast<int64_t>(valids.size()) - 1)];
      EXPECT_EQ(Describe(store_->Bitemporal(id, tx, v)), Describe(model.Bitemporal(tx, v)))
          << "bitemporal tx " << tx << " valid " << v;
    }
    if (::testing::Test::HasFailure()) return;
    if (options_.check_recall) CheckRecall(model, id, h, txs, valids);
  }

  void CheckHistory(const Model& model, const Identity& id) {
    absl::StatusOr<HistoryPage> page = store_->History(id, 1000, 0);
    if (!model.exists()) {
      EXPECT_THAT(page, testing::StatusIs(absl::StatusCode::kNotFound, ::testing::_));
      return;
    }
    ASSERT_TRUE(page.ok()) << page.status();
    const std::vector<ModelVersion>& versions = model.versions();
    EXPECT_EQ(page->total, static_cast<int64_t>(versions.size()));
    EXPECT_EQ(page->retracted_at_unix_ms, model.forgets());
    ASSERT_EQ(page->versions.size(), versions.size());
    for (size_t i = 0; i < versions.size(); ++i) {
      const ModelVersion& want = versions[versions.size() - 1 - i];
      const Version& got = page->versions[i];
      EXPECT_EQ(got.version, want.number);
      EXPECT_EQ(got.body_json, want.body_json);
      EXPECT_EQ(got.valid_from_unix_ms, want.valid_from);
      EXPECT_EQ(got.valid_to_unix_ms, want.valid_to);
      EXPECT_EQ(got.recorded_at_unix_ms, want.recorded_at);
      EXPECT_EQ(got.superseded_at_unix_ms, want.superseded_at) << "version " << want.number;
    }
    absl::StatusOr<Version> current = store_->Get(id);
    if (model.current()) {
      ASSERT_TRUE(current.ok()) << current.status();
      EXPECT_EQ(current->version, model.Current().number);
    } else {
      EXPECT_THAT(current, testing::StatusIs(absl::StatusCode::kNotFound, ::testing::_));
    }
  }

  // The identity must come back iff the model's version (if any) contains the word.
  void ExpectRecall(int h, const Identity& id, int word, std::optional<int64_t> as_of,
                    std::optional<int64_t> valid_at, const ModelVersion* expected) {
    RecallRequest request;
    request.query = Word(h, word);
    request.mode = RecallMode::kFts5;
    request.as_of_unix_ms = as_of;
    request.valid_at_unix_ms = valid_at;
    absl::StatusOr<RecallResult> result = store_->Recall(request);
    ASSERT_TRUE(result.ok()) << result.status();
    const bool should_find =
        expected != nullptr &&
        std::find(expected->words.begin(), expected->words.end(), word) != expected->words.end();
    const std::string where =
        absl::StrCat("recall ", request.query, " as_of ", as_of ? absl::StrCat(*as_of) : "-",
                     " valid_at ", valid_at ? absl::StrCat(*valid_at) : "-");
    if (!should_find) {
      EXPECT_TRUE(result->items.empty())
          << where << ": got version " << result->items[0].version.version;
      return;
    }
    ASSERT_EQ(result->items.size(), 1u) << where << ": expected " << Describe(expected);
    EXPECT_EQ(result->items[0].version.identity.key, id.key) << where;
    EXPECT_EQ(result->items[0].version.version, expected->number) << where;
  }

  void CheckRecall(const Model& model, const Identity& id, int h, const std::vector<int64_t>& txs,
                   const std::vector<int64_t>& valids) {
    const int64_t now = std::max(clock_->NowUnixMs(), model.last_event());
    for (int word = 0; word < kWordsPerHistory; ++word) {
      ExpectRecall(h, id, word, std::nullopt, std::nullopt,
                   model.current() ? &model.Current() : nullptr);
      for (int64_t tx : txs) ExpectRecall(h, id, word, tx, std::nullopt, model.AsOf(tx));
      for (int64_t v : valids) {
        ExpectRecall(h, id, word, std::nullopt, v, model.Bitemporal(now, v));
      }
      for (int i = 0; i < 20; ++i) {
        const int64_t tx = txs[Uniform(0, static_cast<int64_t>(txs.size()) - 1)];
        const int64_t v = valids[Uniform(0, static_cast<int64_t>(valids.size()) - 1)];
        ExpectRecall(h, id, word, tx, v, model.Bitemporal(tx, v));
      }
      if (::testing::Test::HasFailure()) return;
    }
  }

  Store* store_;      // Not owned; outlives this.
  FakeClock* clock_;  // Not owned; outlives this.
  OracleOptions options_;
  std::mt19937_64 rng_;
  std::string log_;
  Coverage coverage_;
};

class TemporalOracle : public ::testing::TestWithParam<store::Dialect> {
 protected:
  void SetUp() override {
    const std::string path = temporal::testing::NewStorePath(GetParam(), dir_);
    ASSERT_FALSE(path.empty());
    ASSERT_OK_AND_ASSIGN(store_, Store::Open({.path = path, .clock = &clock_}));
  }

  void RunOracle(const OracleOptions& options) {
    OracleRun run(store_.get(), &clock_, options);
    run.Run();
    const Coverage& c = run.coverage();
    EXPECT_GT(c.created, options.histories / 2);
    EXPECT_GT(c.updated, options.histories);
    EXPECT_GT(c.revived, 10);
    EXPECT_GT(c.unchanged, 10);
    EXPECT_GT(c.rejected, 10);
    EXPECT_GT(c.forgotten, 10);
    EXPECT_GT(c.bumped, 10);
    EXPECT_GT(c.out_of_order, options.clock_moves ? 10 : 0);
    EXPECT_GT(c.reads_found, 50 * options.histories);
    EXPECT_GT(c.reads_none, 10 * options.histories);
  }

  // How many histories a run drives on this engine, given its count on SQLite. Every read on
  // PostgreSQL is a round trip to the server: the runs took 15 to 40 times as long as on
  // SQLite here, so a fifth of the histories (the first of the same seed) keeps that leg near
  // a minute in CI.
  int Histories(int on_sqlite) const {
    return GetParam() == store::Dialect::kPostgres ? on_sqlite / 5 : on_sqlite;
  }

  strata::testing::TempDir dir_;
  FakeClock clock_{kStart};
  std::unique_ptr<Store> store_;
};

TEST_P(TemporalOracle, TimeAxisReadsMatchTheModelOnRandomHistories) {
  RunOracle({.histories = Histories(2000), .events_per_history = 10, .seed = 20260301});
}

TEST_P(TemporalOracle, LongHistoriesMatchTheModel) {
  RunOracle({.histories = Histories(100), .events_per_history = 40, .seed = 7});
}

TEST_P(TemporalOracle, SameMillisecondHistoriesMatchTheModel) {
  RunOracle(
      {.histories = Histories(300), .events_per_history = 10, .seed = 99, .clock_moves = false});
}

TEST_P(TemporalOracle, TemporalRecallMatchesTheModel) {
  RunOracle(
      {.histories = Histories(120), .events_per_history = 10, .seed = 4242, .check_recall = true});
}

INSTANTIATE_TEST_SUITE_P(Engines, TemporalOracle, temporal::testing::Engines(),
                         temporal::testing::EngineName);

}  // namespace
}  // namespace strata
