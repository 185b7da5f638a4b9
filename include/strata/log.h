#pragma once
// Where libstrata's messages go: the few things it reports that are not an error of a call
// (a background save that failed, an index rebuilt at start, a failed checkpoint at close).
// By default each is written to stderr as one line, "strata: <message>"; a program that
// embeds strata may route them elsewhere or drop them.

#include <functional>
#include <string_view>

namespace strata {

enum class LogLevel {
  kInfo,     // Worth knowing; nothing is wrong (an index rebuilt at start).
  kWarning,  // Something failed and was worked around (an index not saved: rebuilt later).
  kError,    // Something failed that the program cannot work around (a corrupt build).
};
const char* LogLevelName(LogLevel level);  // "info", "warning", "error".

// Receives one message: a line of text without its newline.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// Sends every later message of the process to `sink`; a null sink drops them. Returns the
// previous sink (never null until a null sink is set), so a caller can restore it.
// Thread safety: safe from any thread. The sink is called from the library's threads (the
// background embedder, a Store's destructor), one message at a time under a lock: it must
// return quickly and must not call SetLogSink or libstrata.
LogSink SetLogSink(LogSink sink);

}  // namespace strata
