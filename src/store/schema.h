#pragma once
// The schema as numbered migrations, tracked in PRAGMA user_version.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"

namespace strata::store {

// The schema version this build writes.
int LatestSchemaVersion();

// Applies every migration newer than the file's user_version, each in its own transaction.
// A file whose user_version is newer than LatestSchemaVersion() is refused with DataLoss and
// not modified. From schema 9 on, the connection must have FTS5 tokenizer "strata"
// (text::InstallFts5Extensions() before Db::Open): FailedPrecondition otherwise, as for a
// Db that is not SQLite's.
absl::Status Migrate(Db& db);
// The same, up to `target` (at most LatestSchemaVersion()): a file as an older build left it.
absl::Status Migrate(Db& db, int target);

// The file's PRAGMA user_version.
absl::StatusOr<int> SchemaVersion(Db& db);

// The `meta` table's value named `name` (both stores keep one), nullopt when there is none.
// Each owner keeps its own names.
absl::StatusOr<std::optional<std::string>> ReadMeta(Db& db, std::string_view name);
// Sets that value, in the caller's transaction if there is one.
absl::Status WriteMeta(Db& db, std::string_view name, std::string_view value);

}  // namespace strata::store
