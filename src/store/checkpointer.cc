#include "store/checkpointer.h"

#include "absl/strings/str_cat.h"
#include "util/log.h"
#include "util/status_macros.h"

namespace strata::store {
namespace {

// The least time between two checkpoints.
constexpr absl::Duration kPause = absl::Milliseconds(250);

}  // namespace

absl::StatusOr<std::unique_ptr<Checkpointer>> Checkpointer::Start(const std::string& path,
                                                                  const DbOptions& options,
                                                                  int wal_pages_threshold) {
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, Db::Open(path, options));
  return std::unique_ptr<Checkpointer>(new Checkpointer(std::move(db), wal_pages_threshold));
}

Checkpointer::Checkpointer(std::unique_ptr<SqliteDb> db, int wal_pages_threshold)
    : db_(std::move(db)),
      wal_pages_threshold_(wal_pages_threshold),
      thread_([this](std::stop_token stop) { Run(stop); }) {}

Checkpointer::~Checkpointer() {
  thread_.request_stop();
  {
    absl::MutexLock lock(&mu_);
    wanted_ = true;  // Wakes the thread so it sees the stop request.
    stopping_ = true;
  }
  thread_.join();
  // Leave a self-contained database file behind on a clean exit.
  absl::Status s = db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)");
  if (!s.ok()) Log(LogLevel::kError, absl::StrCat("final checkpoint: ", s.message()));
}

absl::Status Checkpointer::Attach(SqliteDb& writer) {
  RETURN_IF_ERROR(writer.Exec("PRAGMA wal_autocheckpoint = 0"));
  SqliteDb* writer_db = &writer;
  writer.SetWalHook([this, writer_db](int wal_pages) { OnCommit(*writer_db, wal_pages); });
  return absl::OkStatus();
}

int64_t Checkpointer::checkpoints() const {
  absl::MutexLock lock(&mu_);
  return checkpoints_;
}

int64_t Checkpointer::restarts() const {
  absl::MutexLock lock(&mu_);
  return restarts_;
}

void Checkpointer::OnCommit(SqliteDb& writer, int wal_pages) {
  if (wal_pages < wal_pages_threshold_) return;
  if (wal_pages >= 4 * wal_pages_threshold_) {
    {
      // SQLite runs one checkpoint at a time and answers BUSY to a second at once, so keep
      // the thread from starting one and wait for the one it may be running.
      absl::MutexLock lock(&mu_);
      restart_pending_ = true;
      mu_.Await(absl::Condition(&thread_idle_));
    }
    // The commit is durable already; a failure here (another process's checkpoint) only
    // leaves the WAL longer until the next commit.
    absl::Status s = writer.CheckpointRestart();
    absl::MutexLock lock(&mu_);
    restart_pending_ = false;
    if (s.ok()) ++restarts_;
    return;
  }
  absl::MutexLock lock(&mu_);
  wanted_ = true;
}

void Checkpointer::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&wanted_), absl::Seconds(5));
      wanted_ = false;
      if (restart_pending_) continue;  // The writer is restarting the WAL itself.
      thread_idle_ = false;
    }
    if (stop.stop_requested()) {
      absl::MutexLock lock(&mu_);
      thread_idle_ = true;
      break;
    }
    // PASSIVE copies what it can without waiting for readers or the writer; a busy database
    // is simply tried again on the next wake-up.
    absl::Status s = db_->Exec("PRAGMA wal_checkpoint(PASSIVE)");
    absl::MutexLock lock(&mu_);
    thread_idle_ = true;
    if (s.ok()) ++checkpoints_;
    // Until the writer's next transaction restarts the WAL, every commit reports it over the
    // threshold; pausing here keeps checkpoints (and their fsyncs) to a few a second.
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), kPause);
    wanted_ = false;
  }
}

}  // namespace strata::store
