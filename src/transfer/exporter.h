#pragma once
// Writes a store out as a strata export (record.h), streaming.

#include <ostream>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"

namespace strata::transfer {

// Writes the header and one line per memory of `options`' scope, in memory id order, from
// one read snapshot of `db`, a batch of lines at a time (memory stays constant); the header
// names `schema_version`, the store's (each engine numbers its own). REQUIRES: `db` is not in
// a transaction. Errors: DataLoss (a stored text is not UTF-8), Unavailable (the stream
// failed).
absl::StatusOr<ExportSummary> Export(store::Db& db, int schema_version,
                                     const ExportOptions& options, std::ostream& out);

}  // namespace strata::transfer
