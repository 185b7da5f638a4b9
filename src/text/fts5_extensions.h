#pragma once
// strata's additions to SQLite's FTS5, on every connection this process opens:
// - tokenizer "strata": text/tokenizer.h (Tokenize; FTS5_TOKENIZE_QUERY is TokenizeMode::kQuery);
// - auxiliary function strata_phrases(fts): an INTEGER whose bit i is set when phrase i of
//   the MATCH expression (0-based; phrases past 63 are not reported) occurs in the row;
// - auxiliary function strata_bm25(fts): the row's Okapi BM25 score (higher is better) with
//   the column weights of text/fts_index.h, equal to FTS5's -bm25(fts, those weights), with
//   the row lengths kept in memory, one copy per file for every connection of this process
//   (a docsize lookup a row was half of a keyword recall at a million memories);
// - SQL function strata_body_text(body_json): text::BodyText, for reindexing in SQL;
// - SQL function strata_keep_row_length(rowid, sz), for LoadRowLengths alone.

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"

namespace strata::text {

// Registers the additions with every SQLite connection opened after the call
// (sqlite3_auto_extension); connections opened before are not changed. Idempotent and
// thread-safe. Must run before a store is opened: store::Migrate refuses a connection without
// tokenizer "strata". Errors: Internal when SQLite refuses the registration.
absl::Status InstallFts5Extensions();

// Reads the length of every row of the keyword index with a rowid past `after` through `db`
// into the lengths strata_bm25 keeps for its file, which every connection of this process to
// the file shares; returns the rowid read up to (short of the end once `stop` is requested).
// At a million memories the whole index takes about 0.1 s. Errors: as the reads.
absl::StatusOr<int64_t> LoadRowLengths(store::Db& db, int64_t after, const std::stop_token& stop);

// The body of a background thread a store runs: after kRowLengthsFirstLoadDelay (a cold
// start's first recall need not share the cores with it), loads every row length of the
// database at `path` on a connection of its own, then those of rows written since, every
// kRowLengthsCatchUpInterval, until `stop` is requested. Keyword recalls meanwhile read the
// lengths they lack as they go.
inline constexpr std::chrono::milliseconds kRowLengthsFirstLoadDelay{1000};
inline constexpr std::chrono::milliseconds kRowLengthsCatchUpInterval{5000};
void KeepRowLengthsLoaded(std::stop_token stop, const std::string& path);

}  // namespace strata::text
