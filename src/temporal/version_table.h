#pragma once
// Rows of the version model: identities (memories), versions and retractions.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"
#include "temporal/timeline.h"

namespace strata::temporal {

// One identity's row.
struct IdentityRow {
  int64_t memory_id = 0;
  Identity identity;
  int64_t last_event_at_unix_ms = 0;
  std::optional<int64_t> current_version_id;
  int64_t version_count = 0;
};

// A stored version with its row id and content hash.
struct VersionRow {
  int64_t version_id = 0;
  uint64_t body_hash = 0;
  Version version;

  VersionTimes Times() const;
};

// One identity's versions (oldest recorded first), their times, and its retractions: what
// the time-axis rules of timeline.h take.
struct Timeline {
  std::vector<VersionRow> rows;
  std::vector<VersionTimes> times;  // times[i] == rows[i].Times()
  std::vector<int64_t> retractions;
};

// Reads and writes the version model's tables. Callers own transactions.
// Thread safety: as the Db it borrows.
class VersionTable {
 public:
  explicit VersionTable(store::Db* db) : db_(db) {}

  absl::StatusOr<std::optional<IdentityRow>> FindIdentity(const Identity& identity);
  absl::StatusOr<std::optional<IdentityRow>> FindIdentityById(int64_t memory_id);
  // Creates the identity row; returns its id.
  absl::StatusOr<int64_t> InsertIdentity(const Identity& identity, int64_t now_unix_ms);

  absl::StatusOr<VersionRow> LoadVersion(int64_t version_id);
  // Every version of the identity, oldest recorded first.
  absl::StatusOr<std::vector<VersionRow>> LoadVersions(int64_t memory_id);
  absl::StatusOr<std::vector<int64_t>> LoadRetractions(int64_t memory_id);
  absl::StatusOr<Timeline> LoadTimeline(int64_t memory_id);

  // Appends `row.version` as the identity's current version (superseding the previous one at
  // its recorded time). Fills row.version_id and row.version.version.
  absl::Status AppendVersion(const IdentityRow& identity, VersionRow& row);
  // Ends belief in the current version at `at_unix_ms` and records the retraction.
  absl::Status Retract(const IdentityRow& identity, int64_t at_unix_ms, const std::string& reason);
  // Deletes the identity and, by cascade, its versions and retractions.
  absl::Status DeleteIdentity(int64_t memory_id);

 private:
  store::Db* db_;  // Not owned; outlives this.
};

// Parses a stored tags_json array; invalid or non-string entries are skipped.
std::vector<std::string> ParseTags(std::string_view tags_json);
std::string TagsToJson(const std::vector<std::string>& tags);

}  // namespace strata::temporal
