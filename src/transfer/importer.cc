#include "transfer/importer.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "dedup/content.h"
#include "dedup/index.h"
#include "dedup/signature.h"
#include "temporal/fields.h"
#include "temporal/supersession_table.h"
#include "temporal/version_table.h"
#include "text/body_text.h"
#include "text/fts_index.h"
#include "transfer/batches.h"
#include "transfer/record.h"
#include "util/status_macros.h"

namespace strata::transfer {
namespace {

std::string Name(const Identity& id) {
  return absl::StrCat(
      "memory \"", id.category, "/", id.key, "\"",
      id.workspace.empty() ? "" : absl::StrCat(" in workspace \"", id.workspace, "\""));
}

// Whether two versions are the same stored version (ids aside).
bool SameVersion(const Version& a, const Version& b) {
  return a.version == b.version && a.body_json == b.body_json && a.type == b.type &&
         a.tags == b.tags && a.source == b.source && a.importance == b.importance &&
         a.valid_from_unix_ms == b.valid_from_unix_ms && a.valid_to_unix_ms == b.valid_to_unix_ms &&
         a.recorded_at_unix_ms == b.recorded_at_unix_ms &&
         a.superseded_at_unix_ms == b.superseded_at_unix_ms;
}

// The time rules a stored history keeps (docs/design.md §3), checked before anything is
// written; fills `bodies` with each version's parse.
absl::Status Validate(const MemoryRecord& r, std::vector<text::ParsedBody>& bodies) {
  RETURN_IF_ERROR(temporal::ValidateIdentity(r.identity));
  if (r.versions.empty()) return absl::InvalidArgumentError("versions: empty");
  bodies.clear();
  for (size_t i = 0; i < r.versions.size(); ++i) {
    const Version& v = r.versions[i];
    const std::string at = absl::StrCat("versions[", i, "]");
    if (v.version != static_cast<int64_t>(i) + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".version: expected ", i + 1, ", got ", v.version));
    }
    if (i > 0 && v.recorded_at_unix_ms <= r.versions[i - 1].recorded_at_unix_ms) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".recorded_at: must be after the previous version's"));
    }
    if (v.superseded_at_unix_ms ? *v.superseded_at_unix_ms <= v.recorded_at_unix_ms
                                : i + 1 < r.versions.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          at, ".superseded_at: must be after recorded_at, and null only for the last version"));
    }
    if (v.valid_to_unix_ms && *v.valid_to_unix_ms <= v.valid_from_unix_ms) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".valid_to: must be after valid_from"));
    }
    if (absl::Status s = temporal::ValidateTypeAndTags(v.type, v.tags); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".", s.message()));
    }
    absl::StatusOr<text::ParsedBody> body = text::ParseBody(v.body_json);
    if (!body.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".body_json: ", body.status().message()));
    }
    bodies.push_back(*std::move(body));
  }
  // The next event of the identity is stamped after last_event_at, so it must not be earlier
  // than any event the line records.
  int64_t latest = r.versions.back().recorded_at_unix_ms;
  if (!r.retractions.empty()) latest = std::max(latest, r.retractions.back().at_unix_ms);
  if (r.last_event_at_unix_ms < latest) {
    return absl::InvalidArgumentError(
        absl::StrCat("last_event_at: must not be before the line's latest event (", latest,
                     "), got ", r.last_event_at_unix_ms));
  }
  for (const AliasRecord& alias : r.aliases) {
    if (absl::Status s = temporal::ValidateIdentity(alias.identity); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("aliases.", s.message()));
    }
    if (alias.identity.category == r.identity.category && alias.identity.key == r.identity.key &&
        alias.identity.workspace == r.identity.workspace) {
      return absl::InvalidArgumentError("aliases: names the memory itself");
    }
  }
  for (const auto* links : {&r.supersedes, &r.superseded_by}) {
    for (const LinkRecord& link : *links) {
      if (absl::Status s = temporal::ValidateIdentity(link.other); !s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(links == &r.supersedes ? "supersedes." : "superseded_by.", s.message()));
      }
    }
  }
  for (size_t i = 1; i < r.superseded_by.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (r.superseded_by[i].at_unix_ms == r.superseded_by[j].at_unix_ms) {
        return absl::InvalidArgumentError(
            absl::StrCat("superseded_by[", i, "].at: two corrections at one instant"));
      }
    }
  }
  for (size_t i = 1; i < r.retractions.size(); ++i) {
    if (r.retractions[i].at_unix_ms <= r.retractions[i - 1].at_unix_ms) {
      return absl::InvalidArgumentError(
          absl::StrCat("retractions[", i, "].at: must be after the previous one's"));
    }
  }
  return absl::OkStatus();
}

