// The libstrata facade: the write path (validate, normalize, version, index) and the
// time-axis reads, each in one SQLite transaction or snapshot.

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <span>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "dedup/content.h"
#include "dedup/finder.h"
#include "dedup/index.h"
#include "dedup/signature.h"
#include "embed/registry.h"
#include "pg/db.h"
#include "pg/schema.h"
#include "recall/recaller.h"
#include "store/checkpointer.h"
#include "store/db.h"
#include "store/schema.h"
#include "strata/strata.h"
#include "temporal/fields.h"
#include "temporal/supersession_table.h"
#include "temporal/timeline.h"
#include "temporal/version_table.h"
#include "text/body_text.h"
#include "text/fts5_extensions.h"
#include "text/fts_index.h"
#include "text/keyword_backlog.h"
#include "transfer/batches.h"
#include "transfer/exporter.h"
#include "transfer/foreign.h"
#include "transfer/importer.h"
#include "util/check.h"
#include "util/clock.h"
#include "util/json_text.h"
#include "util/log.h"
#include "util/status_macros.h"
#include "vector/vector_service.h"

namespace strata {
namespace {

// The WAL is checkpointed in the background once it holds this many pages (16 MiB at 4 KiB).
constexpr int kCheckpointPages = 4096;
// A batch write reports progress, and checks for cancellation, every this many items.
constexpr int64_t kProgressStep = 64;

using temporal::ValidateIdentity;

absl::Status ValidateWrite(const WriteRequest& r) {
  RETURN_IF_ERROR(ValidateIdentity(r.identity));
  if (r.source && !IsUtf8(*r.source)) {
    return absl::InvalidArgumentError("source: must be valid UTF-8");
  }
  // Valid bounds are checked in RememberInTransaction, where a missing valid_from defaults.
  return temporal::ValidateTypeAndTags(r.type, r.tags);
}

// Whether the stored band keys were made by this build's signature scheme. A store without
// current memories is stamped with it, having nothing to index.
absl::StatusOr<bool> SignaturesComplete(store::Db& db) {
  dedup::DedupIndex index(&db);
  ASSIGN_OR_RETURN(const std::string scheme, index.StoredScheme());
  if (scheme == dedup::kScheme) return true;
  // Stamping writes: in a transaction, so that a second process starting on the same file at
  // the same moment waits for the lock (a write begun inside a read fails at once instead).
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(db));
  ASSIGN_OR_RETURN(const std::string scheme_now, index.StoredScheme());
  if (scheme_now == dedup::kScheme) return true;
  ASSIGN_OR_RETURN(const bool any_current, temporal::VersionTable(&db).AnyCurrent());
  if (any_current) return false;
  RETURN_IF_ERROR(index.SetStoredScheme(dedup::kScheme));
  RETURN_IF_ERROR(txn.Commit());
  return true;
}

class StoreImpl final : public Store {
 public:
  StoreImpl(std::unique_ptr<store::Db> db, std::unique_ptr<store::Checkpointer> checkpointer,
            std::unique_ptr<vector::VectorService> vectors, const Clock* clock,
            Durability durability, double dedup_threshold, bool signatures_complete,
            const vector::VectorService::DbOpener& open_keyword_catch_up)
      : db_(std::move(db)),
        checkpointer_(std::move(checkpointer)),
        vectors_(std::move(vectors)),
        clock_(clock),
        durability_(durability),
        versions_(db_.get()),
        fts_(db_.get()),
        dedup_index_(db_.get()),
        finder_(db_.get(), &dedup_index_, dedup_threshold),
        recaller_(db_.get(), vectors_.get()),
        supersessions_(db_.get()),
        signatures_complete_(signatures_complete),
        row_lengths_loader_(sqlite() ? std::jthread(text::KeepRowLengthsLoaded, db_->path())
                                     : std::jthread()),
        keyword_catch_up_(open_keyword_catch_up
                              ? std::jthread(text::KeepKeywordsCaughtUp, open_keyword_catch_up,
                                             std::chrono::milliseconds(text::kKeywordCatchUpEvery))
                              : std::jthread()) {}
  // Writes still waiting in a group are committed: their callers were told of them. Then
  // what recall counted of the common terms is kept for the next start.
  ~StoreImpl() override {
    FlushGroup();
    if (absl::Status s = recaller_.SaveTermStats(); !s.ok()) {
      Log(LogLevel::kWarning,
          absl::StrCat("keeping the common terms for the next start: ", s.message()));
    }
  }

  absl::StatusOr<WriteResult> Remember(const WriteRequest& request) override {
    RETURN_IF_ERROR(ValidateWrite(request));
    ASSIGN_OR_RETURN(const text::ParsedBody body, text::ParseBody(request.body_json));
    // On PostgreSQL a single write's keyword rows follow its commit, beside the other writers
    // (docs/decisions.md, "The keyword upkeep behind the write"); a correction's stay in its
    // transaction.
    const bool beside = !sqlite() && !request.supersedes;
    if (beside && ticket_) return RememberInGroup(request, body);
    std::optional<text::KeywordDocument> keyword_rows;
    if (beside) keywords_beside_ = &keyword_rows;
    const absl::Cleanup not_beside = [this] { keywords_beside_ = nullptr; };
    ASSIGN_OR_RETURN(store::Transaction txn, Begin());
    ASSIGN_OR_RETURN(WriteResult result, WriteInTransaction(request, body));
    RETURN_IF_ERROR(txn.Commit());
    if (keyword_rows) {
      const std::span<const text::KeywordDocument> rows(&*keyword_rows, 1);
      WarnIfLeftToCatchUp(rows, fts_.AddBeside(rows));
    }
    if (vectors_) vectors_->Wrote({&result.version.memory_id, 1});
    return result;
  }

  void set_commit_ticket(std::shared_ptr<CommitTicket> ticket) override {
    ticket_ = std::move(ticket);
  }

  int uncommitted_writes() const override {
    return group_ ? static_cast<int>(group_->tickets.size()) : 0;
  }

  absl::Status CommitGroup() override {
    if (!group_) return absl::OkStatus();
    Group group = *std::move(group_);
    group_.reset();
    // The keyword transaction rides in COMMIT's round trip: its statement writes nothing for
    // a version that is not stored, so it may run when the COMMIT fails (and then fails too,
    // which says nothing more than the group's error).
    absl::Status keywords;
    absl::Status status = group.txn.Commit([&] { keywords = fts_.AddBeside(group.keywords); });
    if (status.ok()) {
      WarnIfLeftToCatchUp(group.keywords, keywords);
      ++group_commit_.groups;
      group_commit_.writes += static_cast<int64_t>(group.tickets.size());
      if (vectors_) vectors_->Wrote(group.written);
    }
    for (const std::shared_ptr<CommitTicket>& ticket : group.tickets) ticket->Resolve(status);
    return status;
  }

