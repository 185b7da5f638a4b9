#pragma once
// Restores a strata export (record.h) into a store: rows with their recorded times, and the
// derived state the write path keeps (keyword index rows, dedup band keys).

#include <istream>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"

namespace strata::transfer {

// Reads the header, then memory lines, options.batch_lines to a transaction. A bad line (not JSON,
// a field of the wrong type, broken time rules, a memory present with another history) is reported
// to options.on_error and counted; then the import stops (its batch rolled back) or skips it, as
// options say. Memory ids are kept where free in `db` (README, "Export and import"); links name
// identities. REQUIRES: `db` is not in a transaction. Errors: InvalidArgument for a missing,
// foreign or unknown-version header ("line 1: ..."); Unavailable (busy, I/O).
absl::StatusOr<ImportSummary> Import(store::Db& db, std::istream& in, const ImportOptions& options);

}  // namespace strata::transfer
