#pragma once
// Generic JSONL: one object a line with the fields of csv_format.h (body any JSON value).

#include <vector>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "transfer/foreign.h"

namespace strata::transfer {

// The records of what.path, bad ones included with their line. Errors: those of ReadWhole.
absl::StatusOr<std::vector<ForeignRecord>> ReadJsonl(const ForeignImport& what);

}  // namespace strata::transfer