  absl::StatusOr<std::vector<absl::StatusOr<WriteResult>>> RememberBatch(
      const std::vector<WriteRequest>& requests, const WorkControl& control) override {
    std::vector<absl::StatusOr<WriteResult>> results;
    results.reserve(requests.size());
    ASSIGN_OR_RETURN(store::Transaction txn, Begin());
    const int64_t total = static_cast<int64_t>(requests.size());
    for (const WriteRequest& request : requests) {
      // Every kProgressStep items: report, and stop (rolling everything back) when cancelled.
      if (const int64_t done = static_cast<int64_t>(results.size());
          done > 0 && done % kProgressStep == 0) {
        if (control.cancelled && control.cancelled()) {
          return absl::CancelledError("remember_batch: cancelled; nothing was written");
        }
        if (control.progress) control.progress(done, total);
      }
      absl::Status valid = ValidateWrite(request);
      absl::StatusOr<text::ParsedBody> body =
          valid.ok() ? text::ParseBody(request.body_json) : absl::StatusOr<text::ParsedBody>(valid);
      if (!body.ok()) {
        results.push_back(body.status());
        continue;
      }
      // WriteInTransaction checks everything before its first write, so an item that fails
      // with InvalidArgument has written nothing. Any other failure fails the whole batch.
      absl::StatusOr<WriteResult> result = WriteInTransaction(request, *body);
      if (!result.ok() && result.status().code() != absl::StatusCode::kInvalidArgument) {
        return result.status();
      }
      results.push_back(std::move(result));
    }
    if (control.cancelled && control.cancelled()) {
      return absl::CancelledError("remember_batch: cancelled; nothing was written");
    }
    RETURN_IF_ERROR(txn.Commit());
    if (control.progress && total > 0) control.progress(total, total);
    if (vectors_) {
      std::vector<int64_t> written;
      for (const absl::StatusOr<WriteResult>& r : results) {
        if (r.ok()) written.push_back(r->version.memory_id);
      }
      vectors_->Wrote(written);
    }
    return results;
  }

  absl::StatusOr<RecallResult> Recall(const RecallRequest& request) override {
    ASSIGN_OR_RETURN(const store::ReadSnapshot snapshot, Snapshot());
    return recaller_.Recall(request);
  }

  absl::StatusOr<Version> Get(const Identity& identity) override {
    ASSIGN_OR_RETURN(const store::ReadSnapshot snapshot, Snapshot());
    ASSIGN_OR_RETURN(temporal::IdentityRow row, RequireIdentity(identity));
    return CurrentVersion(row);
  }

  absl::StatusOr<Version> GetById(int64_t memory_id) override {
    ASSIGN_OR_RETURN(const store::ReadSnapshot snapshot, Snapshot());
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row,
                     versions_.FindIdentityById(memory_id));
    if (!row) return absl::NotFoundError(absl::StrCat("id: no memory with id ", memory_id));
    return CurrentVersion(*row);
  }

  absl::StatusOr<HistoryPage> History(const Identity& identity, int limit, int offset) override {
    if (limit < 1 || limit > kMaxHistoryLimit) {
      return absl::InvalidArgumentError(
          absl::StrCat("limit: must be between 1 and ", kMaxHistoryLimit, ", got ", limit));
    }
    if (offset < 0 || offset > kMaxHistoryOffset) {
      return absl::InvalidArgumentError(
          absl::StrCat("offset: must be between 0 and ", kMaxHistoryOffset, ", got ", offset));
    }
    ASSIGN_OR_RETURN(const store::ReadSnapshot snapshot, Snapshot());
    ASSIGN_OR_RETURN(temporal::IdentityRow row, RequireIdentity(identity));
    ASSIGN_OR_RETURN(std::vector<temporal::VersionRow> rows, versions_.LoadVersions(row.memory_id));
    HistoryPage page{.total = static_cast<int64_t>(rows.size())};
    ASSIGN_OR_RETURN(page.retracted_at_unix_ms, versions_.LoadRetractions(row.memory_id));
    ASSIGN_OR_RETURN(page.successors, Links(row.memory_id, /*successors=*/true));
    ASSIGN_OR_RETURN(page.predecessors, Links(row.memory_id, /*successors=*/false));
    for (int i = static_cast<int>(rows.size()) - 1 - offset;
         i >= 0 && static_cast<int>(page.versions.size()) < limit; --i) {
      page.versions.push_back(std::move(rows[i].version));
    }
    return page;
  }

  absl::StatusOr<std::optional<Version>> AsOf(const Identity& identity,
                                              int64_t tx_unix_ms) override {
    ASSIGN_OR_RETURN(const store::ReadSnapshot snapshot, Snapshot());
    return Select(identity, [tx_unix_ms](std::span<const temporal::VersionTimes> times,
                                         std::span<const int64_t>) {
      return temporal::BelievedAt(times, tx_unix_ms);
    });
  }

  absl::StatusOr<std::optional<Version>> Bitemporal(const Identity& identity, int64_t tx_unix_ms,
                                                    int64_t valid_unix_ms) override {
    ASSIGN_OR_RETURN(const store::ReadSnapshot snapshot, Snapshot());
    ASSIGN_OR_RETURN(std::optional<Version> found,
                     Select(identity, [=](std::span<const temporal::VersionTimes> times,
                                          std::span<const int64_t> retractions) {
                       return temporal::TrueAt(times, retractions, tx_unix_ms, valid_unix_ms);
                     }));
    if (!found) return found;
    ASSIGN_OR_RETURN(const std::vector<temporal::SupersessionRow> successors,
                     supersessions_.Successors(found->memory_id));
    if (temporal::Superseded(successors, found->recorded_at_unix_ms, tx_unix_ms, valid_unix_ms)) {
      return std::nullopt;
    }
    return found;
  }

  absl::StatusOr<std::optional<Version>> ValidAt(const Identity& identity,
                                                 int64_t valid_unix_ms) override {
    // "As believed now" is every recorded event, including one stamped a millisecond ahead
    // of the clock to keep transaction time strictly increasing.
    return Bitemporal(identity, std::numeric_limits<int64_t>::max(), valid_unix_ms);
  }

