#pragma once
// A temporary directory removed with everything in it when the object dies, and the whole
// contents of a file read or written at once.

#include <filesystem>
#include <string>

namespace strata::testing {

// Thread safety: none needed; owned by one test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // A path inside the directory, e.g. File("memory.db").
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The bytes of the file at `path` ("" when it cannot be read).
std::string ReadAll(const std::string& path);
// Replaces the file at `path` with `bytes`.
void WriteAll(const std::string& path, const std::string& bytes);

}  // namespace strata::testing