// A record with what can be derived from it without the store, made on the reading thread:
// each version's parsed body, and, when asked for, the band keys of a memory still believed.
struct PreparedRecord {
  MemoryRecord record;
  std::vector<text::ParsedBody> bodies;      // Of each version.
  std::optional<std::vector<int64_t>> keys;  // Computed ahead; else by the writer if needed.
};

// Parses and checks one line (InvalidArgument saying why it is bad); with `with_keys`, also
// computes the band keys a new memory of it would get.
absl::StatusOr<PreparedRecord> Prepare(std::string_view line, bool with_keys) {
  PreparedRecord p;
  ASSIGN_OR_RETURN(p.record, ParseRecord(line));
  RETURN_IF_ERROR(Validate(p.record, p.bodies));
  if (!with_keys) return p;
  if (!p.record.versions.back().superseded_at_unix_ms)
    p.keys = dedup::BodyKeys(p.bodies.back(), p.record.identity);
  for (text::ParsedBody& body : p.bodies) {
    body.normal_json = std::string();  // Not needed from here on: kept small in the queue.
    body.values = {};
  }
  return p;
}

// Writes records. Each is checked against the store before its first write, so that a bad
// line writes nothing and needs no savepoint (releasing one would flush FTS5's pending
// terms into a segment per line). Keyword index rows are added at the end of each batch
// (Finish), after every other row of it: a statement that opens a statement journal (an
// INSERT OR REPLACE into a table with an index, PutAlias's) flushes FTS5's pending terms
// into a segment, and between two index rows it did so once per alias.
// Thread safety: as the Db it borrows.
class Importer {
 public:
  explicit Importer(store::Db* db) : versions_(db), supersessions_(db), dedup_(db), fts_(db) {}

