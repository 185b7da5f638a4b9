#include "text/fts5_extensions.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "store/db.h"
#include "text/bm25.h"
#include "text/body_text.h"
#include "text/fts5_records.h"
#include "text/fts_index.h"
#include "text/tokenizer.h"
#include "util/pause.h"
#include "util/status_macros.h"

namespace strata::text {
namespace {

// ---------------------------------------------------------------------------------------------
// Tokenizer "strata"

// The tokenizer has no state and no options: every table shares one instance.
Fts5Tokenizer* TheTokenizer() {
  static char instance;
  return reinterpret_cast<Fts5Tokenizer*>(&instance);
}

int CreateTokenizer(void* /*context*/, const char** /*args*/, int arg_count, Fts5Tokenizer** out) {
  // tokenize = 'strata whatever' would otherwise be accepted and then mean nothing.
  if (arg_count > 0) return SQLITE_ERROR;
  *out = TheTokenizer();
  return SQLITE_OK;
}

void DeleteTokenizer(Fts5Tokenizer* /*tokenizer*/) {}

int TokenizeText(Fts5Tokenizer* /*tokenizer*/, void* context, int flags, const char* text, int size,
                 int (*emit)(void*, int, const char*, int, int, int)) {
  if (text == nullptr || size <= 0) return SQLITE_OK;
  TokenizeMode mode = TokenizeMode::kDocument;
  if (flags & FTS5_TOKENIZE_QUERY) {
    mode = (flags & FTS5_TOKENIZE_PREFIX) ? TokenizeMode::kPrefixQuery : TokenizeMode::kQuery;
  }
  int rc = SQLITE_OK;
  // No exception may unwind through SQLite's C frames; allocation is the only one possible.
  try {
    Tokenize(std::string_view(text, static_cast<size_t>(size)), mode, [&](const Token& token) {
      rc = emit(context, token.colocated ? FTS5_TOKEN_COLOCATED : 0, token.term.data(),
                static_cast<int>(token.term.size()), static_cast<int>(token.begin),
                static_cast<int>(token.end));
      return rc == SQLITE_OK;
    });
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  }
  return rc;
}

// ---------------------------------------------------------------------------------------------
// strata_phrases(fts)

// xPhraseFirst rather than xInstCount/xInst: it reads one phrase's positions and stops at the
// first, where xInstCount gathers every instance of every phrase in the row.
void PhrasesFunction(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* result,
                     int arg_count, sqlite3_value** /*args*/) {
  if (arg_count != 0) {
    sqlite3_result_error(result, "strata_phrases: takes the table alone: strata_phrases(fts)", -1);
    return;
  }
  const int phrases = std::min(api->xPhraseCount(fts), 64);
  uint64_t found = 0;
  for (int p = 0; p < phrases; ++p) {
    Fts5PhraseIter iter;
    int column = -1;
    int offset = -1;
    if (const int rc = api->xPhraseFirst(fts, p, &iter, &column, &offset); rc != SQLITE_OK) {
      sqlite3_result_error_code(result, rc);
      return;
    }
    if (column >= 0) found |= uint64_t{1} << p;
  }
  sqlite3_result_int64(result, static_cast<sqlite3_int64>(found));
}

// ---------------------------------------------------------------------------------------------
// strata_bm25(fts)

// Each row's token count (all columns), by rowid, as FTS5's docsize table holds it; 0 when not
// read yet (a row that matches has at least one token). One per database file in this process,
// shared by its connections (RowLengthsFor). A rowid names one row for the life of the
// database (version ids are never reused), so an entry never goes stale.
// Thread safety: all members may be called from any thread.
class RowLengths {
 public:
  // Rowids past this are not kept (4 bytes each): their lengths are read every time.
  static constexpr int64_t kMaxCachedRowid = int64_t{1} << 26;

