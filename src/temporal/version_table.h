#pragma once
// Rows of the version model: identities (memories), versions and retractions.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
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

// A forget event of an identity.
struct RetractionRow {
  int64_t at_unix_ms = 0;
  std::optional<std::string> reason;
  bool operator==(const RetractionRow&) const = default;
};

// An identity as a whole-store scan yields it: its row, when it was created, and every
// version, oldest first.
struct ScannedIdentity {
  IdentityRow row;
  int64_t created_at_unix_ms = 0;
  std::vector<VersionRow> versions;
};

// How many identities and versions the store holds (stats).
struct StoreCounts {
  int64_t memories = 0;  // Identities ever stored and not purged.
  int64_t active = 0;    // Identities with a current version.
  int64_t versions = 0;
  std::map<std::string, int64_t> active_by_category;
};

// How many of each row a scan of a scope covers (an export's header counts).
struct ScopeCounts {
  int64_t memories = 0;
  int64_t versions = 0;
  int64_t retractions = 0;
};

// Which identities a scan covers: all when a field is absent.
struct Scope {
  std::optional<std::string> workspace;
  std::optional<std::string> category;
};

// Binds `scope` to parameters ?1 (workspace) and ?2 (category) of a statement that reads
// NULL as "any", written `(m.workspace = ?1 OR ?1 IS NULL)`: PostgreSQL takes a parameter's
// type from its first use, and `?1 IS NULL` alone names none.
void BindScope(store::Stmt& s, const Scope& scope);

// Every identity of a scope with its versions, in memory id order, read a page of
// identities at a time (keyset pages: one statement each), so that memory stays within a
// page's however many identities there are; on PostgreSQL a statement's rows arrive whole.
// Pages read in one snapshot (store::ReadSnapshot) add up to one scan.
// Thread safety: as the Db it borrows; the Db runs no other statement of this class's meanwhile.
class IdentityScan {
 public:
  static constexpr int64_t kPageIdentities = 512;

  static absl::StatusOr<IdentityScan> Start(store::Db& db, const Scope& scope,
                                            int64_t page_identities = kPageIdentities);
  // The next identity into `out`; false when there are no more.
  absl::StatusOr<bool> Next(ScannedIdentity& out);

 private:
  IdentityScan(store::Db& db, Scope scope, int64_t page_identities)
      : db_(&db), scope_(std::move(scope)), page_identities_(page_identities) {}
  // Reads the page of identities after after_id_.
  absl::Status StartPage();

  store::Db* db_;  // Not owned; outlives this.
  Scope scope_;
  int64_t page_identities_;
  std::optional<store::Stmt> stmt_;  // The page being read.
  int64_t after_id_ = 0;             // The last identity returned.
  int64_t page_returned_ = 0;        // Identities returned from this page.
  bool has_row_ = false;             // stmt_ holds a row not yet returned.
  bool page_done_ = false;           // stmt_ has no more rows.
  bool done_ = false;
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
  // InsertIdentity, then AppendVersion of its first version `row` (PostgreSQL: in one
  // statement, which waits for no answer; its ids SendIdDraw's, or drawn now); returns the
  // identity's id.
  absl::StatusOr<int64_t> InsertIdentityWith(const Identity& identity, int64_t now_unix_ms,
                                             VersionRow& row);
  // PostgreSQL, in a write transaction: draws the ids the next InsertIdentityWith gives a
  // memory and its first version (or the next AppendVersion its version), sent ahead
  // (store::Stmt::Send) so that they come with the transaction's next answer and the insert
  // need not wait for one of its own. Ids drawn and not used (a known identity's memory id,
  // an unchanged write's) are skipped, as a rolled-back transaction's are. SQLite: nothing
  // (its statements have no round trips).
  absl::Status SendIdDraw();
  // Forgets a draw not used (at the end of the write transaction).
  void DropIdDraw() { id_draw_.reset(); }

  absl::StatusOr<VersionRow> LoadVersion(int64_t version_id);
  // The largest version id (0 when there is none).
  absl::StatusOr<int64_t> NewestVersionId();
  // The versions with these ids, in this order, in one query. Errors: NotFound naming the
  // first id of no version.
  absl::StatusOr<std::vector<VersionRow>> LoadVersionsById(std::span<const int64_t> version_ids);
  // Every version of the identity, oldest recorded first.
  absl::StatusOr<std::vector<VersionRow>> LoadVersions(int64_t memory_id);
  absl::StatusOr<std::vector<int64_t>> LoadRetractions(int64_t memory_id);
  absl::StatusOr<Timeline> LoadTimeline(int64_t memory_id);

  // Appends `row.version` as the identity's current version (superseding the previous one at
  // its recorded time). Fills row.version_id and row.version.version.
  absl::Status AppendVersion(const IdentityRow& identity, VersionRow& row);
  // Ends belief in the current version at `at_unix_ms` and records the retraction.
  absl::Status Retract(const IdentityRow& identity, int64_t at_unix_ms, const std::string& reason);
  // ---- Rows restored as they were (import of a strata export). None restamps a time. ----

  // Creates the identity row with the given times. It takes `preferred_id` when no memory
  // has it and it is above every purged memory's id (schema migration 7), else a new id.
  // Returns the id.
  absl::StatusOr<int64_t> InsertIdentityAt(const Identity& identity, int64_t preferred_id,
                                           int64_t created_at_unix_ms,
                                           int64_t last_event_at_unix_ms);
  // Inserts `row.version` with its number and both time axes as given, superseded_at
  // included; the identity row is not touched (SetIdentityState). Fills row.version_id.
  absl::Status InsertVersionAsIs(VersionRow& row);
  absl::Status InsertRetraction(int64_t memory_id, const RetractionRow& retraction);
  // Sets what AppendVersion and Retract maintain: the current version (absent when the
  // identity is forgotten), the number of versions and the latest event's time.
  absl::Status SetIdentityState(int64_t memory_id, std::optional<int64_t> current_version_id,
                                int64_t version_count, int64_t last_event_at_unix_ms);
  // The identity's forget events with their reasons, oldest first.
  absl::StatusOr<std::vector<RetractionRow>> LoadRetractionRows(int64_t memory_id);
  absl::StatusOr<ScopeCounts> Count(const Scope& scope);
  absl::StatusOr<StoreCounts> CountAll();
  // Whether any identity has a current version.
  absl::StatusOr<bool> AnyCurrent();
  // The current version of every identity not superseded since that version was written
  // (supersession_table.h): what dedup may merge into.
  absl::StatusOr<std::vector<int64_t>> CurrentVersionsNotSuperseded();

  // Deletes the identity and, by cascade, its versions and retractions.
  absl::Status DeleteIdentity(int64_t memory_id);

 private:
  // Inserts a version row (id by schema migration 5's rule, or SendIdDraw's); fills
  // row.version_id.
  absl::Status InsertVersionRow(VersionRow& row);
  struct DrawnIds {
    int64_t memory_id, version_id;
  };
  // SendIdDraw's ids, read (with a round trip only if none came since). REQUIRES: id_draw_.
  absl::StatusOr<DrawnIds> TakeIdDraw();

  store::Db* db_;  // Not owned; outlives this.
  std::optional<store::Stmt> id_draw_;  // SendIdDraw's, until InsertIdentityWith reads it.
};

// Parses a stored tags_json array; invalid or non-string entries are skipped.
std::vector<std::string> ParseTags(std::string_view tags_json);
std::string TagsToJson(const std::vector<std::string>& tags);

}  // namespace strata::temporal