  // Writes one record. InvalidArgument or FailedPrecondition: the record cannot be written,
  // and nothing of it was. Any other error may leave part of it written (the caller rolls the
  // transaction back).
  absl::StatusOr<Outcome> Apply(const PreparedRecord& p) {
    const MemoryRecord& r = p.record;
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> existing,
                     versions_.FindIdentity(r.identity));
    if (existing) {
      RETURN_IF_ERROR(CheckSameHistory(r, existing->memory_id));
    } else {
      RETURN_IF_ERROR(CheckNotAnAlias(r.identity));
    }
    const int64_t known_id = existing ? existing->memory_id : 0;  // 0: not created yet.
    std::vector<const AliasRecord*> aliases;
    for (const AliasRecord& alias : r.aliases) {
      ASSIGN_OR_RETURN(const bool missing, AliasMissing(alias, known_id, r.identity));
      if (missing) aliases.push_back(&alias);
    }
    std::vector<PlannedLink> links;
    for (const LinkRecord& link : r.supersedes) {
      RETURN_IF_ERROR(PlanLink(link, known_id, /*this_is_successor=*/true, links));
    }
    for (const LinkRecord& link : r.superseded_by) {
      RETURN_IF_ERROR(PlanLink(link, known_id, /*this_is_successor=*/false, links));
    }
    absl::Status written = Write(p, known_id, aliases, links);
    if (!written.ok() &&
        (absl::IsInvalidArgument(written) || absl::IsFailedPrecondition(written))) {
      // Checked for above: a failure now is ours, and the caller must not go on.
      return absl::InternalError(absl::StrCat("writing a checked line: ", written.message()));
    }
    RETURN_IF_ERROR(written);
    ++applied_;
    if (!existing) {
      ++created_;
      return Outcome::kCreated;
    }
    return aliases.empty() && links.empty() ? Outcome::kUnchanged : Outcome::kUpdated;
  }

  // Adds the keyword index rows of the batch's versions. Called once per batch, before it
  // commits, while its records live.
  absl::Status Finish() {
    mostly_created_ = 2 * created_ >= applied_;
    created_ = applied_ = 0;
    for (const IndexRow& row : pending_index_) {
      RETURN_IF_ERROR(fts_.Add(row.version_id, *row.text, row.owner->identity.key,
                               row.owner->identity.category));
    }
    pending_index_.clear();
    return absl::OkStatus();
  }

  // Whether at least half the records of the last finished batch were new memories (whose
  // band keys are worth computing ahead); true before the first.
  bool mostly_created() const { return mostly_created_; }

 private:
  // A version's keyword index row, to be added by Finish.
  struct IndexRow {
    int64_t version_id = 0;
    const std::string* text = nullptr;    // Not owned: the batch's.
    const MemoryRecord* owner = nullptr;  // Not owned: the batch's.
  };

  // A supersession to insert: the other memory's id, and which end this record is.
  struct PlannedLink {
    int64_t other_id = 0;
    bool this_is_successor = false;
    int64_t at_unix_ms = 0;
    int64_t valid_from_unix_ms = 0;
  };

  absl::Status CheckSameHistory(const MemoryRecord& r, int64_t memory_id) {
    ASSIGN_OR_RETURN(const std::vector<temporal::VersionRow> stored,
                     versions_.LoadVersions(memory_id));
    ASSIGN_OR_RETURN(const std::vector<temporal::RetractionRow> retractions,
                     versions_.LoadRetractionRows(memory_id));
    std::string difference;
    if (stored.size() != r.versions.size()) {
      difference = absl::StrCat("this store has ", stored.size(), " version(s), the line ",
                                r.versions.size());
    } else if (retractions != r.retractions) {
      difference = "its forgets differ";
    } else {
      for (size_t i = 0; i < stored.size() && difference.empty(); ++i) {
        if (!SameVersion(stored[i].version, r.versions[i])) {
          difference = absl::StrCat("version ", i + 1, " differs");
        }
      }
    }
    if (difference.empty()) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        Name(r.identity), " is in this store with another history (", difference,
        "); nothing of this line was written. Keep both: export this store's copy first; take "
        "the file's: purge the memory, then import again"));
  }

  absl::Status CheckNotAnAlias(const Identity& identity) {
    ASSIGN_OR_RETURN(std::optional<int64_t> alias_of, dedup_.FindAlias(identity));
    if (!alias_of) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        Name(identity),
        " is an alias in this store (a key merged into another memory); nothing of this line "
        "was written. Forget the alias to import the memory"));
  }

  // True when the alias is still to be added; an alias of this memory already is no change.
  absl::StatusOr<bool> AliasMissing(const AliasRecord& alias, int64_t memory_id,
                                    const Identity& owner) {
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> memory,
                     versions_.FindIdentity(alias.identity));
    ASSIGN_OR_RETURN(std::optional<int64_t> target, dedup_.FindAlias(alias.identity));
    if (memory || (target && *target != memory_id)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "aliases: ", Name(alias.identity), " is ",
          memory ? "a memory of its own" : "an alias of another memory",
          " in this store, not an alias of ", Name(owner), "; nothing of this line was written"));
    }
    return !target;
  }

  // Adds the link to `links` unless it is recorded already. A link whose other memory is not
  // in the store (yet) is left to that memory's line, which names it too.
  absl::Status PlanLink(const LinkRecord& link, int64_t memory_id, bool this_is_successor,
                        std::vector<PlannedLink>& links) {
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> other,
                     versions_.FindIdentity(link.other));
    if (!other) return absl::OkStatus();
    const int64_t predecessor = this_is_successor ? other->memory_id : memory_id;
    if (predecessor != 0) {
      ASSIGN_OR_RETURN(const std::vector<temporal::SupersessionRow> present,
                       supersessions_.Successors(predecessor));
      for (const temporal::SupersessionRow& p : present) {
        if (p.at_unix_ms != link.at_unix_ms) continue;
        const int64_t successor = this_is_successor ? memory_id : other->memory_id;
        if (p.successor_id == successor && p.valid_from_unix_ms == link.valid_from_unix_ms) {
          return absl::OkStatus();
        }
        return absl::FailedPreconditionError(
            absl::StrCat(this_is_successor ? "supersedes" : "superseded_by", ": ", Name(link.other),
                         " has another correction recorded at ", link.at_unix_ms,
                         " in this store; nothing of this line was written"));
      }
    }
    links.push_back({.other_id = other->memory_id,
                     .this_is_successor = this_is_successor,
                     .at_unix_ms = link.at_unix_ms,
                     .valid_from_unix_ms = link.valid_from_unix_ms});
    return absl::OkStatus();
  }

  absl::Status Write(const PreparedRecord& p, int64_t memory_id,
                     const std::vector<const AliasRecord*>& aliases,
                     const std::vector<PlannedLink>& links) {
    const MemoryRecord& r = p.record;
    const bool created = memory_id == 0;
    if (created) {
      ASSIGN_OR_RETURN(memory_id, Create(p));
    }
    for (const AliasRecord* alias : aliases) {
      RETURN_IF_ERROR(dedup_.PutAlias(alias->identity, memory_id, alias->similarity,
                                      alias->created_at_unix_ms));
    }
    // Memories whose band keys a new link may change: the predecessors.
    std::set<int64_t> refresh;
    for (const PlannedLink& link : links) {
      const temporal::SupersessionRow row{
          .predecessor_id = link.this_is_successor ? link.other_id : memory_id,
          .successor_id = link.this_is_successor ? memory_id : link.other_id,
          .at_unix_ms = link.at_unix_ms,
          .valid_from_unix_ms = link.valid_from_unix_ms};
      RETURN_IF_ERROR(supersessions_.Insert(row));
      refresh.insert(row.predecessor_id);
    }
    // A new memory's keys come from the body parsed already, unless a link changed what it
    // should have (then RefreshBands decides).
    if (created && !refresh.contains(memory_id) && !r.versions.back().superseded_at_unix_ms) {
      RETURN_IF_ERROR(
          dedup_.Add(memory_id, p.keys ? *p.keys : dedup::BodyKeys(p.bodies.back(), r.identity)));
    }
    for (const int64_t id : refresh) RETURN_IF_ERROR(RefreshBands(id));
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> Create(const PreparedRecord& p) {
    const MemoryRecord& r = p.record;
    ASSIGN_OR_RETURN(const int64_t id,
                     versions_.InsertIdentityAt(r.identity, r.id, r.created_at_unix_ms,
                                                r.last_event_at_unix_ms));
    std::optional<int64_t> current;
    for (size_t i = 0; i < r.versions.size(); ++i) {
      const text::ParsedBody& body = p.bodies[i];
      temporal::VersionRow row{.body_hash = body.normal_hash, .version = r.versions[i]};
      row.version.memory_id = id;
      RETURN_IF_ERROR(versions_.InsertVersionAsIs(row));
      pending_index_.push_back({.version_id = row.version_id, .text = &body.text, .owner = &r});
      current =
          row.version.superseded_at_unix_ms ? std::nullopt : std::optional<int64_t>(row.version_id);
    }
    for (const temporal::RetractionRow& t : r.retractions) {
      RETURN_IF_ERROR(versions_.InsertRetraction(id, t));
    }
    RETURN_IF_ERROR(versions_.SetIdentityState(id, current, static_cast<int64_t>(r.versions.size()),
                                               r.last_event_at_unix_ms));
    return id;
  }

  // Makes the memory's band keys what the write path leaves: its current version's, unless
  // it is forgotten or superseded since that version (RebuildSignatures's rule).
  absl::Status RefreshBands(int64_t memory_id) {
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> row,
                     versions_.FindIdentityById(memory_id));
    if (!row || !row->current_version_id) return absl::OkStatus();
    ASSIGN_OR_RETURN(const temporal::VersionRow current,
                     versions_.LoadVersion(*row->current_version_id));
    const std::vector<int64_t> keys = dedup::StoredVersionKeys(current);
    ASSIGN_OR_RETURN(const std::vector<temporal::SupersessionRow> successors,
                     supersessions_.Successors(memory_id));
    for (const temporal::SupersessionRow& s : successors) {
      if (s.at_unix_ms >= current.version.recorded_at_unix_ms) {
        return dedup_.Remove(memory_id);
      }
    }
    return dedup_.Set(memory_id, keys);
  }

  temporal::VersionTable versions_;
  temporal::SupersessionTable supersessions_;
  dedup::DedupIndex dedup_;
  text::FtsIndex fts_;
  // Keyword index rows of this batch's versions, in version id order; they point into the
  // batch's records, which live until Finish.
  std::vector<IndexRow> pending_index_;
  int64_t applied_ = 0;  // Records of this batch written, and how many of them were new.
  int64_t created_ = 0;
  bool mostly_created_ = true;
};

