#pragma once
// The keyword index on PostgreSQL, ranking as SQLite's FTS5 table does (docs/decisions.md,
// "The keyword index on PostgreSQL"). Tables (pg/schema.cc): text_documents (version_id,
// lengths[], terms[], positions) a row per version: its tokens per field, its terms (the
// field's digit, then the term; a GIN index finds the rows holding any) and each one's
// positions; text_term_stats (term, field, documents, up to kSaturatedDocuments) and
// text_totals (field, documents, tokens), kept by Add and Remove in the writer's transaction,
// or by AddBeside in one of their own just after it.
// Terms are text::Tokenize's, positions FTS5's (a colocated token shares its predecessor's),
// so a query finds what FTS5 finds. Rank reads the rows holding the query's terms and the
// totals in one statement, and scores them here with text/bm25.h: the same counts give the
// same double as strata_bm25. Not ts_rank or tsvector: their parsers are not strata's
// tokenizer and ts_rank is not BM25 (it keeps no document frequencies).

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"
#include "text/fts_index.h"

namespace strata::text {

// Terms longer than this many bytes are kept as their first ones (cut at a character): an
// index entry must fit a page, and no query token is half as long (query terms are at most
// kMaxTermBytes, identifiers kMaxIdentifierBytes), so every match is the same.
inline constexpr size_t kMaxStoredTermBytes = 1024;

// A text_term_stats row counts its term's documents in its field until it reaches this many,
// then stays there for good ("saturated": the term is in at least this many versions, or was).
// The terms in most versions (a corpus's vocabulary, "the") are rows every write would update;
// past this their counts serve nothing: TermStats counts a term's matches itself once its
// bound exceeds half of the versions it samples (at most kSampleRows), and a phrase's anchor
// is its rarest position. Above every such half, so that no build, this one or one before it,
// takes a saturated count for a rare term's.
inline constexpr int64_t kSaturatedDocuments = 20001;

// A single write beside the writers (PgKeywordIndex::AddBeside) that counts a term in a
// statistics row counts this many documents at once: its own and as many later ones of the
// same index (its credits), which then touch no statistics row for that term. So a count is
// an upper bound, at most kReservedDocuments - 1 above the truth for each index (a node) that
// holds credits for it; nothing reads the counts as more (TermStats takes them for bounds,
// BM25 counts the postings it reads). On strata's pseudo-word corpus (4,096 words, none
// saturated at 20K memories) a write's server CPU fell from 1.88 to 1.34-1.39 ms with them.
// The writes in a transaction of their own (Add: batches, imports, corrections) count
// exactly, using credits but reserving none.
inline constexpr int64_t kReservedDocuments = 16;

// What a write transaction's versions after its first add to the keyword statistics
// (PgKeywordIndex::Add).
struct PendingKeywordStatistics {
  absl::flat_hash_map<std::pair<int, std::string>, int64_t> documents;  // (field, term)
  int64_t field_documents[kFields] = {};
  int64_t field_tokens[kFields] = {};
};

// Term-major segments (docs/decisions.md, "Term-major segments"; tables of migration 9): for
// each block of `block_versions` versions by id, from version 1 on, the postings of each row
// term with at least `min_documents` documents (text_term_stats) when the block was built, a
// row each. Built behind the writers, a block once every version in it is indexed and a later
// one exists (version ids are handed out in commit order, so none can join it later); a
// purge of one of its versions drops it, and it is built again, as is a block built before
// a term saturated (one a call that built nothing else). A block holds segments for the
// newest block's terms and for its own terms then saturated; none are built before the store
// holds twice `min_documents` versions.
// How long a node goes by the row terms it last read as segmented (PgKeywordIndex).
inline constexpr std::chrono::seconds kSegmentTermsFor{10};

struct SegmentOptions {
  int64_t block_versions = 1024;
  // Saturated rows: a term in at least that many versions, for good.
  int64_t min_documents = kSaturatedDocuments;
};

// Thread safety: as the Db it borrows.
class PgKeywordIndex final : public store::CommitHook {
 public:
  // REQUIRES: db->dialect() is kPostgres.
  explicit PgKeywordIndex(store::Db* db) : db_(db) {}
  // Destroyed in a write transaction it added to: sends what it added up now.
  ~PgKeywordIndex() override;
  PgKeywordIndex(const PgKeywordIndex&) = delete;
  PgKeywordIndex& operator=(const PgKeywordIndex&) = delete;

