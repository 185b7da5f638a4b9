#pragma once
// strata's additions to SQLite's FTS5, on every connection this process opens:
// - tokenizer "strata": text/tokenizer.h (Tokenize; FTS5_TOKENIZE_QUERY is TokenizeMode::kQuery);
// - auxiliary function strata_phrases(fts): an INTEGER whose bit i is set when phrase i of
//   the MATCH expression (0-based; phrases past 63 are not reported) occurs in the row;
// - SQL function strata_body_text(body_json): text::BodyText, for reindexing in SQL.

#include "absl/status/status.h"

namespace strata::text {

// Registers the additions with every SQLite connection opened after the call
// (sqlite3_auto_extension); connections opened before are not changed. Idempotent and
// thread-safe. Must run before a store is opened: store::Migrate refuses a connection without
// tokenizer "strata". Errors: Internal when SQLite refuses the registration.
absl::Status InstallFts5Extensions();

}  // namespace strata::text
