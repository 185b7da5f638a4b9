#include "store/wal_vfs.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>

#include <sqlite3.h>

namespace strata::store {
namespace {

// SQLite's unix VFS writes at most 128 KiB - 1 bytes a call (it masks larger sizes, and a
// multiple of 128 KiB becomes a write of nothing, reported as a full disk).
constexpr size_t kMaxGatheredBytes = 120 * 1024;
// A WAL frame header: page number, database size after a commit (0 otherwise), salts,
// checksums (SQLite's file format, "The WAL File Format").
constexpr int kFrameHeaderBytes = 24;

sqlite3_vfs* RealVfs() {
  static sqlite3_vfs* const real = sqlite3_vfs_find(nullptr);
  return real;
}

// What SQLite allocates for each open file (szOsFile bytes): this, then the real VFS's file.
struct File {
  sqlite3_file base;  // First: SQLite sees a File as a sqlite3_file.
  bool is_wal = false;
  // A WAL's database file and a database's open WAL, each null when there is none.
  File* peer = nullptr;
  std::string gathered;
  sqlite3_int64 gathered_at = 0;
  // The gathered bytes end with a commit frame's header: its page completes the commit.
  bool commit_header_gathered = false;
  // SQLite rewrites a frame's header right after reading the frame back: such a write goes
  // straight through, as its read saw the file.
  sqlite3_int64 last_read_at = -1;
  // A flush that failed where nothing could report it; the next operation on the WAL does.
  int deferred_error = SQLITE_OK;

  static constexpr size_t RealOffset() {
    return (sizeof(File) + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) *
           alignof(std::max_align_t);
  }
  sqlite3_file* real() {
    return reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(this) + RealOffset());
  }
  const sqlite3_io_methods& io() { return *real()->pMethods; }

  int Flush() {
    if (gathered.empty()) return SQLITE_OK;
    const int rc =
        io().xWrite(real(), gathered.data(), static_cast<int>(gathered.size()), gathered_at);
    gathered.clear();
    commit_header_gathered = false;
    return rc;
  }
  // Before any operation that could observe the WAL file.
  int Settle() {
    last_read_at = -1;
    if (deferred_error != SQLITE_OK) {
      const int rc = deferred_error;
      deferred_error = SQLITE_OK;
      gathered.clear();
      return rc;
    }
    return Flush();
  }
  // The database's WAL, settled (for shared-memory operations on the database file).
  int SettleWal() { return peer != nullptr && !is_wal ? peer->Settle() : SQLITE_OK; }
};

File* Self(sqlite3_file* file) { return reinterpret_cast<File*>(file); }

bool IsCommitHeader(const void* bytes, int amount) {
  if (amount != kFrameHeaderBytes) return false;
  const auto* b = static_cast<const unsigned char*>(bytes);
  return (b[4] | b[5] | b[6] | b[7]) != 0;
}

int Close(sqlite3_file* file) {
  File* f = Self(file);
  int rc = f->is_wal ? f->Settle() : SQLITE_OK;
  if (f->peer != nullptr) f->peer->peer = nullptr;
  const int close_rc = f->io().xClose(f->real());
  f->~File();
  return rc != SQLITE_OK ? rc : close_rc;
}

int Read(sqlite3_file* file, void* out, int amount, sqlite3_int64 offset) {
  File* f = Self(file);
  if (f->is_wal) {
    if (int rc = f->Settle(); rc != SQLITE_OK) return rc;
    f->last_read_at = offset;
  }
  return f->io().xRead(f->real(), out, amount, offset);
}

int Write(sqlite3_file* file, const void* bytes, int amount, sqlite3_int64 offset) {
  File* f = Self(file);
  if (!f->is_wal) return f->io().xWrite(f->real(), bytes, amount, offset);
  const bool rewrite = offset == f->last_read_at;
  f->last_read_at = -1;
  if (f->deferred_error != SQLITE_OK) return f->Settle();
  const size_t size = static_cast<size_t>(amount);
  if (!f->gathered.empty() &&
      (rewrite || offset != f->gathered_at + static_cast<sqlite3_int64>(f->gathered.size()) ||
       f->gathered.size() + size > kMaxGatheredBytes)) {
    if (int rc = f->Flush(); rc != SQLITE_OK) return rc;
  }
  if (rewrite || size > kMaxGatheredBytes) return f->io().xWrite(f->real(), bytes, amount, offset);
  if (f->gathered.empty()) f->gathered_at = offset;
  f->gathered.append(static_cast<const char*>(bytes), size);
  if (IsCommitHeader(bytes, amount)) {
    f->commit_header_gathered = true;
    return SQLITE_OK;
  }
  return f->commit_header_gathered ? f->Flush() : SQLITE_OK;
}

int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  File* f = Self(file);
  if (int rc = f->is_wal ? f->Settle() : SQLITE_OK; rc != SQLITE_OK) return rc;
  return f->io().xTruncate(f->real(), size);
}

