#pragma once
// libstrata: a bitemporal memory store for AI agents, in one SQLite file.
//
// Open a Store, then remember, recall and read memories on two time axes: valid time (when
// a fact is true in the world) and transaction time (when the store believed it). Times are
// unix milliseconds. Every fallible call returns absl::Status / absl::StatusOr:
// InvalidArgument for bad input, NotFound, Unavailable (the file is locked or unreadable),
// DataLoss (a corrupt file or one written by a newer strata), Internal (a bug).

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "strata/clock.h"
#include "strata/log.h"

namespace strata {

inline constexpr char kVersion[] = "0.1.0";

enum class Durability {
  kNormal,  // An acknowledged write survives a crash of the process.
  kFull,    // It also survives power loss (fsync on every commit).
};

struct StoreOptions {
  // The SQLite file (created when absent), or a PostgreSQL database's URI (postgresql://...
  // or postgres://...; migrated when older), which several nodes may serve at once.
  std::string path;
  // Where a PostgreSQL store's node saves its vector index (a file named by the database's
  // store id). Empty: it is rebuilt from the stored vectors at every start. A SQLite store
  // saves it beside its file.
  std::string index_dir;
  Durability durability = Durability::kNormal;
  const Clock* clock = nullptr;  // Not owned; outlives the Store. Null: the system clock.
  // A new memory whose text has character-trigram Jaccard similarity at least this high with
  // a current memory of the same category and workspace is merged into it when it adds
  // nothing to it (docs/decisions.md, "Dedup"); otherwise it is written and listed as
  // similar. In (0, 1].
  double dedup_threshold = 0.70;
  // Who turns text into vectors for dense and hybrid recall: "builtin" (the default, no model
  // file, no network), "openai:url=...,model=...,dim=N", "ollama:...", or "none" (keyword
  // recall only). See docs/embeddings.md.
  std::string embedder = "builtin";
  // Whether background threads keep up with what is committed: one embeds new versions, and
  // on PostgreSQL one indexes by keyword the versions a node left without keyword rows
  // (docs/decisions.md, "The keyword upkeep behind the write"). Off, only Embed calls embed
  // and nothing catches up keyword rows (the one-shot commands: a process that exits at once
  // would start a backlog only to abandon it). The index is kept caught up with the stored
  // vectors either way.
  bool background_work = true;
};

// What Store::CheckIndex measured: the index's top k against an exact scan's.
struct IndexCheck {
  // The share of the exact top k that the index returned (recall@k).
  double recall = 0;
  // The share of the index's results no farther from the query (cosine distance) than 1.01
  // times the exact k-th nearest: ann-benchmarks' "epsilon 0.01" recall. Near 1 while recall
  // is lower when what the index misses are near-ties of what it returns.
  double epsilon_recall = 0;
};

// Bounds on a memory's fields, in bytes of UTF-8 unless a count; every write path checks them
// and names the field in its error ("key: at most 1024 bytes, got 5000"). docs/decisions.md,
// "Limits", gives the reasons.
inline constexpr size_t kMaxCategoryBytes = 256;
inline constexpr size_t kMaxKeyBytes = 1024;
inline constexpr size_t kMaxWorkspaceBytes = 256;
inline constexpr size_t kMaxTypeBytes = 128;
inline constexpr size_t kMaxTags = 64;  // On one version.
inline constexpr size_t kMaxTagBytes = 256;
// A body as a JSON text. A strata export restores what was stored, whatever its size.
inline constexpr size_t kMaxBodyBytes = 1 << 20;

// Who a memory is. `workspace` "" is the global workspace.
struct Identity {
  std::string category;
  std::string key;
  std::string workspace;
};

// One version of a memory.
struct Version {
  int64_t memory_id = 0;  // Stable id of the identity.
  Identity identity;
  int64_t version = 0;    // 1 for the first version, then 2, 3, ...
  std::string body_json;  // As the caller gave it.
  std::string type;
  std::vector<std::string> tags;
  std::optional<std::string> source;
  std::optional<double> importance;
  int64_t valid_from_unix_ms = 0;
  std::optional<int64_t> valid_to_unix_ms;  // Open when absent.
  int64_t recorded_at_unix_ms = 0;
  std::optional<int64_t> superseded_at_unix_ms;  // Open (still believed) when absent.
};

// One end of an explicit correction: the memory that superseded another, or was superseded.
struct SupersessionLink {
  int64_t memory_id = 0;
  Identity identity;
  int64_t at_unix_ms = 0;  // When the correction was recorded (transaction time).
};

struct WriteRequest {
  Identity identity;
  std::string body_json;  // A JSON text (object, string, ...).
  std::string type = "insight";
  std::vector<std::string> tags;
  std::optional<std::string> source;
  std::optional<double> importance;
  std::optional<int64_t> valid_from_unix_ms;  // Default: the recorded time.
  std::optional<int64_t> valid_to_unix_ms;    // Default: open.
  bool dedup = true;  // false: store it even when it duplicates another memory.
  // The memory this write corrects: its valid period ends where this write's begins, and
  // recall stops returning it. An alias names the memory it was merged into. A write that
  // supersedes is never merged into another memory.
  std::optional<Identity> supersedes;
};

enum class WriteAction { kCreated, kUpdated, kUnchanged, kDeduped };
const char* WriteActionName(WriteAction action);

// At most this many memories are listed in WriteResult::similar.
inline constexpr size_t kMaxSimilar = 5;

// A current memory that a new one resembles (near-duplicate similarity at least the
// threshold) without being merged into it: the new one adds information.
struct SimilarMemory {
  int64_t memory_id = 0;
  Identity identity;
  double similarity = 0;  // Character-trigram Jaccard of the two bodies, in [0, 1].
};

struct WriteResult {
  WriteAction action = WriteAction::kCreated;
  // The current version after the write; for kDeduped, that of the memory merged into.
  Version version;
  std::optional<double> similarity;            // kDeduped only.
  std::optional<SupersessionLink> supersedes;  // The memory the request superseded.
  // kCreated only: the memories the new one resembles, most similar first (at most
  // kMaxSimilar), for the caller to decide whether it corrects one of them.
  std::vector<SimilarMemory> similar;
};

struct RecallFilters {
  std::optional<std::string> category;
  std::optional<std::string> type;
  std::optional<std::string> workspace;  // Absent: every workspace.
  std::vector<std::string> tags;         // A memory must carry every one of them.
};

// Bounds of a RecallRequest, checked by Store::Recall.
inline constexpr int kMaxRecallLimit = 1000;
inline constexpr int kMaxRecallOffset = 100000;
inline constexpr size_t kMaxFilterTags = 16;
// Bounds of Store::History's limit and offset.
inline constexpr int kMaxHistoryLimit = 1000;
inline constexpr int kMaxHistoryOffset = 1000000;

// How Store::Recall ranks (Recaller, docs/design.md "Recall").
enum class RecallMode {
  kAuto,    // kHybrid once the vector index is ready, else kFts5.
  kFts5,    // Keywords, BM25.
  kDense,   // Meaning: cosine similarity of embeddings. Needs an embedder.
  kHybrid,  // Both, fused by reciprocal rank. Needs an embedder.
};
inline constexpr RecallMode kRecallModes[] = {RecallMode::kAuto, RecallMode::kFts5,
                                              RecallMode::kDense, RecallMode::kHybrid};
// "auto", "fts5", "dense", "hybrid": the names the recall tool takes and answers.
const char* RecallModeName(RecallMode mode);
// The mode named `name`, or nullopt.
std::optional<RecallMode> RecallModeNamed(std::string_view name);

struct RecallRequest {
  std::string query;  // Free text; never interpreted as query syntax.
  RecallMode mode = RecallMode::kAuto;
  int limit = 10;  // 1 to kMaxRecallLimit.
  int offset = 0;  // 0 to kMaxRecallOffset.
  RecallFilters filters;
  std::optional<int64_t> as_of_unix_ms;     // Search what was believed then.
  std::optional<int64_t> valid_at_unix_ms;  // ... and true at this instant.
};

struct RecallItem {
  Version version;
  // Higher is better: BM25 (fts5), cosine similarity (dense), the fused reciprocal-rank
  // score (hybrid).
  double score = 0;
  std::optional<int> fts5_rank;   // 1-based rank in the keyword arm.
  std::optional<int> dense_rank;  // 1-based rank in the dense arm.
};

struct RecallResult {
  std::vector<RecallItem> items;
  RecallMode mode = RecallMode::kFts5;  // The mode that ran: never kAuto.
};

struct HistoryPage {
  std::vector<Version> versions;  // Newest recorded first.
  int64_t total = 0;
  std::vector<int64_t> retracted_at_unix_ms;   // Forget events, oldest first.
  std::vector<SupersessionLink> successors;    // Memories that superseded this one, oldest first.
  std::vector<SupersessionLink> predecessors;  // Memories this one superseded, oldest first.
};

struct DedupStats {
  double threshold = 0;
  bool signatures_complete = true;  // False: run RebuildSignatures (`strata rebuild-signatures`).
  int64_t aliases = 0;
  // Since the store was opened:
  int64_t checks = 0;               // New memories checked for a near-duplicate.
  int64_t candidates_verified = 0;  // Candidates compared exactly, over all checks.
  int64_t merges = 0;
  std::map<int, int64_t> candidates_histogram;  // candidates verified -> checks.
};

// Single writes that shared a transaction (set_commit_ticket), since the store was opened;
// both 0 on SQLite, whose writes commit as they go.
struct GroupCommitStats {
  int64_t groups = 0;  // Transactions committed holding writes of a group.
  int64_t writes = 0;  // Writes committed in them: writes / groups is a group's mean size.
};

struct EmbeddingStats {
  std::string embedder;  // Fingerprint: name/version/dimension/options.
  int dimension = 0;
  int64_t vectors = 0;      // Versions with a vector from this embedder.
  int64_t pending = 0;      // Versions still without one (the background worker's backlog).
  int64_t indexed = 0;      // Vectors in the in-memory index.
  std::string index_state;  // "loading", "building" or "ready".
  int64_t embedded_since_start = 0;
  std::string last_error;  // The embedder's last failure; empty once it succeeds again.
  int64_t index_file_bytes = 0;
  // Dense matches below this cosine similarity are not returned: texts on unrelated topics
  // score up to it under this embedder. Absent until measured (at start).
  std::optional<double> similarity_floor;
};

struct Stats {
  int64_t total_memories = 0;   // Identities ever stored and not purged.
  int64_t active_memories = 0;  // Identities with a current (not forgotten) version.
  int64_t versions = 0;
  std::map<std::string, int64_t> active_by_category;
  int64_t db_file_bytes = 0;
  int64_t wal_file_bytes = 0;
  int schema_version = 0;
  Durability durability = Durability::kNormal;
  std::string path;
  DedupStats dedup;
  GroupCommitStats group_commit;
  std::optional<EmbeddingStats> embeddings;  // Absent with --embedder none.
};

// Which memories an Embed call gives vectors to.
// How long work (a batch write, a backfill) reports to its caller and learns that the caller
// gave up. Both may be null.
struct WorkControl {
  std::function<void(int64_t, int64_t)> progress;  // (done, total) as the work advances.
  // Polled between steps: true once the caller no longer wants the result. Work that stops
  // returns Cancelled.
  std::function<bool()> cancelled;
};

struct EmbedRequest {
  std::optional<std::string> category;  // Only this category's.
  std::optional<Identity> identity;     // Only this memory's versions.
  int64_t limit = 100;                  // At most this many versions.
};

struct EmbedResult {
  int64_t embedded = 0;  // Versions given a vector by this call.
  int64_t attempted = 0;
  int64_t failed = 0;
  int64_t remaining = 0;  // In scope and still without a vector.
  std::string error;      // Why some failed (the embedder's message).
};

// What Store::Export writes: every memory, or those of one workspace and/or category.
struct ExportOptions {
  std::optional<std::string> workspace;
  std::optional<std::string> category;
  // The store as it was believed then (transaction time): only what was recorded at or
  // before it, each memory's last such version still believed unless forgotten by then.
  std::optional<int64_t> as_of_unix_ms;
  // Called now and then with (memories written, memories in scope).
  std::function<void(int64_t done, int64_t total)> progress;
};

struct ExportSummary {
  int64_t memories = 0;
  int64_t versions = 0;
};

struct ImportSummary {
  int64_t read = 0;       // Records read (memory lines; the header and blank lines not counted).
  int64_t created = 0;    // Memories that were not in the store.
  int64_t unchanged = 0;  // Memories already there with the same history (or, for a foreign
                          // format, the same current version).
  int64_t updated = 0;    // A strata export: same history, aliases or links added. A foreign
                          // format: a new version of a memory already there.
  int64_t failed = 0;     // Bad records: reported, not written.
  bool stopped = false;   // stop_on_error stopped at a bad record; later ones were not written.
  int64_t expected = 0;   // Records the input holds, when it says (0: unknown).
};

// Where a bad record was read: its file ("" for the one input of Store::Import) and the
// 1-based line it starts on.
struct SourceLine {
  std::string file;
  int64_t line = 0;
};

// How Store::Import and Store::ImportForeign treat a bad record (README, "Export and import").
struct ImportOptions {
  // True: stop at the first bad record, writing nothing of its batch. False: skip it.
  bool stop_on_error = true;
  // Records per transaction.
  int64_t batch_lines = 1000;
  // Called for each bad record with where it is (a strata export's header is line 1) and why.
  std::function<void(const SourceLine& at, const absl::Status& error)> on_error;
  // Called after each committed batch with the summary so far.
  std::function<void(const ImportSummary&)> progress;
};

// The formats `strata import` reads (README, "Export and import").
enum class ImportFormat {
  kStrata,        // A strata export (JSONL, lossless).
  kServerMemory,  // @modelcontextprotocol/server-memory's knowledge graph (JSONL).
  kMarkdown,      // A Markdown file or folder, YAML front matter optional (a vault).
  kCsv,           // category,key,body[,valid_from,valid_to,tags,type] with a header row.
  kJsonl,         // One object a line with the CSV's field names.
};
// "strata", "server-memory", "markdown", "csv", "jsonl": the names --from takes.
const char* ImportFormatName(ImportFormat format);
// "a strata export", "server-memory JSONL", ...: for people.
const char* ImportFormatDescription(ImportFormat format);
// The format named `name`, or nullopt.
std::optional<ImportFormat> ImportFormatNamed(const std::string& name);
// The format of the file or directory at `path`, from its name and first line. Errors:
// InvalidArgument (cannot tell, listing the formats), NotFound.
absl::StatusOr<ImportFormat> DetectImportFormat(const std::string& path);

// What Store::ImportForeign reads, and the defaults it fills in.
struct ForeignImport {
  ImportFormat format = ImportFormat::kJsonl;  // Not kStrata (that is Store::Import).
  std::string path;                            // A file; for kMarkdown, a file or a folder.
  std::string workspace;                       // Of every memory imported.
  // The category of a record that names none (a note without `category` front matter).
  std::optional<std::string> default_category;
};

// A call's share in a group commit (Store::set_commit_ticket): the writes a Store left
// uncommitted under it, and how their groups ended.
// Thread safety: thread-safe; the Store resolves it while the caller waits in another thread.
class CommitTicket {
 public:
  // Blocks until every write joined under this ticket is committed or its group failed.
  // Returns OK, or the first group's failure (none of that group's writes was kept). Returns
  // at once when none joined.
  absl::Status Wait();
  // Whether a write joined a group under this ticket.
  bool joined() const;

