#include "transfer/exporter.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "dedup/index.h"
#include "store/schema.h"
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

}  // namespace

absl::StatusOr<ExportSummary> Export(store::Db& db, const ExportOptions& options,
                                     std::ostream& out) {
  const temporal::Scope scope{.workspace = options.workspace, .category = options.category};
  ASSIGN_OR_RETURN(store::ReadSnapshot snapshot, store::ReadSnapshot::Begin(db));
  temporal::VersionTable versions(&db);
  temporal::SupersessionTable supersessions(&db);
  dedup::DedupIndex dedup_index(&db);

  Header header{.strata_version = kVersion, .scope = scope};
  ASSIGN_OR_RETURN(header.schema_version, store::SchemaVersion(db));
  ASSIGN_OR_RETURN(const temporal::ScopeCounts counts, versions.Count(scope));
  header.counts = {
      .memories = counts.memories, .versions = counts.versions, .retractions = counts.retractions};
  ASSIGN_OR_RETURN(header.counts.aliases, dedup_index.CountAliases(scope));
  ASSIGN_OR_RETURN(header.counts.supersessions, supersessions.CountTouching(scope));
  std::string buffer;
  RETURN_IF_ERROR(AppendHeader(header, buffer));

  ExportSummary summary;
  ASSIGN_OR_RETURN(temporal::IdentityScan scan, temporal::IdentityScan::Start(db, scope));
  temporal::ScannedIdentity scanned;
  MemoryRecord record;
  while (true) {
    ASSIGN_OR_RETURN(const bool more, scan.Next(scanned));
    if (!more) break;
    const int64_t id = scanned.row.memory_id;
    record.id = id;
    record.identity = std::move(scanned.row.identity);
    record.created_at_unix_ms = scanned.created_at_unix_ms;
    record.last_event_at_unix_ms = scanned.row.last_event_at_unix_ms;
    record.versions.clear();
    for (temporal::VersionRow& v : scanned.versions)
      record.versions.push_back(std::move(v.version));
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
    RETURN_IF_ERROR(AppendRecord(record, buffer));
    ++summary.memories;
    summary.versions += static_cast<int64_t>(record.versions.size());
    if (buffer.size() >= kFlushBytes) RETURN_IF_ERROR(Flush(buffer, out));
  }
  RETURN_IF_ERROR(Flush(buffer, out));
  out.flush();
  if (!out) return absl::UnavailableError("export: cannot write the output");
  return summary;
}

}  // namespace strata::transfer
