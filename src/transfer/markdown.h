#pragma once
// A Markdown note, or a folder of them (an Obsidian vault, a Perseus Vault Markdown export):
// one memory per note, YAML front matter optional.

#include <vector>

#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "transfer/foreign.h"

namespace strata::transfer {

// The records of what.path, bad ones included with their line. Errors: those of ReadWhole.
absl::StatusOr<std::vector<ForeignRecord>> ReadMarkdown(const ForeignImport& what);

}  // namespace strata::transfer
