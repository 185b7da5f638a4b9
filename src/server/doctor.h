#pragma once
// `strata doctor`: checks a store and prints, for people, one line per check.

#include <string>

namespace strata::server {

struct DoctorOptions {
  std::string path;      // The SQLite file, or a PostgreSQL URI (StoreOptions::path).
  std::string embedder;  // The embedder whose backlog and index are reported (StoreOptions).
};

// Prints "ok", "warning" or "error", the check's name and what it found, a line per check,
// to stdout. Returns the exit code: 0 when no check found an error, 1 otherwise. Repairs and
// migrates nothing: a SQLite file is opened read-only for the integrity and schema checks,
// and through Store::Open (as any command opens it) only when its schema is this build's.
int RunDoctor(const DoctorOptions& options);

}  // namespace strata::server
