#pragma once
// strata's additions to SQLite's FTS5, on every connection this process opens:
// - tokenizer "strata": text/tokenizer.h (Tokenize; FTS5_TOKENIZE_QUERY is TokenizeMode::kQuery);
// - auxiliary function strata_phrases(fts): an INTEGER whose bit i is set when phrase i of
//   the MATCH expression (0-based; phrases past 63 are not reported) occurs in the row;
// - auxiliary function strata_bm25(fts): the row's Okapi BM25 score (higher is better) with
//   the column weights of text/fts_index.h, equal to FTS5's -bm25(fts, those weights) but
//   for the row lengths, which each connection keeps in memory once read (a docsize lookup a
//   row was half of a keyword recall at a million memories);
// - SQL function strata_body_text(body_json): text::BodyText, for reindexing in SQL;
// - SQL function strata_keep_row_length(rowid, sz), for LoadRowLengths alone.

#include <stop_token>

#include "absl/status/status.h"
#include "store/db.h"

namespace strata::text {

// Registers the additions with every SQLite connection opened after the call
// (sqlite3_auto_extension); connections opened before are not changed. Idempotent and
// thread-safe. Must run before a store is opened: store::Migrate refuses a connection without
// tokenizer "strata". Errors: Internal when SQLite refuses the registration.
absl::Status InstallFts5Extensions();

// Reads every row length of the keyword index through `db` into the lengths strata_bm25
// keeps for its file, which every connection of this process to the file shares; returns
// early (OK) once `stop` is requested. For a connection of its own on a background thread: at
// a million memories this takes about 0.1 s that the first keyword recalls need not wait
// for (they read the lengths they lack as they go). Errors: as the reads.
absl::Status LoadRowLengths(store::Db& db, const std::stop_token& stop);

}  // namespace strata::text
