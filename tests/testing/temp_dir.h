#pragma once
// A temporary directory removed with everything in it when the object dies.

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

}  // namespace strata::testing
