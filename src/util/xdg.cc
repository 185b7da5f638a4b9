#include "util/xdg.h"

#include <cstdlib>

namespace strata {

std::filesystem::path XdgBaseDir(const char* variable, const char* home_relative) {
  if (const char* dir = std::getenv(variable); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::filesystem::path(home) / home_relative;
  }
  return home_relative;
}

}  // namespace strata
