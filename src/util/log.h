#pragma once
// The library's side of strata/log.h: modules report through Log, never to stderr.

#include <string_view>

#include "strata/log.h"

namespace strata {

// Passes `message` to the process's sink (stderr, "strata: <message>", by default).
// Thread safety: safe from any thread.
void Log(LogLevel level, std::string_view message);

}  // namespace strata