  // For the Store: a write joined the group open now; that group ended with `status`.
  void Join();
  void Resolve(const absl::Status& status);

 private:
  mutable absl::Mutex mu_;
  int joined_ ABSL_GUARDED_BY(mu_) = 0;
  int pending_ ABSL_GUARDED_BY(mu_) = 0;  // Joined, not yet resolved.
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

// Reads by an alias identity (a new key merged into an existing memory by dedup) find the
// memory it was merged into.
// Thread safety: a Store is used by one thread at a time.
class Store {
 public:
  // Opens or creates the store at options.path, migrating its schema forward. A file from a
  // newer strata is refused with DataLoss and left untouched.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const StoreOptions& options);
  virtual ~Store() = default;

  // Writes a version unless the body and valid bounds are unchanged. Errors: InvalidArgument
  // (empty category/key, body not JSON, valid_to <= valid_from).
  virtual absl::StatusOr<WriteResult> Remember(const WriteRequest& request) = 0;
  // Writes many in one transaction; each item succeeds or fails alone. Cancelled (see
  // WorkControl) writes nothing.
  virtual absl::StatusOr<std::vector<absl::StatusOr<WriteResult>>> RememberBatch(
      const std::vector<WriteRequest>& requests, const WorkControl& control) = 0;

  virtual absl::StatusOr<RecallResult> Recall(const RecallRequest& request) = 0;

