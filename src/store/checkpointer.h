#pragma once
// Moves the WAL into the database file on a background thread, so that no write waits for
// a checkpoint's fsyncs.

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "store/db.h"

namespace strata::store {

// Owns one thread with its own connection. The writer's connection has automatic
// checkpoints turned off (see Attach) and reports the WAL's size after each commit; when it
// passes `wal_pages_threshold` pages, the thread runs a PASSIVE checkpoint, which never blocks
// the writer. A PASSIVE checkpoint cannot make the WAL start over while the writer keeps
// appending, so when the WAL passes 4x the threshold the writer itself runs a RESTART
// checkpoint after its commit (most pages are already copied by then; it first waits for a
// checkpoint the thread may be running): the WAL stays bounded under any write rate. On destruction
// the thread stops after a final TRUNCATE checkpoint. Thread safety: Attach and the destructor from
// the owning thread; the WAL hook from the writer's thread; internal state guarded by mu_.
class Checkpointer {
 public:
  static absl::StatusOr<std::unique_ptr<Checkpointer>> Start(const std::string& path,
                                                             const DbOptions& options,
                                                             int wal_pages_threshold);
  ~Checkpointer();

  // Turns off `writer`'s automatic checkpoints and routes its commits here.
  // REQUIRES: `writer` outlives this Checkpointer's use of it (until destruction).
  absl::Status Attach(SqliteDb& writer);

  // The number of checkpoints run so far by the thread, and by the writer (for tests).
  int64_t checkpoints() const;
  int64_t restarts() const;

 private:
  Checkpointer(std::unique_ptr<SqliteDb> db, int wal_pages_threshold);
  void OnCommit(SqliteDb& writer, int wal_pages);
  void Run(std::stop_token stop);

  std::unique_ptr<SqliteDb> db_;  // Used only by thread_ (and by the destructor after it stops).
  const int wal_pages_threshold_;
  mutable absl::Mutex mu_;
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool restart_pending_ ABSL_GUARDED_BY(mu_) = false;  // The writer is restarting the WAL.
  bool thread_idle_ ABSL_GUARDED_BY(mu_) = true;       // The thread is not checkpointing.
  int64_t checkpoints_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t restarts_ ABSL_GUARDED_BY(mu_) = 0;
  std::jthread thread_;  // Last: starts after the members it uses exist.
};

}  // namespace strata::store