  absl::StatusOr<bool> Forget(const Identity& identity, const std::string& reason) override {
    RETURN_IF_ERROR(ValidateIdentity(identity));
    ASSIGN_OR_RETURN(store::Transaction txn, Begin());
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentity(identity));
    if (!row) {
      ASSIGN_OR_RETURN(std::optional<int64_t> target, dedup_index_.FindAlias(identity));
      if (!target) return false;
      RETURN_IF_ERROR(dedup_index_.RemoveAlias(identity));
      RETURN_IF_ERROR(txn.Commit());
      return true;
    }
    if (!row->current_version_id) return false;
    ASSIGN_OR_RETURN(temporal::VersionRow current, versions_.LoadVersion(*row->current_version_id));
    RETURN_IF_ERROR(dedup_index_.Remove(row->memory_id));
    RETURN_IF_ERROR(versions_.Retract(*row, NextEventTime(*row), reason));
    RETURN_IF_ERROR(txn.Commit());
    return true;
  }

  absl::StatusOr<int64_t> Purge(const Identity& identity) override {
    RETURN_IF_ERROR(ValidateIdentity(identity));
    ASSIGN_OR_RETURN(store::Transaction txn, Begin());
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentity(identity));
    if (!row) {
      RETURN_IF_ERROR(dedup_index_.RemoveAlias(identity));
      RETURN_IF_ERROR(txn.Commit());
      return int64_t{0};
    }
    ASSIGN_OR_RETURN(std::vector<temporal::VersionRow> rows,
                     versions_.LoadVersions(row->memory_id));
    for (const temporal::VersionRow& v : rows) {
      RETURN_IF_ERROR(
          fts_.Remove(v.version_id, v.version.body_json, identity.key, identity.category));
    }
    RETURN_IF_ERROR(dedup_index_.Remove(row->memory_id));
    // Versions, retractions, aliases and vectors go with the identity (ON DELETE CASCADE).
    RETURN_IF_ERROR(versions_.DeleteIdentity(row->memory_id));
    RETURN_IF_ERROR(txn.Commit());
    if (vectors_) {
      std::vector<int64_t> version_ids;
      for (const temporal::VersionRow& v : rows) version_ids.push_back(v.version_id);
      vectors_->Forget(version_ids);
    }
    return static_cast<int64_t>(rows.size());
  }

  absl::StatusOr<int64_t> RebuildSignatures() override {
    ASSIGN_OR_RETURN(store::Transaction txn, Begin());
    RETURN_IF_ERROR(dedup_index_.Clear());
    // A memory superseded since its current version was written is no merge target.
    ASSIGN_OR_RETURN(const std::vector<int64_t> current, versions_.CurrentVersionsNotSuperseded());
    for (int64_t version_id : current) {
      ASSIGN_OR_RETURN(temporal::VersionRow v, versions_.LoadVersion(version_id));
      RETURN_IF_ERROR(dedup_index_.Set(v.version.memory_id, SignatureKeys(v)));
    }
    RETURN_IF_ERROR(dedup_index_.SetStoredScheme(dedup::kScheme));
    RETURN_IF_ERROR(txn.Commit());
    signatures_complete_ = true;
    return static_cast<int64_t>(current.size());
  }

  absl::StatusOr<Stats> GetStats() override {
    ASSIGN_OR_RETURN(const store::ReadSnapshot snapshot, Snapshot());
    Stats stats{.durability = durability_, .path = RedactedStorePath(db_->path())};
    ASSIGN_OR_RETURN(temporal::StoreCounts counts, versions_.CountAll());
    stats.total_memories = counts.memories;
    stats.active_memories = counts.active;
    stats.versions = counts.versions;
    stats.active_by_category = std::move(counts.active_by_category);
    ASSIGN_OR_RETURN(stats.schema_version, SchemaVersion());
    ASSIGN_OR_RETURN(stats.dedup.aliases, dedup_index_.CountAliases({}));
    stats.dedup.threshold = finder_.threshold();
    stats.dedup.signatures_complete = signatures_complete_;
    stats.dedup.checks = finder_.checks();
    stats.dedup.candidates_verified = finder_.candidates_verified();
    stats.dedup.merges = merges_;
    stats.group_commit = group_commit_;
    for (size_t n = 0; n < finder_.histogram().size(); ++n) {
      if (finder_.histogram()[n] > 0)
        stats.dedup.candidates_histogram[static_cast<int>(n)] = finder_.histogram()[n];
    }
    if (!sqlite()) {
      ASSIGN_OR_RETURN(stats.db_file_bytes,
                       pg::DatabaseBytes(postgres()->connection()));
    } else {
      std::error_code ec;
      stats.db_file_bytes = static_cast<int64_t>(std::filesystem::file_size(db_->path(), ec));
      if (ec) stats.db_file_bytes = 0;
      stats.wal_file_bytes =
          static_cast<int64_t>(std::filesystem::file_size(db_->path() + "-wal", ec));
      if (ec) stats.wal_file_bytes = 0;
    }
    if (vectors_) {
      ASSIGN_OR_RETURN(const vector::VectorStats v, vectors_->Stats(*db_));
      stats.embeddings = EmbeddingStats{
          .embedder = v.embedder,
          .dimension = v.dimension,
          .vectors = v.vectors,
          .pending = v.pending,
          .indexed = v.indexed,
          .index_state = vector::IndexStateName(v.index_state),
          .embedded_since_start = v.embedded_since_start,
          .last_error = v.last_error,
          .index_file_bytes = v.index_file_bytes,
          .similarity_floor = v.similarity_floor,
      };
    }
    return stats;
  }

  absl::StatusOr<IndexCheck> CheckIndex(int queries, int k) override {
    FlushGroup();
    if (!vectors_) {
      return absl::FailedPreconditionError("this store runs with --embedder none: no index");
    }
    return vectors_->MeasureIndexRecall(*db_, queries, k);
  }

  absl::StatusOr<EmbedResult> Embed(const EmbedRequest& request,
                                    const WorkControl& control) override {
    FlushGroup();
    if (!vectors_) {
      return absl::FailedPreconditionError(
          "embed: this server runs with --embedder none, so nothing is embedded");
    }
    if (request.limit < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("limit: must be at least 1, got ", request.limit));
    }
    vector::BacklogScope scope{.category = request.category};
    if (request.identity) {
      ASSIGN_OR_RETURN(const temporal::IdentityRow row, RequireIdentity(*request.identity));
      scope.memory_id = row.memory_id;
    }
    ASSIGN_OR_RETURN(const vector::BackfillResult r,
                     vectors_->Backfill(*db_, scope, request.limit, control));
    return EmbedResult{.embedded = r.embedded,
                       .attempted = r.attempted,
                       .failed = r.failed,
                       .remaining = r.remaining,
                       .error = r.error};
  }

  absl::StatusOr<ExportSummary> Export(const ExportOptions& options, std::ostream& out) override {
    FlushGroup();
    ASSIGN_OR_RETURN(const int schema_version, SchemaVersion());
    return transfer::Export(*db_, schema_version, options, out);
  }

  absl::StatusOr<ImportSummary> Import(std::istream& in, const ImportOptions& options) override {
    FlushGroup();
    absl::StatusOr<ImportSummary> summary = transfer::Import(*db_, in, options);
    Imported();  // What committed before a failure too.
    return summary;
  }

  absl::StatusOr<ImportSummary> ImportForeign(const ForeignImport& what,
                                              const ImportOptions& options) override {
    FlushGroup();
    ASSIGN_OR_RETURN(std::vector<transfer::ForeignRecord> records, transfer::ReadForeign(what));
    // Bodies are parsed and analysed on a second thread, ahead of the writer; `records` stays
    // as it is while it reads them, and batches name records by index. After each batch the
    // writer says whether band keys are worth computing ahead (most records were new).
    transfer::BodyPreparer prepared(records);
    size_t next = 0;
    int64_t applied = 0, created = 0;  // Of the batch being written.
    absl::StatusOr<ImportSummary> summary = transfer::WriteInBatches<size_t>(
        *db_, options, {.expected = static_cast<int64_t>(records.size())},
        [&](int64_t max) {
          std::vector<transfer::Numbered<size_t>> batch;
          for (; next < records.size() && static_cast<int64_t>(batch.size()) < max; ++next) {
            const transfer::ForeignRecord& r = records[next];
            batch.push_back({.at = r.at,
                             .record = r.record.ok() ? absl::StatusOr<size_t>(next)
                                                     : absl::StatusOr<size_t>(r.record.status())});
          }
          return batch;
        },
        [&](const size_t& index) -> absl::StatusOr<transfer::Outcome> {
          const WriteRequest& request = *records[index].record;
          transfer::PreparedBody prepared_body = prepared.Take(index);
          RETURN_IF_ERROR(ValidateWrite(request));
          if (request.body_json.size() > kMaxBodyBytes) {
            return absl::InvalidArgumentError(absl::StrCat(
                "body: at most ", kMaxBodyBytes, " bytes, got ", request.body_json.size()));
          }
          RETURN_IF_ERROR(prepared_body.body.status());
          // InvalidArgument from here on means nothing of the record was written. A foreign
          // record never supersedes, so its band keys are the prepared ones, if any.
          const std::vector<int64_t>* keys = prepared_body.keys ? &*prepared_body.keys : nullptr;
          ASSIGN_OR_RETURN(const WriteResult result,
                           request.supersedes ? WriteInTransaction(request, *prepared_body.body)
                                              : RememberInTransaction(request, *prepared_body.body,
                                                                      std::nullopt, keys));
          ++applied;
          switch (result.action) {
            case WriteAction::kCreated:
              ++created;
              return transfer::Outcome::kCreated;
            case WriteAction::kUnchanged:
              return transfer::Outcome::kUnchanged;
            case WriteAction::kUpdated:
            case WriteAction::kDeduped:  // Not asked for (dedup is off), so not expected.
              break;
          }
          return transfer::Outcome::kUpdated;
        },
        [&] {
          prepared.ComputeKeys(2 * created >= applied);
          applied = created = 0;
          return absl::OkStatus();
        });
    Imported();
    return summary;
  }

  absl::Status Backup(const std::string& path, bool overwrite) override {
    FlushGroup();
    if (!sqlite()) {
      return absl::FailedPreconditionError(
          "backup copies a SQLite file; back a PostgreSQL store up with pg_dump or "
          "`strata export`");
    }
    return sqlite()->BackupTo(path, overwrite);
  }

 private:
  // The SQLite connection; null on PostgreSQL.
  store::SqliteDb* sqlite() const {
    return db_->dialect() == store::Dialect::kSqlite ? static_cast<store::SqliteDb*>(db_.get())
                                                     : nullptr;
  }
  // The PostgreSQL connection; null on SQLite.
  pg::PgDb* postgres() const {
    return db_->dialect() == store::Dialect::kPostgres ? static_cast<pg::PgDb*>(db_.get())
                                                       : nullptr;
  }
  absl::StatusOr<int> SchemaVersion() {
    if (sqlite()) return store::SchemaVersion(*db_);
    ASSIGN_OR_RETURN(const pg::SchemaState state,
                     pg::ReadSchemaState(postgres()->connection()));
    return state.current();
  }
  // An import committed versions: they are this process's to embed, whoever else sees them.
  void Imported() {
    if (!vectors_) return;
    const absl::StatusOr<int64_t> newest = versions_.NewestVersionId();
    if (newest.ok()) {
      vectors_->WroteThrough(*newest);
    } else {
      vectors_->Wrote({});  // Still looks now; another process's may wait for it.
    }
  }

  // The next instant at which this identity may record an event: now, or 1 ms after its
  // last event when the clock has not moved past it (transaction time strictly increases).
  int64_t NextEventTime(const temporal::IdentityRow& row) const {
    return std::max(clock_->NowUnixMs(), row.last_event_at_unix_ms + 1);
  }

  // Checks everything that can fail with InvalidArgument before its first write.
  // `recorded_at`, when given, is when a changed body is recorded (REQUIRES: at or after the
  // identity's next event time). `prepared_keys`, when given, are the body's band keys
  // computed ahead (dedup::BodyKeys).
  absl::StatusOr<WriteResult> RememberInTransaction(
      const WriteRequest& request, const text::ParsedBody& body,
      std::optional<int64_t> recorded_at = std::nullopt,
      const std::vector<int64_t>* prepared_keys = nullptr) {
    // The dedup check's catch-up read and a new memory's ids go with the identity's lookup,
    // in its round trip (so the memory's insert waits for no answer of its own).
    if (request.dedup) RETURN_IF_ERROR(dedup_index_.SendCatchUp());
    RETURN_IF_ERROR(versions_.SendIdDraw());
    const absl::Cleanup drop_sent = [this] {
      dedup_index_.DropCatchUp();
      versions_.DropIdDraw();
    };
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> existing,
                     versions_.FindIdentity(request.identity));
    std::optional<temporal::VersionRow> current;
    if (existing && existing->current_version_id) {
      ASSIGN_OR_RETURN(current, versions_.LoadVersion(*existing->current_version_id));
      if (IsUnchanged(request, body.normal_hash, *current)) {
        return WriteResult{.action = WriteAction::kUnchanged,
                           .version = std::move(current->version)};
      }
    }
    const int64_t now = clock_->NowUnixMs();
    temporal::VersionRow row{.body_hash = body.normal_hash};
    Version& v = row.version;
    v.identity = request.identity;
    v.body_json = request.body_json;
    v.type = request.type;
    v.tags = request.tags;
    v.source = request.source;
    v.importance = request.importance;
    v.recorded_at_unix_ms = recorded_at.value_or(existing ? NextEventTime(*existing) : now);
    // Events of one identity are recorded at strictly increasing times (docs/design.md §3).
    STRATA_DCHECK(!existing || v.recorded_at_unix_ms > existing->last_event_at_unix_ms);
    v.valid_from_unix_ms = request.valid_from_unix_ms.value_or(v.recorded_at_unix_ms);
    v.valid_to_unix_ms = request.valid_to_unix_ms;
    if (v.valid_to_unix_ms && *v.valid_to_unix_ms <= v.valid_from_unix_ms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "valid_to: must be after valid_from (", v.valid_from_unix_ms,
          request.valid_from_unix_ms ? "" : ", the recorded time, since valid_from was not given",
          "), got ", *v.valid_to_unix_ms));
    }
    // The units only a dedup check needs; the keys, unless computed ahead (dedup::BodyKeys).
    std::optional<dedup::ContentUnits> units;
    if (!prepared_keys || request.dedup) units = dedup::Analyze(body);
    const std::vector<int64_t> keys =
        prepared_keys ? *prepared_keys
                      : dedup::BandKeys(*units, body.normal_hash,
                                        dedup::ScopeHash(request.identity.category,
                                                         request.identity.workspace));
    std::vector<SimilarMemory> similar;

    temporal::IdentityRow identity;
    if (existing) {
      identity = *existing;
      RETURN_IF_ERROR(versions_.AppendVersion(identity, row));
    } else {
      // A new identity: merged into a memory it adds nothing to; otherwise written, naming
      // the memories it resembles (updates are never merged).
      if (request.dedup) {
        ASSIGN_OR_RETURN(dedup::Resemblance resemblance,
                         finder_.Find(request.identity, body, *units, keys));
        if (const std::optional<dedup::Match>& match = resemblance.merge) {
          RETURN_IF_ERROR(
              dedup_index_.PutAlias(request.identity, match->memory_id, match->similarity, now));
          ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> target,
                           versions_.FindIdentityById(match->memory_id));
          ASSIGN_OR_RETURN(Version merged, CurrentVersion(*target));
          ++merges_;
          return WriteResult{.action = WriteAction::kDeduped,
                             .version = std::move(merged),
                             .similarity = match->similarity};
        }
        for (dedup::Match& m : resemblance.similar) {
          similar.push_back({.memory_id = m.memory_id,
                             .identity = std::move(m.identity),
                             .similarity = m.similarity});
        }
      }
      // A key merged earlier becomes a memory of its own.
      RETURN_IF_ERROR(dedup_index_.RemoveAlias(request.identity));
      ASSIGN_OR_RETURN(const int64_t id, versions_.InsertIdentityWith(request.identity, now, row));
      identity = {.memory_id = id, .identity = request.identity, .last_event_at_unix_ms = now - 1};
    }
    if (keywords_beside_ != nullptr) {
      *keywords_beside_ = text::KeywordDocument{.version_id = row.version_id,
                                                .text = body.text,
                                                .key = request.identity.key,
                                                .category = request.identity.category};
    } else {
      RETURN_IF_ERROR(fts_.Add(row.version_id, body.text, v.identity.key, v.identity.category));
    }
    RETURN_IF_ERROR(existing ? dedup_index_.Set(identity.memory_id, keys)
                             : dedup_index_.Add(identity.memory_id, keys));
    return WriteResult{
        .action = identity.version_count == 0 ? WriteAction::kCreated : WriteAction::kUpdated,
        .version = std::move(row.version),
        .similar = std::move(similar)};
  }

  // Logs a failure (`status`) to write the keyword rows of committed versions beside the
  // writers. Not the writes' failure: they are stored, and a catch-up
  // (text::KeepKeywordsCaughtUp, of any node) indexes them after the grace.
  void WarnIfLeftToCatchUp(std::span<const text::KeywordDocument> documents,
                           const absl::Status& status) {
    if (status.ok() || documents.empty()) return;
    Log(LogLevel::kWarning,
        absl::StrCat("the keyword rows of ", documents.size(), " version(s) from ",
                     documents.front().version_id, " are left to a catch-up: ", status.message()));
  }

  // ---- Group commit (Store::set_commit_ticket; docs/decisions.md, "Group commit") ----

  // A transaction single writes share, and what is done once it commits.
  struct Group {
    store::Transaction txn;
    std::vector<std::shared_ptr<CommitTicket>> tickets;  // One for each write in it.
    std::vector<text::KeywordDocument> keywords;         // Written beside, after COMMIT.
    std::vector<int64_t> written;                        // Memory ids, for the vectors.
  };

  // Remember, in the open group (opened when none is). A write refused with InvalidArgument
  // wrote nothing and leaves the group as it was; any other failure ends the group, rolled
  // back, and its tickets learn it.
  absl::StatusOr<WriteResult> RememberInGroup(const WriteRequest& request,
                                              const text::ParsedBody& body) {
    if (!group_) {
      ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(*db_));
      group_.emplace(Group{.txn = std::move(txn)});
    }
    std::optional<text::KeywordDocument> keyword_rows;
    keywords_beside_ = &keyword_rows;
    const absl::Cleanup not_beside = [this] { keywords_beside_ = nullptr; };
    absl::StatusOr<WriteResult> result = WriteInTransaction(request, body);
    if (!result.ok()) {
      if (result.status().code() != absl::StatusCode::kInvalidArgument) {
        const absl::Status failed = absl::AbortedError(absl::StrCat(
            "not stored: a write sharing its transaction failed (", result.status().message(),
            "); nothing of that transaction was kept, so the write may be retried"));
        Group group = *std::move(group_);
        group_.reset();  // group.txn rolls back as it goes.
        for (const std::shared_ptr<CommitTicket>& ticket : group.tickets) {
          ticket->Resolve(failed);
        }
      }
      return result.status();
    }
    if (keyword_rows) group_->keywords.push_back(*std::move(keyword_rows));
    group_->written.push_back(result->version.memory_id);
    ticket_->Join();
    group_->tickets.push_back(ticket_);
    return result;
  }

  // Commits the open group before a call that is not a write of it: that call sees the
  // group's writes, or (when the commit failed) none of them. The outcome goes to the
  // group's tickets.
  void FlushGroup() {
    if (group_) CommitGroup().IgnoreError();
  }

  // A transaction or a snapshot for a call that is not a write of the open group, which is
  // committed first (FlushGroup). Every Store call begins with one of them or FlushGroup.
  absl::StatusOr<store::Transaction> Begin() {
    FlushGroup();
    return store::Transaction::Begin(*db_);
  }
  absl::StatusOr<store::ReadSnapshot> Snapshot() {
    FlushGroup();
    return store::ReadSnapshot::Begin(*db_);
  }

  // The band keys a stored version was indexed under.
  static std::vector<int64_t> SignatureKeys(const temporal::VersionRow& row) {
    return dedup::StoredVersionKeys(row);
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

  // The identity's row, or that of the memory it was merged into when it is an alias.
  absl::StatusOr<std::optional<temporal::IdentityRow>> Resolve(const Identity& identity) {
    RETURN_IF_ERROR(ValidateIdentity(identity));
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, versions_.FindIdentity(identity));
    if (row) return row;
    ASSIGN_OR_RETURN(std::optional<int64_t> target, dedup_index_.FindAlias(identity));
    if (!target) return std::nullopt;
    return versions_.FindIdentityById(*target);
  }

  absl::StatusOr<temporal::IdentityRow> RequireIdentity(const Identity& identity) {
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, Resolve(identity));
    if (!row) {
      return absl::NotFoundError(NoMemoryMessage(identity));
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
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row, Resolve(identity));
    if (!row) return std::nullopt;
    ASSIGN_OR_RETURN(temporal::Timeline timeline, versions_.LoadTimeline(row->memory_id));
    std::optional<size_t> index = pick(std::span<const temporal::VersionTimes>(timeline.times),
                                       std::span<const int64_t>(timeline.retractions));
    if (!index) return std::nullopt;
    return std::move(timeline.rows[*index].version);
  }

  // ---- Explicit corrections (`supersedes`; docs/decisions.md) ----

  // A correction checked and placed in time before anything is written.
  struct Correction {
    temporal::IdentityRow predecessor;  // Resolved: never an alias.
    temporal::VersionRow predecessor_current;
    // When both memories record it: the later of their next event times, so that
    // transaction time still strictly increases for each.
    int64_t at_unix_ms = 0;
    int64_t valid_from_unix_ms = 0;  // The successor's: the predecessor's validity ends here.
    // Set when this very correction was already recorded (a retried write): nothing to do.
    std::optional<temporal::SupersessionRow> recorded;
  };

  // RememberInTransaction, and the correction when the request supersedes a memory. The
  // same contract: InvalidArgument means nothing was written.
  absl::StatusOr<WriteResult> WriteInTransaction(const WriteRequest& request,
                                                 const text::ParsedBody& body) {
    if (!request.supersedes) return RememberInTransaction(request, body);
    ASSIGN_OR_RETURN(const Correction correction, PlanCorrection(request, body));
    WriteRequest successor = request;
    successor.dedup = false;  // A correction is a memory of its own, never merged away.
    if (correction.recorded) {
      ASSIGN_OR_RETURN(WriteResult result, RememberInTransaction(successor, body));
      result.supersedes = SupersessionLink{.memory_id = correction.predecessor.memory_id,
                                           .identity = correction.predecessor.identity,
                                           .at_unix_ms = correction.recorded->at_unix_ms};
      return result;
    }
    ASSIGN_OR_RETURN(WriteResult result,
                     RememberInTransaction(successor, body, correction.at_unix_ms));
    RETURN_IF_ERROR(ApplyCorrection(correction, result.version.memory_id));
    result.supersedes = SupersessionLink{.memory_id = correction.predecessor.memory_id,
                                         .identity = correction.predecessor.identity,
                                         .at_unix_ms = correction.at_unix_ms};
    return result;
  }

  // Checks request.supersedes against the store. Errors (InvalidArgument): the memory is
  // missing, forgotten, the one being written, already superseded by another, or not true
  // before the successor's valid_from.
  absl::StatusOr<Correction> PlanCorrection(const WriteRequest& request,
                                            const text::ParsedBody& body) {
    const Identity& target = *request.supersedes;
    if (absl::Status valid = ValidateIdentity(target); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("supersedes.", valid.message()));
    }
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> predecessor, Resolve(target));
    if (!predecessor) {
      return absl::InvalidArgumentError(absl::StrCat("supersedes: ", NoMemoryMessage(target)));
    }
    const std::string name = MemoryName(predecessor->identity);
    if (!predecessor->current_version_id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "supersedes: ", name, " was forgotten; only a current memory can be superseded"));
    }
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> successor,
                     versions_.FindIdentity(request.identity));
    if (successor && successor->memory_id == predecessor->memory_id) {
      return absl::InvalidArgumentError(absl::StrCat(
          "supersedes: names ", name,
          ", the memory being written; a memory cannot supersede itself (to change it, "
          "remember it again without supersedes)"));
    }
    Correction c{.predecessor = *predecessor};
    ASSIGN_OR_RETURN(c.predecessor_current,
                     versions_.LoadVersion(*predecessor->current_version_id));
    ASSIGN_OR_RETURN(const std::vector<temporal::SupersessionRow> earlier,
                     supersessions_.Successors(predecessor->memory_id));
    for (const temporal::SupersessionRow& row : earlier) {
      // A correction older than the current version was undone by rewriting the memory.
      if (row.at_unix_ms < c.predecessor_current.version.recorded_at_unix_ms) continue;
      if (successor && row.successor_id == successor->memory_id) {
        c.recorded = row;
        return c;
      }
      ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> other,
                       versions_.FindIdentityById(row.successor_id));
      return absl::InvalidArgumentError(absl::StrCat(
          "supersedes: ", name, " was already superseded by ",
          other ? MemoryName(other->identity) : absl::StrCat("memory ", row.successor_id),
          "; supersede that one instead"));
    }
    // The successor's valid_from as RememberInTransaction will store it.
    std::optional<temporal::VersionRow> current;
    if (successor && successor->current_version_id) {
      ASSIGN_OR_RETURN(current, versions_.LoadVersion(*successor->current_version_id));
    }
    const bool unchanged = current && IsUnchanged(request, body.normal_hash, *current);
    c.at_unix_ms = std::max(successor ? NextEventTime(*successor) : clock_->NowUnixMs(),
                            NextEventTime(*predecessor));
    c.valid_from_unix_ms = unchanged ? current->version.valid_from_unix_ms
                                     : request.valid_from_unix_ms.value_or(c.at_unix_ms);
    const int64_t predecessor_from = c.predecessor_current.version.valid_from_unix_ms;
    if (predecessor_from >= c.valid_from_unix_ms) {
      return absl::InvalidArgumentError(absl::StrCat(
          "supersedes: ", name, " is true from ", predecessor_from,
          ", so a memory superseding it must start later; this one's valid_from is ",
          c.valid_from_unix_ms,
          request.valid_from_unix_ms || unchanged ? "" : " (the recorded time, since not given)"));
    }
    return c;
  }

  // Ends the predecessor's valid period where the successor's begins, with a version
  // recorded at the correction's instant, and records which memory superseded it.
  absl::Status ApplyCorrection(const Correction& c, int64_t successor_id) {
    temporal::VersionRow closing = c.predecessor_current;
    Version& v = closing.version;
    v.recorded_at_unix_ms = c.at_unix_ms;
    v.superseded_at_unix_ms.reset();
    // A period that already ends earlier is kept.
    if (!v.valid_to_unix_ms || *v.valid_to_unix_ms > c.valid_from_unix_ms) {
      v.valid_to_unix_ms = c.valid_from_unix_ms;
    }
    absl::StatusOr<text::ParsedBody> body = text::ParseBody(v.body_json);
    if (!body.ok()) {
      return absl::DataLossError(absl::StrCat("the stored body of ", MemoryName(v.identity),
                                              " does not parse: ", body.status().message()));
    }
    RETURN_IF_ERROR(versions_.AppendVersion(c.predecessor, closing));
    RETURN_IF_ERROR(fts_.Add(closing.version_id, body->text, v.identity.key, v.identity.category));
    // Nothing new is merged into a memory that recall no longer returns.
    RETURN_IF_ERROR(dedup_index_.Remove(c.predecessor.memory_id));
    return supersessions_.Insert({.predecessor_id = c.predecessor.memory_id,
                                  .successor_id = successor_id,
                                  .at_unix_ms = c.at_unix_ms,
                                  .valid_from_unix_ms = c.valid_from_unix_ms});
  }

  // The memories that superseded `memory_id` (`successors`) or that it superseded.
  absl::StatusOr<std::vector<SupersessionLink>> Links(int64_t memory_id, bool successors) {
    std::vector<temporal::SupersessionRow> rows;
    if (successors) {
      ASSIGN_OR_RETURN(rows, supersessions_.Successors(memory_id));
    } else {
      ASSIGN_OR_RETURN(rows, supersessions_.Predecessors(memory_id));
    }
    std::vector<SupersessionLink> links;
    for (const temporal::SupersessionRow& row : rows) {
      const int64_t other_id = successors ? row.successor_id : row.predecessor_id;
      ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> other,
                       versions_.FindIdentityById(other_id));
      // Purging either memory deletes the row (ON DELETE CASCADE).
      if (!other) {
        return absl::InternalError(absl::StrCat("supersession names no memory ", other_id));
      }
      links.push_back(
          {.memory_id = other_id, .identity = other->identity, .at_unix_ms = row.at_unix_ms});
    }
    return links;
  }

  // ` in workspace "w"`, or nothing for the global workspace, for messages.
  static std::string InWorkspace(const Identity& identity) {
    return identity.workspace.empty() ? ""
                                      : absl::StrCat(" in workspace \"", identity.workspace, "\"");
  }
  // `memory "category/key"` and its workspace, for messages.
  static std::string MemoryName(const Identity& identity) {
    return absl::StrCat("memory \"", identity.category, "/", identity.key, "\"",
                        InWorkspace(identity));
  }
  static std::string NoMemoryMessage(const Identity& identity) {
    return absl::StrCat("no memory with category \"", identity.category, "\" and key \"",
                        identity.key, "\"", InWorkspace(identity));
  }

  std::unique_ptr<store::Db> db_;
  // Declared after db_, so it stops (with a final checkpoint) before db_ closes. Null on
  // PostgreSQL.
  std::unique_ptr<store::Checkpointer> checkpointer_;
  std::unique_ptr<vector::VectorService> vectors_;  // Null with --embedder none.
  const Clock* clock_;                              // Not owned; outlives this.
  Durability durability_;
  temporal::VersionTable versions_;
  text::FtsIndex fts_;
  dedup::DedupIndex dedup_index_;
  dedup::DuplicateFinder finder_;
  recall::Recaller recaller_;
  temporal::SupersessionTable supersessions_;
  bool signatures_complete_;
  int64_t merges_ = 0;
  GroupCommitStats group_commit_;
  // Set by Remember on PostgreSQL for its write: where RememberInTransaction leaves the
  // version's keyword rows instead of writing them.
  std::optional<text::KeywordDocument>* keywords_beside_ = nullptr;
  // Set by set_commit_ticket: single writes join the open group under it.
  std::shared_ptr<CommitTicket> ticket_;
  // The open group, while single writes wait in it for COMMIT. Declared after the members
  // its transaction's hooks use, so that it rolls back before they go.
  std::optional<Group> group_;
  // Keeps the keyword index's row lengths loaded for strata_bm25 (text/fts5_extensions.h);
  // none on PostgreSQL. Last: stopped and joined before the members above go.
  std::jthread row_lengths_loader_;
  // On a serving PostgreSQL store, indexes the versions a node left without keyword rows.
  std::jthread keyword_catch_up_;
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
    case WriteAction::kDeduped:
      return "deduped";
  }
  return "unknown";
}

