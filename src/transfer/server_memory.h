#pragma once
// @modelcontextprotocol/server-memory's knowledge graph (JSONL: entity and relation lines): one
// memory per entity (README, "Export and import").

#include <vector>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "transfer/foreign.h"

namespace strata::transfer {

// The records of what.path, bad ones included with their line. Errors: those of ReadWhole.
absl::StatusOr<std::vector<ForeignRecord>> ReadServerMemory(const ForeignImport& what);

}  // namespace strata::transfer
