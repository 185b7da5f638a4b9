#pragma once

// A SQLite VFS that writes a transaction's WAL frames with one pwrite instead of two per
// frame. It wraps the platform's default VFS and changes nothing else: the files it writes are
// byte for byte what the default VFS writes, so any SQLite (the sqlite3 shell, another
// process on the default VFS) reads and writes the same database alongside.
//
// SQLite appends each frame as a 24-byte header and a page, two writes at consecutive
// offsets. The VFS gathers consecutive writes to a WAL file in memory and hands them to the
// real file as one write:
// - when the page of a commit frame (a header with a nonzero database size) has been
//   appended, so the commit's write fails, and the transaction with it, if the file system
//   refuses the bytes; a commit returns only after its frames are in the file (a process
//   killed after a commit loses nothing of it, as with the default VFS);
// - before anything that could observe the file: a read or size query of the WAL (SQLite
//   reads back frames of its own open transaction to rewrite checksums), a sync, a truncate,
//   a file control, a close, and any shared-memory lock, barrier or unmap on the database
//   (before the frames can be published to another connection);
// - when a write does not continue the gathered bytes, or they would pass kMaxGatheredBytes.
//
// Requires the shared-memory wal-index (the default): with locking_mode=EXCLUSIVE SQLite
// keeps the index in heap memory and calls no barrier, and only the rules above that do not
// depend on the barrier apply.

namespace strata::store {

// The VFS's name, registered on first use; pass it to sqlite3_open_v2.
const char* CoalescingWalVfs();

}  // namespace strata::store