namespace {

struct ImportFormatNames {
  ImportFormat format;
  const char* name;         // What --from takes.
  const char* description;  // For people.
};
constexpr ImportFormatNames kImportFormats[] = {
    {ImportFormat::kStrata, "strata", "a strata export"},
    {ImportFormat::kServerMemory, "server-memory", "server-memory JSONL"},
    {ImportFormat::kMarkdown, "markdown", "Markdown"},
    {ImportFormat::kCsv, "csv", "CSV"},
    {ImportFormat::kJsonl, "jsonl", "JSONL"},
};

const ImportFormatNames& NamesOf(ImportFormat format) {
  for (const ImportFormatNames& names : kImportFormats) {
    if (names.format == format) return names;
  }
  return kImportFormats[0];  // Unreachable: every enumerator is listed.
}

}  // namespace

const char* ImportFormatName(ImportFormat format) { return NamesOf(format).name; }

const char* ImportFormatDescription(ImportFormat format) { return NamesOf(format).description; }

std::optional<ImportFormat> ImportFormatNamed(const std::string& name) {
  for (const ImportFormatNames& names : kImportFormats) {
    if (name == names.name) return names.format;
  }
  return std::nullopt;
}

absl::StatusOr<ImportFormat> DetectImportFormat(const std::string& path) {
  return transfer::DetectFormat(path);
}