// Reads up to `max` non-blank lines after line `number`, prepared.
std::vector<Numbered<PreparedRecord>> ReadBatch(std::istream& in, int64_t max, int64_t& number,
                                                bool with_keys) {
  std::vector<Numbered<PreparedRecord>> batch;
  std::string text;
  while (static_cast<int64_t>(batch.size()) < max && std::getline(in, text)) {
    ++number;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    batch.push_back({.at = {.line = number}, .record = Prepare(text, with_keys)});
  }
  return batch;
}

// Reads and prepares batches ahead of the one being written (one handed over and one being
// read, at most), on a thread of its own: parsing, checking and the near-duplicate analysis
// take about as long as writing. One thread for the whole import, so that its caches (JSON
// parser, word facts) stay warm.
// Thread safety: Next is called by one thread; the reading thread alone uses `in`, until it
// has read the last batch or this is destroyed (which stops it after the batch it reads).
class BatchReader {
 public:
  // Batches of at most `max` records; line `number` of `in` was the last read.
  BatchReader(std::istream& in, int64_t number, int64_t max)
      : in_(in), number_(number), max_(max), thread_([this] { Run(); }) {}
  ~BatchReader() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    thread_.join();
  }

  // Whether the batches read from now on come with band keys (PreparedRecord::keys): worth
  // it when their memories are mostly new, as in an import into an empty store.
  void ComputeKeys(bool with_keys) { with_keys_.store(with_keys, std::memory_order_relaxed); }

  // The next batch, empty at the end.
  std::vector<Numbered<PreparedRecord>> Next() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&ready_));
    ready_ = false;
    return std::move(next_);
  }

 private:
  void Run() {
    while (true) {
      std::vector<Numbered<PreparedRecord>> batch =
          ReadBatch(in_, max_, number_, with_keys_.load(std::memory_order_relaxed));
      const bool last = batch.empty();
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &BatchReader::CanPublish));
      if (stopping_) return;
      next_ = std::move(batch);
      ready_ = true;
      if (last) return;
    }
  }

  // Whether Run may hand over its batch, or must stop.
  bool CanPublish() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !ready_ || stopping_; }

  std::istream& in_;  // Not owned; outlives this.
  int64_t number_;    // Of the reading thread alone.
  const int64_t max_;
  std::atomic<bool> with_keys_{true};
  absl::Mutex mu_;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;  // next_ holds a batch not yet taken.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Numbered<PreparedRecord>> next_ ABSL_GUARDED_BY(mu_);
  std::jthread thread_;  // Last: started once the members it uses are.
};

}  // namespace

absl::StatusOr<ImportSummary> Import(store::Db& db, std::istream& in,
                                     const ImportOptions& options) {
  std::string first;
  if (!std::getline(in, first)) {
    return absl::InvalidArgumentError("line 1: the input is empty; expected a strata export");
  }
  absl::StatusOr<Header> header = ParseHeader(first);
  if (!header.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("line 1: ", header.status().message()));
  }
  Importer importer(&db);
  BatchReader reader(in, /*number=*/1, std::max<int64_t>(1, options.batch_lines));
  ASSIGN_OR_RETURN(ImportSummary summary,
                   WriteInBatches<PreparedRecord>(
                       db, options, {.expected = header->counts.memories},
                       [&](int64_t) { return reader.Next(); },
                       [&](const PreparedRecord& record) { return importer.Apply(record); },
                       [&] {
                         absl::Status finished = importer.Finish();
                         reader.ComputeKeys(importer.mostly_created());
                         return finished;
                       }));
  if (!summary.stopped && in.bad()) return absl::UnavailableError("import: cannot read the input");
  return summary;
}

}  // namespace strata::transfer
