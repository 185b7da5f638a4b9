// The libstrata facade: the write path (validate, normalize, version, index) and the
// time-axis reads, each in one SQLite transaction or snapshot.

#include <algorithm>
#include <filesystem>
#include <limits>
#include <system_error>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "recall/recaller.h"
#include "store/db.h"
#include "store/schema.h"
#include "strata/strata.h"
#include "temporal/timeline.h"
#include "temporal/version_table.h"
#include "text/body_text.h"
#include "text/fts_index.h"
#include "store/checkpointer.h"
#include "util/clock.h"
#include "util/status_macros.h"

namespace strata {
namespace {

constexpr size_t kMaxCategoryBytes = 256;
constexpr size_t kMaxKeyBytes = 1024;
constexpr size_t kMaxTypeBytes = 128;
constexpr size_t kMaxTags = 64;
constexpr size_t kMaxTagBytes = 256;
// The WAL is checkpointed in the background once it holds this many pages (16 MiB at 4 KiB).
constexpr int kCheckpointPages = 4096;

absl::Status ValidateIdentity(const Identity& identity) {
  if (identity.category.empty()) {
    return absl::InvalidArgumentError("category: must be a non-empty string");
  }
  if (identity.category.size() > kMaxCategoryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("category: at most ", kMaxCategoryBytes,
                                                   " bytes, got ", identity.category.size()));
  }
  if (identity.key.empty()) return absl::InvalidArgumentError("key: must be a non-empty string");
  if (identity.key.size() > kMaxKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("key: at most ", kMaxKeyBytes, " bytes, got ", identity.key.size()));
  }
  if (identity.workspace.size() > kMaxCategoryBytes) {
    return absl::InvalidArgumentError(absl::StrCat("workspace: at most ", kMaxCategoryBytes,
                                                   " bytes, got ", identity.workspace.size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateWrite(const WriteRequest& r) {
  RETURN_IF_ERROR(ValidateIdentity(r.identity));
  if (r.type.empty() || r.type.size() > kMaxTypeBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("type: must be a non-empty string of at most ", kMaxTypeBytes, " bytes"));
  }
  if (r.tags.size() > kMaxTags) {
    return absl::InvalidArgumentError(
        absl::StrCat("tags: at most ", kMaxTags, " tags, got ", r.tags.size()));
  }
  for (const std::string& tag : r.tags) {
    if (tag.size() > kMaxTagBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("tags: each tag at most ", kMaxTagBytes, " bytes, got ", tag.size()));
    }
  }
  if (r.valid_from_unix_ms && r.valid_to_unix_ms && *r.valid_to_unix_ms <= *r.valid_from_unix_ms) {
    return absl::InvalidArgumentError(
        absl::StrCat("valid_to: must be after valid_from (", *r.valid_from_unix_ms, "), got ",
                     *r.valid_to_unix_ms));
  }
  return absl::OkStatus();
}

class StoreImpl final : public Store {
 public:
  StoreImpl(std::unique_ptr<store::Db> db, std::unique_ptr<store::Checkpointer> checkpointer,
            const Clock* clock, Durability durability)
      : db_(std::move(db)),
        checkpointer_(std::move(checkpointer)),
        clock_(clock),
        durability_(durability),
        versions_(db_.get()),
        fts_(db_.get()),
        recaller_(db_.get()) {}

  absl::StatusOr<WriteResult> Remember(const WriteRequest& request) override {
    RETURN_IF_ERROR(ValidateWrite(request));
    ASSIGN_OR_RETURN(const text::ParsedBody body, text::ParseBody(request.body_json));
    ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
    ASSIGN_OR_RETURN(WriteResult result, RememberInTransaction(request, body));
    RETURN_IF_ERROR(txn.Commit());
    return result;
  }

  absl::StatusOr<std::vector<absl::StatusOr<WriteResult>>> RememberBatch(
      const std::vector<WriteRequest>& requests) override {
    std::vector<absl::StatusOr<WriteResult>> results;
    results.reserve(requests.size());
    ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
    for (const WriteRequest& request : requests) {
      absl::Status valid = ValidateWrite(request);
      absl::StatusOr<text::ParsedBody> body =
          valid.ok() ? text::ParseBody(request.body_json) : absl::StatusOr<text::ParsedBody>(valid);
      if (!body.ok()) {
        results.push_back(body.status());
        continue;
      }
      RETURN_IF_ERROR(txn.Savepoint());
      absl::StatusOr<WriteResult> result = RememberInTransaction(request, *body);
      if (result.ok()) {
        RETURN_IF_ERROR(txn.ReleaseSavepoint());
      } else {
        // A storage failure (busy, I/O) fails the whole batch; bad input fails only its item.
        if (result.status().code() != absl::StatusCode::kInvalidArgument) return result.status();
        RETURN_IF_ERROR(txn.RollbackToSavepoint());
      }
      results.push_back(std::move(result));
    }
    RETURN_IF_ERROR(txn.Commit());
    return results;
  }

  absl::StatusOr<RecallResult> Recall(const RecallRequest& request) override {
    return recaller_.Recall(request);
  }

  absl::StatusOr<Version> Get(const Identity& identity) override {
    ASSIGN_OR_RETURN(temporal::IdentityRow row, RequireIdentity(identity));
    return CurrentVersion(row);
  }

  absl::StatusOr<Version> GetById(int64_t memory_id) override {
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row,
                     versions_.FindIdentityById(memory_id));
    if (!row) return absl::NotFoundError(absl::StrCat("id: no memory with id ", memory_id));
    return CurrentVersion(*row);
  }

  absl::StatusOr<HistoryPage> History(const Identity& identity, int limit, int offset) override {
    if (limit < 1 || limit > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("limit: must be between 1 and 1000, got ", limit));
    }
    if (offset < 0) {
      return absl::InvalidArgumentError(absl::StrCat("offset: must be >= 0, got ", offset));
    }
    ASSIGN_OR_RETURN(temporal::IdentityRow row, RequireIdentity(identity));
    ASSIGN_OR_RETURN(std::vector<temporal::VersionRow> rows, versions_.LoadVersions(row.memory_id));
    HistoryPage page{.total = static_cast<int64_t>(rows.size())};
    ASSIGN_OR_RETURN(page.retracted_at_unix_ms, versions_.LoadRetractions(row.memory_id));
    for (int i = static_cast<int>(rows.size()) - 1 - offset;
         i >= 0 && static_cast<int>(page.versions.size()) < limit; --i) {
      page.versions.push_back(std::move(rows[i].version));
    }
    return page;
  }