int Sync(sqlite3_file* file, int flags) {
  File* f = Self(file);
  if (int rc = f->is_wal ? f->Settle() : f->SettleWal(); rc != SQLITE_OK) return rc;
  return f->io().xSync(f->real(), flags);
}

int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  File* f = Self(file);
  if (int rc = f->is_wal ? f->Settle() : SQLITE_OK; rc != SQLITE_OK) return rc;
  return f->io().xFileSize(f->real(), size);
}

int Lock(sqlite3_file* file, int level) {
  return Self(file)->io().xLock(Self(file)->real(), level);
}
int Unlock(sqlite3_file* file, int level) {
  return Self(file)->io().xUnlock(Self(file)->real(), level);
}
int CheckReservedLock(sqlite3_file* file, int* out) {
  return Self(file)->io().xCheckReservedLock(Self(file)->real(), out);
}

int FileControl(sqlite3_file* file, int op, void* arg) {
  File* f = Self(file);
  if (int rc = f->is_wal ? f->Settle() : SQLITE_OK; rc != SQLITE_OK) return rc;
  return f->io().xFileControl(f->real(), op, arg);
}

int SectorSize(sqlite3_file* file) { return Self(file)->io().xSectorSize(Self(file)->real()); }
int DeviceCharacteristics(sqlite3_file* file) {
  return Self(file)->io().xDeviceCharacteristics(Self(file)->real());
}

int ShmMap(sqlite3_file* file, int page, int page_size, int extend, void volatile** out) {
  File* f = Self(file);
  if (f->io().iVersion < 2) return SQLITE_IOERR;
  return f->io().xShmMap(f->real(), page, page_size, extend, out);
}

int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  File* f = Self(file);
  if (f->io().iVersion < 2) return SQLITE_IOERR;
  if (int rc = f->SettleWal(); rc != SQLITE_OK) return rc;
  return f->io().xShmLock(f->real(), offset, n, flags);
}

void ShmBarrier(sqlite3_file* file) {
  File* f = Self(file);
  if (f->peer != nullptr && !f->is_wal) {
    if (int rc = f->peer->Flush(); rc != SQLITE_OK) f->peer->deferred_error = rc;
  }
  if (f->io().iVersion >= 2) f->io().xShmBarrier(f->real());
}

int ShmUnmap(sqlite3_file* file, int delete_flag) {
  File* f = Self(file);
  if (f->io().iVersion < 2) return SQLITE_IOERR;
  if (int rc = f->SettleWal(); rc != SQLITE_OK) return rc;
  return f->io().xShmUnmap(f->real(), delete_flag);
}

int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amount, void** out) {
  File* f = Self(file);
  if (f->io().iVersion < 3 || f->is_wal) {
    *out = nullptr;
    return SQLITE_OK;
  }
  return f->io().xFetch(f->real(), offset, amount, out);
}

int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* page) {
  File* f = Self(file);
  if (f->io().iVersion < 3 || f->is_wal) return SQLITE_OK;
  return f->io().xUnfetch(f->real(), offset, page);
}

const sqlite3_io_methods kMethods = {
    3,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    Fetch,
    Unfetch,
};

int Open(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  File* f = new (file) File();
  f->base.pMethods = nullptr;
  sqlite3_vfs* real = RealVfs();
  const int rc = real->xOpen(real, name, f->real(), flags, out_flags);
  if (rc != SQLITE_OK) {
    if (f->real()->pMethods != nullptr) f->io().xClose(f->real());
    f->~File();
    return rc;
  }
  if ((flags & SQLITE_OPEN_WAL) != 0 && name != nullptr) {
    f->is_wal = true;
    File* database = Self(sqlite3_database_file_object(name));
    f->peer = database;
    database->peer = f;
  }
  f->base.pMethods = &kMethods;
  return SQLITE_OK;
}

}  // namespace

const char* CoalescingWalVfs() {
  static const char* const name = [] {
    static sqlite3_vfs vfs = *RealVfs();
    vfs.zName = "strata-coalescing-wal";
    vfs.pNext = nullptr;
    vfs.szOsFile = static_cast<int>(File::RealOffset()) + RealVfs()->szOsFile;
    vfs.xOpen = Open;
    sqlite3_vfs_register(&vfs, /*makeDflt=*/0);
    return vfs.zName;
  }();
  return name;
}

}  // namespace strata::store