absl::Status RestoreBackup(const std::string& backup_path, const std::string& db_path) {
  // The saved vector index described the old database: it goes before any server can open
  // the new one, and is rebuilt from the restored vectors at the next start.
  return store::RestoreDatabase(backup_path, db_path, [&db_path] {
    const std::string index = vector::VectorService::IndexPath(db_path);
    std::error_code ec;
    std::filesystem::remove(index, ec);
    std::filesystem::remove(index + ".meta", ec);
  });
}

bool IsPostgresUri(std::string_view path) {
  return path.starts_with("postgresql://") || path.starts_with("postgres://");
}

std::string RedactedStorePath(std::string_view path) {
  if (!IsPostgresUri(path)) return std::string(path);
  std::string out(path);
  // user:PASSWORD@ in the authority (before the first '/' after the scheme).
  const size_t authority = out.find("://") + 3;
  const size_t end = std::min(out.find('/', authority), out.find('?', authority));
  const size_t at = out.rfind('@', end);
  if (at != std::string::npos && at >= authority) {
    const size_t colon = out.find(':', authority);
    if (colon < at) out.replace(colon + 1, at - colon - 1, "***");
  }
  // password=... among the query parameters.
  for (size_t p = out.find("password=", authority); p != std::string::npos;
       p = out.find("password=", p + 1)) {
    if (out[p - 1] != '?' && out[p - 1] != '&') continue;
    const size_t value = p + 9;
    out.replace(value, std::min(out.find('&', value), out.size()) - value, "***");
  }
  return out;
}

