#pragma once
// `strata doctor`: checks a store and prints, for people, one line per check.

#include <string>

namespace strata::server {

struct DoctorOptions {
  std::string db_path;    // The SQLite file, checked when store_uri is empty.
  std::string store_uri;  // A PostgreSQL URI (postgresql://...), checked instead when given.
  std::string embedder;   // The embedder whose backlog and index are reported (StoreOptions).
};

// Prints "ok", "warning" or "error", the check's name and what it found, a line per check,
// to stdout. Returns the exit code: 0 when no check found an error, 1 otherwise. Changes
// nothing in the store: a SQLite file of an older schema is reported, not migrated.
int RunDoctor(const DoctorOptions& options);

}  // namespace strata::server