  // The current version. NotFound when absent or forgotten.
  virtual absl::StatusOr<Version> Get(const Identity& identity) = 0;
  virtual absl::StatusOr<Version> GetById(int64_t memory_id) = 0;
  // Every version, newest recorded first: `limit` of them after `offset`. Errors: NotFound
  // when the identity never existed, InvalidArgument for limit or offset out of its bound.
  virtual absl::StatusOr<HistoryPage> History(const Identity& identity, int limit, int offset) = 0;

  // What was believed at `tx`. nullopt when nothing was.
  virtual absl::StatusOr<std::optional<Version>> AsOf(const Identity& identity,
                                                      int64_t tx_unix_ms) = 0;
  // What, as believed at `tx`, was true at `valid`.
  virtual absl::StatusOr<std::optional<Version>> Bitemporal(const Identity& identity,
                                                            int64_t tx_unix_ms,
                                                            int64_t valid_unix_ms) = 0;
  // Bitemporal(now, valid), where "now" includes every event recorded so far.
  virtual absl::StatusOr<std::optional<Version>> ValidAt(const Identity& identity,
                                                         int64_t valid_unix_ms) = 0;

  // Ends belief in the current version now; history is kept. False when nothing was current.
  // Forgetting an alias (a key merged into another memory) removes the alias only.
  virtual absl::StatusOr<bool> Forget(const Identity& identity, const std::string& reason) = 0;
  // Erases every version and index entry of the identity, and the aliases merged into it.
  // Returns the versions erased (0 for an alias, which is removed).
  virtual absl::StatusOr<int64_t> Purge(const Identity& identity) = 0;