  absl::StatusOr<std::optional<Version>> AsOf(const Identity& identity,
                                              int64_t tx_unix_ms) override {
    return Select(identity, [tx_unix_ms](std::span<const temporal::VersionTimes> times,
                                         std::span<const int64_t>) {
      return temporal::BelievedAt(times, tx_unix_ms);
    });
  }

  absl::StatusOr<std::optional<Version>> Bitemporal(const Identity& identity, int64_t tx_unix_ms,
                                                    int64_t valid_unix_ms) override {
    return Select(identity, [=](std::span<const temporal::VersionTimes> times,
                                std::span<const int64_t> retractions) {
      return temporal::TrueAt(times, retractions, tx_unix_ms, valid_unix_ms);
    });
  }

  absl::StatusOr<std::optional<Version>> ValidAt(const Identity& identity,
                                                 int64_t valid_unix_ms) override {
    // "As believed now" is every recorded event, including one stamped a millisecond ahead
    // of the clock to keep transaction time strictly increasing.
    return Bitemporal(identity, std::numeric_limits<int64_t>::max(), valid_unix_ms);
  }

  absl::StatusOr<bool> Forget(const Identity& identity, const std::string& reason) override {
    RETURN_IF_ERROR(ValidateIdentity(identity));
    ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentity(identity));
    if (!row || !row->current_version_id) return false;
    RETURN_IF_ERROR(versions_.Retract(*row, NextEventTime(*row), reason));
    RETURN_IF_ERROR(txn.Commit());
    return true;
  }

  absl::StatusOr<int64_t> Purge(const Identity& identity) override {
    RETURN_IF_ERROR(ValidateIdentity(identity));
    ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentity(identity));
    if (!row) return int64_t{0};
    ASSIGN_OR_RETURN(std::vector<temporal::VersionRow> rows, versions_.LoadVersions(row->memory_id));
    for (const temporal::VersionRow& v : rows) {
      RETURN_IF_ERROR(fts_.Remove(v.version_id, v.version.body_json, identity.key,
                                  identity.category));
    }
    RETURN_IF_ERROR(versions_.DeleteIdentity(row->memory_id));
    RETURN_IF_ERROR(txn.Commit());
    return static_cast<int64_t>(rows.size());
  }

  absl::StatusOr<Stats> GetStats() override {
    Stats stats{.durability = durability_, .path = db_->path()};
    {
      ASSIGN_OR_RETURN(store::Stmt s,
                       db_->Prepare("SELECT count(*), count(current_version_id), "
                                    "coalesce(sum(version_count), 0) FROM memories"));
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (row) {
        stats.total_memories = s.Int(0);
        stats.active_memories = s.Int(1);
        stats.versions = s.Int(2);
      }
    }
    {
      ASSIGN_OR_RETURN(store::Stmt s,
                       db_->Prepare("SELECT category, count(*) FROM memories WHERE "
                                    "current_version_id IS NOT NULL GROUP BY category"));
      while (true) {
        ASSIGN_OR_RETURN(bool row, s.Step());
        if (!row) break;
        stats.active_by_category[std::string(s.Text(0))] = s.Int(1);
      }
    }
    ASSIGN_OR_RETURN(stats.schema_version, store::SchemaVersion(*db_));
    std::error_code ec;
    stats.db_file_bytes = static_cast<int64_t>(std::filesystem::file_size(db_->path(), ec));
    if (ec) stats.db_file_bytes = 0;
    stats.wal_file_bytes =
        static_cast<int64_t>(std::filesystem::file_size(db_->path() + "-wal", ec));
    if (ec) stats.wal_file_bytes = 0;
    return stats;
  }

 private:
  // The next instant at which this identity may record an event: now, or 1 ms after its
  // last event when the clock has not moved past it (transaction time strictly increases).
  int64_t NextEventTime(const temporal::IdentityRow& row) const {
    return std::max(clock_->NowUnixMs(), row.last_event_at_unix_ms + 1);
  }

  absl::StatusOr<WriteResult> RememberInTransaction(const WriteRequest& request,
                                                    const text::ParsedBody& body) {
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> existing,
                     versions_.FindIdentity(request.identity));
    if (existing && existing->current_version_id) {
      ASSIGN_OR_RETURN(temporal::VersionRow current,
                       versions_.LoadVersion(*existing->current_version_id));
      if (IsUnchanged(request, body.normal_hash, current)) {
        return WriteResult{.action = WriteAction::kUnchanged, .version = std::move(current.version)};
      }
    }
    temporal::IdentityRow identity;
    if (existing) {
      identity = *existing;
    } else {
      const int64_t now = clock_->NowUnixMs();
      ASSIGN_OR_RETURN(const int64_t id, versions_.InsertIdentity(request.identity, now));
      identity = {.memory_id = id, .identity = request.identity, .last_event_at_unix_ms = now - 1};
    }
    temporal::VersionRow row{.body_hash = body.normal_hash};
    Version& v = row.version;
    v.identity = request.identity;
    v.body_json = request.body_json;
    v.type = request.type;
    v.tags = request.tags;
    v.source = request.source;
    v.importance = request.importance;
    v.recorded_at_unix_ms = NextEventTime(identity);
    v.valid_from_unix_ms = request.valid_from_unix_ms.value_or(v.recorded_at_unix_ms);
    v.valid_to_unix_ms = request.valid_to_unix_ms;
    if (v.valid_to_unix_ms && *v.valid_to_unix_ms <= v.valid_from_unix_ms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "valid_to: must be after valid_from (", v.valid_from_unix_ms,
          request.valid_from_unix_ms ? "" : ", the recorded time, since valid_from was not given",
          "), got ", *v.valid_to_unix_ms));
    }
    RETURN_IF_ERROR(versions_.AppendVersion(identity, row));
    RETURN_IF_ERROR(fts_.Add(row.version_id, body.text, v.identity.key, v.identity.category));
    return WriteResult{.action = identity.version_count == 0 ? WriteAction::kCreated
                                                             : WriteAction::kUpdated,
                       .version = std::move(row.version)};
  }

  static bool IsUnchanged(const WriteRequest& request, uint64_t hash,
                          const temporal::VersionRow& current) {
    const Version& c = current.version;
    if (current.body_hash != hash || request.type != c.type || request.tags != c.tags) {
      return false;
    }
    if (request.valid_from_unix_ms && *request.valid_from_unix_ms != c.valid_from_unix_ms) {
      return false;
    }
    if (request.valid_to_unix_ms && request.valid_to_unix_ms != c.valid_to_unix_ms) return false;
    if (request.source && request.source != c.source) return false;
    if (request.importance && request.importance != c.importance) return false;
    return true;
  }

  absl::StatusOr<temporal::IdentityRow> RequireIdentity(const Identity& identity) {
    RETURN_IF_ERROR(ValidateIdentity(identity));
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentity(identity));
    if (!row) {
      return absl::NotFoundError(absl::StrCat("no memory with category \"", identity.category,
                                              "\" and key \"", identity.key, "\"",
                                              identity.workspace.empty() ? "" : " in workspace \"",
                                              identity.workspace,
                                              identity.workspace.empty() ? "" : "\""));
    }
    return *row;
  }

  absl::StatusOr<Version> CurrentVersion(const temporal::IdentityRow& row) {
    if (!row.current_version_id) {
      return absl::NotFoundError(absl::StrCat("memory \"", row.identity.category, "/",
                                              row.identity.key,
                                              "\" was forgotten; its history is still readable"));
    }
    ASSIGN_OR_RETURN(temporal::VersionRow v, versions_.LoadVersion(*row.current_version_id));
    return std::move(v.version);
  }

  template <typename Pick>
  absl::StatusOr<std::optional<Version>> Select(const Identity& identity, Pick pick) {
    RETURN_IF_ERROR(ValidateIdentity(identity));
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentity(identity));
    if (!row) return std::nullopt;
    ASSIGN_OR_RETURN(std::vector<temporal::VersionRow> rows, versions_.LoadVersions(row->memory_id));
    ASSIGN_OR_RETURN(std::vector<int64_t> retractions, versions_.LoadRetractions(row->memory_id));
    std::vector<temporal::VersionTimes> times;
    times.reserve(rows.size());
    for (const auto& r : rows) times.push_back(r.Times());
    std::optional<size_t> index = pick(std::span<const temporal::VersionTimes>(times),
                                       std::span<const int64_t>(retractions));
    if (!index) return std::nullopt;
    return std::move(rows[*index].version);
  }

  std::unique_ptr<store::Db> db_;
  // Declared after db_, so it stops (with a final checkpoint) before db_ closes.
  std::unique_ptr<store::Checkpointer> checkpointer_;
  const Clock* clock_;  // Not owned; outlives this.
  Durability durability_;
  temporal::VersionTable versions_;
  text::FtsIndex fts_;
  recall::Recaller recaller_;
};

}  // namespace

const char* WriteActionName(WriteAction action) {
  switch (action) {
    case WriteAction::kCreated:
      return "created";
    case WriteAction::kUpdated:
      return "updated";
    case WriteAction::kUnchanged:
      return "unchanged";
  }
  return "unknown";
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("db: the path is empty");
  const store::DbOptions db_options{.durability = options.durability == Durability::kFull
                                                      ? store::Durability::kFull
                                                      : store::Durability::kNormal};
  ASSIGN_OR_RETURN(std::unique_ptr<store::Db> db, store::Db::Open(options.path, db_options));
  RETURN_IF_ERROR(store::Migrate(*db));
  ASSIGN_OR_RETURN(std::unique_ptr<store::Checkpointer> checkpointer,
                   store::Checkpointer::Start(options.path, db_options, kCheckpointPages));
  RETURN_IF_ERROR(checkpointer->Attach(*db));
  const Clock* clock = options.clock ? options.clock : SystemClock::Get();
  return std::unique_ptr<Store>(
      new StoreImpl(std::move(db), std::move(checkpointer), clock, options.durability));
}

}  // namespace strata