  int Get(const Fts5ExtensionApi* api, Fts5Context* fts, int* length) ABSL_LOCKS_EXCLUDED(mu_) {
    const int64_t rowid = api->xRowid(fts);
    const bool cacheable = rowid >= 0 && rowid < kMaxCachedRowid;
    if (cacheable) {
      absl::MutexLock lock(&mu_);
      if (static_cast<size_t>(rowid) < lengths_.size() && lengths_[rowid] != 0) {
        *length = static_cast<int>(lengths_[rowid]);
        return SQLITE_OK;
      }
    }
    const int rc = api->xColumnSize(fts, -1, length);
    if (rc == SQLITE_OK && cacheable && *length > 0) Put(rowid, static_cast<uint32_t>(*length));
    return rc;
  }

  void Put(int64_t rowid, uint32_t length) ABSL_LOCKS_EXCLUDED(mu_) {
    if (rowid < 0 || rowid >= kMaxCachedRowid) return;
    absl::MutexLock lock(&mu_);
    if (static_cast<size_t>(rowid) >= lengths_.size()) {
      lengths_.resize(std::max(static_cast<size_t>(rowid) + 1, lengths_.size() * 3 / 2));
    }
    lengths_[rowid] = length;
  }

 private:
  absl::Mutex mu_;
  std::vector<uint32_t> lengths_ ABSL_GUARDED_BY(mu_);
};

// The RowLengths of the database file `db` has open (a private one for a database without a
// file). The registry holds them weakly: they go when the file's last connection closes. A
// file is known by its path and inode, so a file replaced under the same name starts afresh.
std::shared_ptr<RowLengths> RowLengthsFor(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  struct stat st;
  if (file == nullptr || *file == '\0' || ::stat(file, &st) != 0) {
    return std::make_shared<RowLengths>();
  }
  const std::string key = absl::StrCat(file, "\n", st.st_dev, ":", st.st_ino);
  // Never destroyed: a connection may close while the process exits.
  struct Registry {
    absl::Mutex mu;
    absl::flat_hash_map<std::string, std::weak_ptr<RowLengths>> entries ABSL_GUARDED_BY(mu);
  };
  static Registry* const registry = new Registry();
  absl::MutexLock lock(&registry->mu);
  std::weak_ptr<RowLengths>& entry = registry->entries[key];
  std::shared_ptr<RowLengths> lengths = entry.lock();
  if (lengths == nullptr) {
    lengths = std::make_shared<RowLengths>();
    entry = lengths;
  }
  return lengths;
}

// A heap share of the RowLengths of `db`'s file, for a function's user data (null when out of
// memory); DeleteShare releases it.
std::shared_ptr<RowLengths>* NewShareOfRowLengths(sqlite3* db) {
  try {
    return new std::shared_ptr<RowLengths>(RowLengthsFor(db));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

void DeleteShare(void* share) { delete static_cast<std::shared_ptr<RowLengths>*>(share); }

// What a query's rows share: the mean row length and each phrase's IDF.
struct Bm25Query {
  double mean_length = 0;
  std::vector<double> idf;   // By phrase.
  std::vector<double> freq;  // Scratch: the current row's weighted count of each phrase.
};

int CountRow(const Fts5ExtensionApi* /*api*/, Fts5Context* /*fts*/, void* count) {
  ++*static_cast<int64_t*>(count);
  return SQLITE_OK;
}

int PrepareBm25Query(const Fts5ExtensionApi* api, Fts5Context* fts, Bm25Query& query) {
  sqlite3_int64 rows = 0;
  sqlite3_int64 tokens = 0;
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc != SQLITE_OK) return rc;
  query.mean_length = static_cast<double>(tokens) / static_cast<double>(rows);
  const int phrases = api->xPhraseCount(fts);
  query.idf.assign(phrases, 0.0);
  query.freq.assign(phrases, 0.0);
  for (int p = 0; p < phrases; ++p) {
    int64_t matching = 0;
    rc = api->xQueryPhrase(fts, p, &matching, CountRow);
    if (rc != SQLITE_OK) return rc;
    query.idf[p] = Bm25Idf(rows, matching);
  }
  return SQLITE_OK;
}

// Okapi BM25 (text/bm25.h) with text::kTextWeight, kKeyWeight and kCategoryWeight as
// the columns' weights: the value FTS5's -bm25(fts, those weights) gives, to the last bit,
// with the row's length from RowLengths instead of a docsize lookup a row (at a million
// memories, half of a keyword recall's time).
void Bm25Function(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* result,
                  int arg_count, sqlite3_value** /*args*/) {
  if (arg_count != 0) {
    sqlite3_result_error(result, "strata_bm25: takes the table alone: strata_bm25(fts)", -1);
    return;
  }
  int rc = SQLITE_OK;
  try {
    auto* query = static_cast<Bm25Query*>(api->xGetAuxdata(fts, 0));
    if (query == nullptr) {
      auto fresh = std::make_unique<Bm25Query>();
      rc = PrepareBm25Query(api, fts, *fresh);
      if (rc == SQLITE_OK) {
        query = fresh.release();
        rc = api->xSetAuxdata(fts, query, [](void* p) { delete static_cast<Bm25Query*>(p); });
      }
    }
    int instances = 0;
    if (rc == SQLITE_OK) {
      std::fill(query->freq.begin(), query->freq.end(), 0.0);
      rc = api->xInstCount(fts, &instances);
    }
    for (int i = 0; rc == SQLITE_OK && i < instances; ++i) {
      int phrase = 0, column = 0, offset = 0;
      rc = api->xInst(fts, i, &phrase, &column, &offset);
      if (rc == SQLITE_OK) query->freq[phrase] += column < kFields ? kFieldWeights[column] : 1.0;
    }
    int length = 0;
    if (rc == SQLITE_OK) {
      rc =
          (*static_cast<std::shared_ptr<RowLengths>*>(api->xUserData(fts)))->Get(api, fts, &length);
    }
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(result, rc);
      return;
    }
    sqlite3_result_double(result, Bm25Score(query->idf, query->freq, length, query->mean_length));
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(result);
  }
}

// ---------------------------------------------------------------------------------------------
// strata_keep_row_length(rowid, sz)

// Keeps a docsize row's length (the sum of its columns' token counts) in the RowLengths of
// the connection's file; returns it. For LoadRowLengths.
void KeepRowLengthFunction(sqlite3_context* result, int /*arg_count*/, sqlite3_value** args) {
  const auto* sz = static_cast<const char*>(sqlite3_value_blob(args[1]));
  const std::string_view record(sz == nullptr ? "" : sz,
                                static_cast<size_t>(sqlite3_value_bytes(args[1])));
  uint64_t length = 0;
  for (size_t pos = 0; pos < record.size();) length += ReadVarint(record, pos);
  if (length > 0 && length <= UINT32_MAX) {
    auto& lengths = *static_cast<std::shared_ptr<RowLengths>*>(sqlite3_user_data(result));
    try {
      lengths->Put(sqlite3_value_int64(args[0]), static_cast<uint32_t>(length));
    } catch (const std::bad_alloc&) {
      sqlite3_result_error_nomem(result);
      return;
    }
  }
  sqlite3_result_int64(result, static_cast<sqlite3_int64>(length));
}

// ---------------------------------------------------------------------------------------------
// strata_body_text(body_json)

void BodyTextFunction(sqlite3_context* result, int /*arg_count*/, sqlite3_value** args) {
  const auto* body = reinterpret_cast<const char*>(sqlite3_value_text(args[0]));
  if (body == nullptr) {
    sqlite3_result_null(result);
    return;
  }
  try {
    const std::string text =
        BodyText(std::string_view(body, static_cast<size_t>(sqlite3_value_bytes(args[0]))));
    sqlite3_result_text64(result, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(result);
  }
}

// ---------------------------------------------------------------------------------------------
// Registration

// Runs as each connection opens; an error fails the open with the message.
int RegisterWithConnection(sqlite3* db, char** error, const sqlite3_api_routines* /*api*/) {
  fts5_api* fts5 = store::Fts5ApiOf(db);
  if (fts5 == nullptr || fts5->iVersion < 2) {
    *error = sqlite3_mprintf("this SQLite has no FTS5, which strata's keyword index needs");
    return SQLITE_ERROR;
  }
  static fts5_tokenizer tokenizer = {CreateTokenizer, DeleteTokenizer, TokenizeText};
  int rc = fts5->xCreateTokenizer(fts5, "strata", nullptr, &tokenizer, nullptr);
  if (rc == SQLITE_OK) {
    rc = fts5->xCreateFunction(fts5, "strata_phrases", nullptr, PhrasesFunction, nullptr);
  }
  // Each function that uses the lengths holds its own share of its file's, released by
  // SQLite as the connection closes (or, for sqlite3_create_function_v2, if it fails).
  if (rc == SQLITE_OK) {
    auto* lengths = NewShareOfRowLengths(db);
    rc = lengths == nullptr
             ? SQLITE_NOMEM
             : fts5->xCreateFunction(fts5, "strata_bm25", lengths, Bm25Function, DeleteShare);
    if (rc != SQLITE_OK) delete lengths;  // FTS5 does not release it on failure.
  }
  if (rc == SQLITE_OK) {
    auto* lengths = NewShareOfRowLengths(db);
    rc = lengths == nullptr ? SQLITE_NOMEM
                            : sqlite3_create_function_v2(
                                  db, "strata_keep_row_length", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                  lengths, KeepRowLengthFunction, nullptr, nullptr, DeleteShare);
  }
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_function_v2(db, "strata_body_text", 1,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                                    BodyTextFunction, nullptr, nullptr, nullptr);
  }
  if (rc != SQLITE_OK) {
    *error = sqlite3_mprintf("cannot register strata's FTS5 tokenizer and functions: %s",
                             sqlite3_errstr(rc));
  }
  return rc;
}

}  // namespace

absl::StatusOr<int64_t> LoadRowLengths(store::Db& db, int64_t after, const std::stop_token& stop) {
  // A batch of rowids at a time, each in a read transaction of its own: no snapshot is held
  // for long, and a stop is seen within a batch.
  constexpr int64_t kBatch = 65536;
  int64_t max_id = after;
  {
    ASSIGN_OR_RETURN(store::Stmt last, db.Prepare("SELECT max(id) FROM fts_docsize"));
    ASSIGN_OR_RETURN(const bool has_rows, last.Step());
    if (has_rows && !last.IsNull(0)) max_id = std::max(after, last.Int(0));
  }
  int64_t from = after;
  for (; from < max_id && !stop.stop_requested(); from += kBatch) {
    ASSIGN_OR_RETURN(store::Stmt batch,
                     db.Prepare("SELECT count(strata_keep_row_length(id, sz)) FROM fts_docsize "
                                "WHERE id > ?1 AND id <= ?2"));
    batch.Bind(1, from).Bind(2, std::min(from + kBatch, max_id));
    RETURN_IF_ERROR(batch.Run());
  }
  return std::min(from, max_id);
}

void KeepRowLengthsLoaded(std::stop_token stop, const std::string& path) {
  if (!util::PauseUnlessStopped(stop, kRowLengthsFirstLoadDelay)) return;
  absl::StatusOr<std::unique_ptr<store::Db>> db =
      store::Db::Open(path, store::DbOptions{.read_only = true});
  // Without it, lengths are only read as keyword recalls need them.
  if (!db.ok()) return;
  int64_t loaded = 0;
  do {
    // A failed read (a busy moment) is tried again at the next round.
    if (absl::StatusOr<int64_t> upto = LoadRowLengths(**db, loaded, stop); upto.ok()) {
      loaded = *upto;
    }
  } while (util::PauseUnlessStopped(stop, kRowLengthsCatchUpInterval));
}

absl::Status InstallFts5Extensions() {
  // SQLite keeps one entry per function (a second call is a no-op) under its own mutex.
  // void (*)() is the type SQLite asks for; it stands for any function type.
  const int rc = sqlite3_auto_extension(reinterpret_cast<void (*)()>(&RegisterWithConnection));
  if (rc != SQLITE_OK) {
    return absl::InternalError(
        absl::StrCat("cannot install strata's FTS5 extensions: ", sqlite3_errstr(rc)));
  }
  return absl::OkStatus();
}

}  // namespace strata::text