  virtual absl::StatusOr<Stats> GetStats() = 0;

  // Embeds now, on this thread, versions that have no vector yet (a background worker does
  // the same continuously; this is for backfills on demand), then brings the vector index up
  // to date, reporting progress after each batch. Errors: FailedPrecondition without an
  // embedder, NotFound for an unknown identity, InvalidArgument for limit < 1, Cancelled (the
  // vectors stored before it stay).
  virtual absl::StatusOr<EmbedResult> Embed(const EmbedRequest& request,
                                            const WorkControl& control) = 0;

  // How well the vector index finds the exact nearest neighbours, over `queries` stored
  // vectors used as queries (see `strata check-index`). Slow: a full scan per query. Errors:
  // FailedPrecondition without an embedder or while the index is not ready.
  virtual absl::StatusOr<IndexCheck> CheckIndex(int queries, int k) = 0;

  // Writes the memories in scope to `out` as a strata export (JSONL, README "Export and
  // import"), from one read snapshot, while other connections keep writing. The same store
  // gives the same bytes. Errors: DataLoss for a stored text that is not UTF-8.
  virtual absl::StatusOr<ExportSummary> Export(const ExportOptions& options, std::ostream& out) = 0;
  // Restores a strata export read from `in`: every version with both time axes as recorded,
  // forgets, aliases and supersession links, and the keyword and dedup indexes (vectors
  // follow from the embedder). A memory already present with the same history is
  // unchanged; with a different one, its line fails (nothing of either side is lost).
  // Errors (the whole import): InvalidArgument for a missing or unknown header, Unavailable.
  virtual absl::StatusOr<ImportSummary> Import(std::istream& in, const ImportOptions& options) = 0;
  // Remembers the memories of another system's file (at most 1 GiB, read whole first): each
  // record through the write path's checks, never merged by dedup into another memory. A
  // record equal to its memory's current version is unchanged, a different one a new
  // version. Errors (the whole import): InvalidArgument (kStrata, unreadable layout, too
  // large), NotFound, Unavailable.
  virtual absl::StatusOr<ImportSummary> ImportForeign(const ForeignImport& what,
                                                      const ImportOptions& options) = 0;
  // Copies the whole database, consistently, to a new file at `path` while writes go on.
  // Errors: AlreadyExists when `path` exists and !overwrite; Unavailable.
  virtual absl::Status Backup(const std::string& path, bool overwrite) = 0;