namespace {

struct OpenedDb {
  std::unique_ptr<store::Db> db;
  std::unique_ptr<store::Checkpointer> checkpointer;  // Null on PostgreSQL.
  std::string index_path;                             // Empty: the index is not saved.
  // Another connection to the store, for a background thread.
  vector::VectorService::DbOpener open_another;
};

// A SQLite file, created or migrated, with its checkpointer; the index is saved beside it.
absl::StatusOr<OpenedDb> OpenSqlite(const std::string& path, const store::DbOptions& db_options) {
  // Before the first connection: the keyword index's tokenizer is bound as each one opens.
  RETURN_IF_ERROR(text::InstallFts5Extensions());
  ASSIGN_OR_RETURN(std::unique_ptr<store::SqliteDb> db, store::Db::Open(path, db_options));
  RETURN_IF_ERROR(store::Migrate(*db));
  ASSIGN_OR_RETURN(std::unique_ptr<store::Checkpointer> checkpointer,
                   store::Checkpointer::Start(path, db_options, kCheckpointPages));
  RETURN_IF_ERROR(checkpointer->Attach(*db));
  return OpenedDb{
      .db = std::move(db),
      .checkpointer = std::move(checkpointer),
      .index_path = vector::VectorService::IndexPath(path),
      .open_another = [path, db_options]() -> absl::StatusOr<std::unique_ptr<store::Db>> {
        return store::Db::Open(path, db_options);
      }};
}

// A PostgreSQL database, migrated under the migration lock (nodes starting together apply each
// migration once); the index is saved in `index_dir` under the database's store id.
absl::StatusOr<OpenedDb> OpenPostgres(const std::string& uri, const store::DbOptions& db_options,
                                      const std::string& index_dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<pg::PgDb> db, pg::PgDb::Open(uri, db_options));
  RETURN_IF_ERROR(pg::Migrate(db->connection()));
  std::string index_path;
  if (!index_dir.empty()) {
    ASSIGN_OR_RETURN(const std::string store_id, pg::StoreId(db->connection()));
    std::error_code ec;
    std::filesystem::create_directories(index_dir, ec);
    if (ec) {
      return absl::UnavailableError(absl::StrCat("cannot create the index directory ", index_dir,
                                                 ": ", ec.message()));
    }
    index_path = (std::filesystem::path(index_dir) / absl::StrCat(store_id, ".hnsw")).string();
  }
  return OpenedDb{.db = std::move(db),
                  .index_path = std::move(index_path),
                  .open_another = [uri, db_options]()
                      -> absl::StatusOr<std::unique_ptr<store::Db>> {
                    return pg::PgDb::Open(uri, db_options);
                  }};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  if (options.path.empty()) return absl::InvalidArgumentError("db: the path is empty");
  if (!(options.dedup_threshold > 0 && options.dedup_threshold <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("dedup_threshold: must be in (0, 1], got ", options.dedup_threshold));
  }
  // A bad --embedder is refused before the database is created or migrated.
  ASSIGN_OR_RETURN(std::unique_ptr<embed::Embedder> embedder,
                   embed::MakeEmbedder(options.embedder));
  const store::DbOptions db_options{.durability = options.durability == Durability::kFull
                                                      ? store::Durability::kFull
                                                      : store::Durability::kNormal};
  ASSIGN_OR_RETURN(OpenedDb opened, IsPostgresUri(options.path)
                                        ? OpenPostgres(options.path, db_options, options.index_dir)
                                        : OpenSqlite(options.path, db_options));
  ASSIGN_OR_RETURN(const bool signatures_complete, SignaturesComplete(*opened.db));
  const Clock* clock = options.clock ? options.clock : SystemClock::Get();
  std::unique_ptr<vector::VectorService> vectors;
  if (embedder) {
    ASSIGN_OR_RETURN(vectors, vector::VectorService::Start(
                                  std::move(opened.index_path), opened.open_another,
                                  std::move(embedder), *opened.db, clock->NowUnixMs(),
                                  options.background_work));
  }
  // The keyword catch-up of a serving node; SQLite has no keyword rows outside a write's
  // transaction.
  vector::VectorService::DbOpener open_keyword_catch_up;
  if (options.background_work && opened.db->dialect() == store::Dialect::kPostgres) {
    open_keyword_catch_up = opened.open_another;
  }
  return std::unique_ptr<Store>(new StoreImpl(std::move(opened.db), std::move(opened.checkpointer),
                                              std::move(vectors), clock, options.durability,
                                              options.dedup_threshold, signatures_complete,
                                              open_keyword_catch_up));
}

}  // namespace strata
