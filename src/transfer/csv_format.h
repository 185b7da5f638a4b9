#pragma once
// Generic CSV (RFC 4180) with a header row naming category, key, body and optionally
// valid_from, valid_to, tags, type: one memory per row.

#include <vector>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "transfer/foreign.h"

namespace strata::transfer {

// The records of what.path, bad ones included with their line. Errors: those of ReadWhole.
absl::StatusOr<std::vector<ForeignRecord>> ReadCsv(const ForeignImport& what);

}  // namespace strata::transfer