  // Group commit, for a server running several calls at once (docs/decisions.md, "Group
  // commit"). While a ticket is set, a single write on PostgreSQL (Remember without
  // `supersedes`) joins the ticket and is left in a transaction that the next such writes
  // join: its result is final only once the ticket says so. The group is committed by
  // CommitGroup, or by the next call of any other kind (which then sees it). Null (the
  // default): every write commits before it returns.
  virtual void set_commit_ticket(std::shared_ptr<CommitTicket> ticket) = 0;
  // The writes waiting in the open group; 0 when none is open.
  virtual int uncommitted_writes() const = 0;
  // Commits the open group (nothing when none is), then resolves its tickets with the
  // outcome, which it returns: an error means none of its writes was kept.
  virtual absl::Status CommitGroup() = 0;

  // Recomputes every current memory's near-duplicate signature (after an upgrade, or when
  // stats says they are incomplete). Returns the number of memories indexed.
  virtual absl::StatusOr<int64_t> RebuildSignatures() = 0;
};

// Replaces the store at `db_path` with the backup at `backup_path` (made by Store::Backup).
// Errors: FailedPrecondition while another process (a server) has `db_path` open;
// DataLoss when the backup is damaged. Nothing is changed on error.
absl::Status RestoreBackup(const std::string& backup_path, const std::string& db_path);

// Whether a StoreOptions::path names a PostgreSQL database rather than a SQLite file.
bool IsPostgresUri(std::string_view path);
// `path` as logs, stats and messages show it: a PostgreSQL URI's password (user:PASSWORD@ or
// password=...) replaced by "***".
std::string RedactedStorePath(std::string_view path);

}  // namespace strata
