#pragma once
// The XDG base directories a user's files go under.

#include <filesystem>

namespace strata {

// $`variable` when set and not empty, else $HOME/`home_relative`, else ./`home_relative`:
// XdgBaseDir("XDG_DATA_HOME", ".local/share"), XdgBaseDir("XDG_CACHE_HOME", ".cache").
std::filesystem::path XdgBaseDir(const char* variable, const char* home_relative);

}  // namespace strata
