#include "testing/temp_dir.h"

#include <cstdlib>
#include <system_error>

namespace strata::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "strata-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace strata::testing
