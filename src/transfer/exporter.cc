#include "transfer/exporter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dedup/index.h"
#include "temporal/supersession_table.h"
#include "temporal/version_table.h"
#include "transfer/record.h"
#include "util/status_macros.h"

namespace strata::transfer {
namespace {

// Output is handed to the stream in pieces of about this size.
constexpr size_t kFlushBytes = 1 << 20;

absl::Status Flush(std::string& buffer, std::ostream& out) {
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  buffer.clear();
  if (!out) return absl::UnavailableError("export: cannot write the output");
  return absl::OkStatus();
}

// The links of `rows`, the other end of each named by identity.
absl::StatusOr<std::vector<LinkRecord>> Links(temporal::VersionTable& versions,
                                              const std::vector<temporal::SupersessionRow>& rows,
                                              bool other_is_successor) {
  std::vector<LinkRecord> links;
  for (const temporal::SupersessionRow& row : rows) {
    const int64_t other_id = other_is_successor ? row.successor_id : row.predecessor_id;
    ASSIGN_OR_RETURN(std::optional<temporal::IdentityRow> other,
                     versions.FindIdentityById(other_id));
    if (!other) return absl::InternalError(absl::StrCat("supersession names no memory ", other_id));
    links.push_back({.other = std::move(other->identity),
                     .at_unix_ms = row.at_unix_ms,
                     .valid_from_unix_ms = row.valid_from_unix_ms});
  }
  return links;
}

// Everything stored of the scanned identity, into `record`.
absl::Status Load(temporal::ScannedIdentity& scanned, temporal::VersionTable& versions,
                  temporal::SupersessionTable& supersessions, dedup::DedupIndex& dedup_index,
                  MemoryRecord& record) {
  const int64_t id = scanned.row.memory_id;
  record.id = id;
  record.identity = std::move(scanned.row.identity);
  record.created_at_unix_ms = scanned.created_at_unix_ms;
  record.last_event_at_unix_ms = scanned.row.last_event_at_unix_ms;
  record.versions.clear();
  for (temporal::VersionRow& v : scanned.versions) record.versions.push_back(std::move(v.version));
  ASSIGN_OR_RETURN(record.retractions, versions.LoadRetractionRows(id));
  ASSIGN_OR_RETURN(const std::vector<dedup::AliasRow> aliases, dedup_index.AliasesOf(id));
  record.aliases.clear();
  for (const dedup::AliasRow& a : aliases) {
    record.aliases.push_back({.identity = a.identity,
                              .similarity = a.similarity,
                              .created_at_unix_ms = a.created_at_unix_ms});
  }
  ASSIGN_OR_RETURN(const std::vector<temporal::SupersessionRow> predecessors,
                   supersessions.Predecessors(id));
  ASSIGN_OR_RETURN(record.supersedes, Links(versions, predecessors, false));
  ASSIGN_OR_RETURN(const std::vector<temporal::SupersessionRow> successors,
                   supersessions.Successors(id));
  ASSIGN_OR_RETURN(record.superseded_by, Links(versions, successors, true));
  return absl::OkStatus();
}

template <typename T, typename At>
void KeepUntil(std::vector<T>& rows, int64_t t, At at) {
  std::erase_if(rows, [&](const T& row) { return at(row) > t; });
}

// Cuts `r` back to what was believed at `t` (transaction time): the versions, forgets,
// aliases and links recorded by then, the last version still believed when a later event
// ended it, and last_event_at the latest event kept. False when nothing of it was recorded
// by then.
bool BelievedAt(MemoryRecord& r, int64_t t) {
  KeepUntil(r.versions, t, [](const Version& v) { return v.recorded_at_unix_ms; });
  if (r.versions.empty()) return false;
  KeepUntil(r.retractions, t, [](const temporal::RetractionRow& row) { return row.at_unix_ms; });
  KeepUntil(r.aliases, t, [](const AliasRecord& a) { return a.created_at_unix_ms; });
  KeepUntil(r.supersedes, t, [](const LinkRecord& l) { return l.at_unix_ms; });
  KeepUntil(r.superseded_by, t, [](const LinkRecord& l) { return l.at_unix_ms; });
  std::optional<int64_t>& end = r.versions.back().superseded_at_unix_ms;
  if (end && *end > t) end.reset();
  int64_t latest = r.versions.back().recorded_at_unix_ms;
  if (!r.retractions.empty()) latest = std::max(latest, r.retractions.back().at_unix_ms);
  for (const auto* links : {&r.supersedes, &r.superseded_by}) {
    for (const LinkRecord& link : *links) latest = std::max(latest, link.at_unix_ms);
  }
  if (r.last_event_at_unix_ms > t) r.last_event_at_unix_ms = latest;
  return true;
}

bool InScope(const Identity& identity, const temporal::Scope& scope) {
  return (!scope.workspace || identity.workspace == *scope.workspace) &&
         (!scope.category || identity.category == *scope.category);
}

}  // namespace

absl::StatusOr<ExportSummary> Export(store::Db& db, int schema_version,
                                     const ExportOptions& options, std::ostream& out) {
  const temporal::Scope scope{.workspace = options.workspace, .category = options.category};
  const std::optional<int64_t> as_of = options.as_of_unix_ms;
  ASSIGN_OR_RETURN(store::ReadSnapshot snapshot, store::ReadSnapshot::Begin(db));
  temporal::VersionTable versions(&db);
  temporal::SupersessionTable supersessions(&db);
  dedup::DedupIndex dedup_index(&db);
  temporal::ScannedIdentity scanned;
  MemoryRecord record;

  Header header{.strata_version = kVersion,
                .schema_version = schema_version,
                .scope = scope,
                .as_of_unix_ms = as_of};
  if (!as_of) {
    ASSIGN_OR_RETURN(const temporal::ScopeCounts counts, versions.Count(scope));
    header.counts = {.memories = counts.memories,
                     .versions = counts.versions,
                     .retractions = counts.retractions};
    ASSIGN_OR_RETURN(header.counts.aliases, dedup_index.CountAliases(scope));
    ASSIGN_OR_RETURN(header.counts.supersessions, supersessions.CountTouching(scope));
  } else {
    // What was believed then is not what the tables count now: a first pass counts it.
    ASSIGN_OR_RETURN(temporal::IdentityScan scan, temporal::IdentityScan::Start(db, scope));
    while (true) {
      ASSIGN_OR_RETURN(const bool more, scan.Next(scanned));
      if (!more) break;
      RETURN_IF_ERROR(Load(scanned, versions, supersessions, dedup_index, record));
      if (!BelievedAt(record, *as_of)) continue;
      Counts& c = header.counts;
      ++c.memories;
      c.versions += static_cast<int64_t>(record.versions.size());
      c.retractions += static_cast<int64_t>(record.retractions.size());
      c.aliases += static_cast<int64_t>(record.aliases.size());
      // Each link once: on its successor's line, or on the predecessor's when the successor
      // is outside the scope.
      c.supersessions += static_cast<int64_t>(record.supersedes.size());
      for (const LinkRecord& link : record.superseded_by) {
        if (!InScope(link.other, scope)) ++c.supersessions;
      }
    }
  }
  std::string buffer;
  RETURN_IF_ERROR(AppendHeader(header, buffer));

  // The progress callback is called about this often.
  constexpr int64_t kProgressStep = 1024;
  ExportSummary summary;
  ASSIGN_OR_RETURN(temporal::IdentityScan scan, temporal::IdentityScan::Start(db, scope));
  while (true) {
    ASSIGN_OR_RETURN(const bool more, scan.Next(scanned));
    if (!more) break;
    RETURN_IF_ERROR(Load(scanned, versions, supersessions, dedup_index, record));
    if (as_of && !BelievedAt(record, *as_of)) continue;
    RETURN_IF_ERROR(AppendRecord(record, buffer));
    ++summary.memories;
    summary.versions += static_cast<int64_t>(record.versions.size());
    if (buffer.size() >= kFlushBytes) RETURN_IF_ERROR(Flush(buffer, out));
    if (options.progress && summary.memories % kProgressStep == 0) {
      options.progress(summary.memories, header.counts.memories);
    }
  }
  RETURN_IF_ERROR(Flush(buffer, out));
  out.flush();
  if (!out) return absl::UnavailableError("export: cannot write the output");
  if (options.progress) options.progress(summary.memories, header.counts.memories);
  return summary;
}

}  // namespace strata::transfer
