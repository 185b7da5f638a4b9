#pragma once
// The batching every import shares: records in transactions of options.batch_lines, a bad
// record reported and then skipped or stopping the import, the summary kept as batches commit.

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/db.h"
#include "strata/strata.h"
#include "util/status_macros.h"

namespace strata::transfer {

// What writing one record did.
enum class Outcome { kCreated, kUnchanged, kUpdated };

// A record read from the input, or why it is bad, and where it starts.
template <typename Record>
struct Numbered {
  SourceLine at;
  absl::StatusOr<Record> record;
};

// Whether a record's failure is the record's own (it wrote nothing; the import may go on).
inline bool IsRecordError(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s);
}

// Writes what `read(max)` returns (a std::vector<Numbered<Record>> of at most max records,
// empty at the end), each through `apply(const Record&)` -> absl::StatusOr<Outcome>, a batch
// per transaction; `summary` holds what came before (its `expected`, say). A record error
// (IsRecordError) from apply must have written nothing. `finish()` -> absl::Status runs
// before each batch commits, while its records live (for what is written once per batch).
// Any other error ends the import, its batch rolled back. REQUIRES: `db` is not in a
// transaction.
template <typename Record, typename Read, typename Apply, typename Finish>
absl::StatusOr<ImportSummary> WriteInBatches(store::Db& db, const ImportOptions& options,
                                             ImportSummary summary, Read read, Apply apply,
                                             Finish finish) {
  const int64_t batch_size = std::max<int64_t>(1, options.batch_lines);
  while (true) {
    std::vector<Numbered<Record>> batch = read(batch_size);
    if (batch.empty()) break;
    ImportSummary done;  // This batch's, added once it commits.
    ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(db));
    for (Numbered<Record>& item : batch) {
      ++summary.read;
      absl::Status error = item.record.status();
      if (error.ok()) {
        absl::StatusOr<Outcome> outcome = apply(*item.record);
        if (outcome.ok()) {
          ++(*outcome == Outcome::kCreated     ? done.created
             : *outcome == Outcome::kUnchanged ? done.unchanged
                                               : done.updated);
          continue;
        }
        if (!IsRecordError(outcome.status())) return outcome.status();
        error = outcome.status();
      }
      ++summary.failed;
      if (options.on_error) options.on_error(item.at, error);
      if (options.stop_on_error) {
        summary.stopped = true;
        return summary;  // The batch rolls back with txn.
      }
    }
    RETURN_IF_ERROR(finish());
    RETURN_IF_ERROR(txn.Commit());
    summary.created += done.created;
    summary.unchanged += done.unchanged;
    summary.updated += done.updated;
    if (options.progress) options.progress(summary);
  }
  return summary;
}

// The same with nothing to finish.
template <typename Record, typename Read, typename Apply>
absl::StatusOr<ImportSummary> WriteInBatches(store::Db& db, const ImportOptions& options,
                                             ImportSummary summary, Read read, Apply apply) {
  return WriteInBatches<Record>(db, options, summary, read, apply, [] { return absl::OkStatus(); });
}

}  // namespace strata::transfer
