#include "text/fts5_extensions.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "store/db.h"
#include "text/body_text.h"
#include "text/tokenizer.h"

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

int TokenizeText(Fts5Tokenizer* /*tokenizer*/, void* context, int flags, const char* text,
                 int size, int (*emit)(void*, int, const char*, int, int, int)) {
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
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_function_v2(db, "strata_body_text", 1,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                    nullptr, BodyTextFunction, nullptr, nullptr, nullptr);
  }
  if (rc != SQLITE_OK) {
    *error = sqlite3_mprintf("cannot register strata's FTS5 tokenizer and functions: %s",
                             sqlite3_errstr(rc));
  }
  return rc;
}

}  // namespace

absl::Status InstallFts5Extensions() {
  // SQLite keeps one entry per function (a second call is a no-op) under its own mutex.
  // void (*)() is the type SQLite asks for; it stands for any function type.
  const int rc = sqlite3_auto_extension(reinterpret_cast<void (*)()>(&RegisterWithConnection));
  if (rc != SQLITE_OK) {
    return absl::InternalError(absl::StrCat("cannot install strata's FTS5 extensions: ",
                                            sqlite3_errstr(rc)));
  }
  return absl::OkStatus();
}

}  // namespace strata::text
