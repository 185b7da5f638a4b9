#pragma once
// The FTS5 keyword index over versions (rowid = versions.id).

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "store/db.h"

namespace strata::text {

// Column weights for bm25(): body text, key, category.
inline constexpr double kTextWeight = 1.0;
inline constexpr double kKeyWeight = 2.0;
inline constexpr double kCategoryWeight = 0.5;

// Maintains the contentless index. The index stores no text, so removal needs the same
// values that were added. Callers own transactions.
// Thread safety: as the Db it borrows.
class FtsIndex {
 public:
  explicit FtsIndex(store::Db* db) : db_(db) {}

  // `text` is the version's searchable text (text::BodyText of its body).
  absl::Status Add(int64_t version_id, std::string_view text, std::string_view key,
                   std::string_view category);
  absl::Status Remove(int64_t version_id, std::string_view body_json, std::string_view key,
                      std::string_view category);

 private:
  store::Db* db_;  // Not owned; outlives this.
};

}  // namespace strata::text
