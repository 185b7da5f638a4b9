#pragma once
// One line of a strata export: the header, or one memory with everything stored of it.
// The format is documented field by field in README.md ("Export and import").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "strata/strata.h"
#include "temporal/version_table.h"

namespace strata::transfer {

inline constexpr char kFormat[] = "strata-export";
inline constexpr int64_t kFormatVersion = 1;

// Rows in the exported scope. A supersession counts once, though both memories' lines
// name it.
struct Counts {
  int64_t memories = 0;
  int64_t versions = 0;
  int64_t retractions = 0;
  int64_t aliases = 0;
  int64_t supersessions = 0;
};

// The first line.
struct Header {
  int64_t format_version = kFormatVersion;
  std::string strata_version;
  int64_t schema_version = 0;
  temporal::Scope scope;
  std::optional<int64_t> as_of_unix_ms;  // Exported as believed then (`--as-of`).
  Counts counts;
};

// An identity merged into the memory on write.
struct AliasRecord {
  Identity identity;
  double similarity = 0;
  int64_t created_at_unix_ms = 0;
  bool operator==(const AliasRecord&) const = default;
};

// One end of a supersession (`supersedes` correction), named by identity, not by id.
struct LinkRecord {
  Identity other;
  int64_t at_unix_ms = 0;          // When the correction was recorded.
  int64_t valid_from_unix_ms = 0;  // The successor's valid_from.
};

// Every row stored of one identity, derived state (index entries, vectors, body hashes)
// excepted. Versions carry no memory_id or identity of their own (those of the record).
struct MemoryRecord {
  int64_t id = 0;  // The memory id in the exporting store.
  Identity identity;
  int64_t created_at_unix_ms = 0;
  int64_t last_event_at_unix_ms = 0;
  std::vector<Version> versions;  // Oldest first: version 1, 2, ...
  std::vector<temporal::RetractionRow> retractions;
  std::vector<AliasRecord> aliases;
  std::vector<LinkRecord> supersedes;     // Memories this one superseded.
  std::vector<LinkRecord> superseded_by;  // Memories that superseded this one.
};

// Append the header or a record as one JSON line, '\n' included, keys in a fixed order.
// Errors: DataLoss when a stored text is not valid UTF-8 (JSON cannot carry it).
absl::Status AppendHeader(const Header& header, std::string& out);
absl::Status AppendRecord(const MemoryRecord& record, std::string& out);

// Parse one line (without its '\n'). Errors: InvalidArgument saying what is wrong and, for
// a field, which (`versions[1].valid_from: expected an integer, got string`).
absl::StatusOr<Header> ParseHeader(std::string_view line);
absl::StatusOr<MemoryRecord> ParseRecord(std::string_view line);

}  // namespace strata::transfer