  // Indexes a version's three fields (FtsIndex::Add), leaving out the statistics' rows it
  // knows saturated: every 64th call (the first included) first asks which of its terms'
  // rows are. The first version of a write transaction is counted in the statistics with
  // its postings; the later ones (a batch, an import) are added up here and counted at
  // COMMIT, each row once (BeforeCommit). Errors: as the statements.
  absl::Status Add(int64_t version_id, std::string_view text, std::string_view key,
                   std::string_view category);
  // Add for each document, in a transaction of their own that does not take turns with the
  // writers of versions (store::Transaction::BeginBeside): single writes' keyword rows, after
  // their commit (docs/decisions.md, "The keyword upkeep behind the write"). Writes nothing
  // for a version gone (purged) or indexed already (by a catch-up: KeywordBacklog).
  // REQUIRES: no transaction open.
  absl::Status AddBeside(std::span<const KeywordDocument> documents);
  // Unindexes a version: its row, and its count in the statistics; nothing when it is not
  // indexed. Waits for the AddBeside transactions in flight, and keeps others out until its
  // transaction ends.
  absl::Status Remove(int64_t version_id);

  // As FtsIndex::Rank and NewestMatches (`before`: ids below it only).
  absl::StatusOr<std::vector<RankedMatch>> Rank(const KeywordMatch& match, int64_t offset,
                                                int64_t limit);
  absl::StatusOr<std::vector<int64_t>> NewestMatches(const KeywordMatch& match, int64_t before,
                                                     int64_t limit);

  // The number of indexed versions.
  absl::StatusOr<int64_t> IndexedRows();
  // The number of indexed versions and, for each of `terms`, at least the number of versions
  // matching it as a one-term KeywordMatch does (INT64_MAX for a saturated term, and for one
  // the index cuts into several tokens: a phrase, which has no statistics), from text_totals
  // and text_term_stats in one statement: one snapshot, one round trip.
  struct Statistics {
    int64_t rows = 0;
    std::vector<int64_t> bounds;
  };
  absl::StatusOr<Statistics> ReadStatistics(const std::vector<std::string>& terms);
  // Whether more than `count` versions with ids above `after` match `term` as a one-term
  // KeywordMatch does.
  absl::StatusOr<bool> MatchesMoreThan(const std::string& term, int64_t after, int64_t count);

  // Builds the next blocks of segments, at most `max_blocks`, oldest first, each in a
  // transaction of its own beside the writers (no lock a writer waits for); returns how many
  // it built. Nothing while another node builds. REQUIRES: no transaction open on `db`, and
  // the same `options` for a store's whole life.
  static absl::StatusOr<int> BuildSegments(store::Db& db, const SegmentOptions& options,
                                           int max_blocks);
  // Merges the entries GIN keeps aside for fast inserts into the terms' index (its pending
  // list, up to 512 kB, which every keyword query reads whole): what the write that fills
  // the list does, or autovacuum, later. Errors: as the statement (PostgreSQL lets only the
  // index's owner).
  static absl::Status MergePending(store::Db& db);

  // store::CommitHook: counts what Add added up; forgets it.
  absl::Status BeforeCommit() override;
  void Dropped() override;

 private:
  // One of AddBeside's statements sent in one round trip.
  struct Beside {
    // Its place among them: each is a cached statement of its own, so that all are sent
    // before any is read.
    int slot = 0;
    std::vector<std::string> reserved;  // The statistics keys it reserved.
    // Every key the round trip's statements reserved: a later one counts such a key for its
    // own version only, its credits not known yet.
    absl::flat_hash_set<std::string>* reserving = nullptr;
  };
  // Add, or with `beside` AddBeside's statement: only while the version is in `versions`,
  // reserving credits (kReservedDocuments) for the statistics keys it appends to
  // beside->reserved, and sent ahead for its rows (one for each text_totals row, when it
  // wrote) to be read. Returns the statement.
  absl::StatusOr<store::Stmt> AddRows(int64_t version_id, std::string_view text,
                                      std::string_view key, std::string_view category,
                                      Beside* beside);
  // Which of the row terms (the field's digit, then the term) have a saturated row: into
  // saturated_.
  absl::Status LearnSaturated(const std::vector<std::string>& keys);

  // The row terms that may have segments: those the newest block holds segments for (a
  // segmented row term is saturated, and stays so), read again after kSegmentTermsFor. A
  // query reads segments only for these: the others cost it no round trip.
  absl::StatusOr<const absl::flat_hash_set<std::string>*> SegmentTerms();

  store::Db* db_;  // Not owned; outlives this.
  absl::flat_hash_set<std::string> segment_terms_;
  std::optional<std::chrono::steady_clock::time_point> segment_terms_at_;
  // Keys of statistics' rows known saturated: such a row never changes again (Add and Remove
  // leave it), so a write need not touch it. A node's writes span the vocabulary within a few
  // calls: at 100,000 memories of Perseus Vault's corpus, 45 of a write's 49 rows.
  absl::flat_hash_set<std::string> saturated_;
  // Keys of statistics' rows -> documents already counted there for versions to come
  // (kReservedDocuments). Forgotten past kMaxCreditKeys keys: an unused credit overcounts.
  absl::flat_hash_map<std::string, int64_t> credits_;
  static constexpr size_t kMaxCreditKeys = 1 << 17;
  int64_t adds_ = 0;
  // Engaged from a write transaction's first Add to its end.
  std::optional<PendingKeywordStatistics> pending_;
};

}  // namespace strata::text
