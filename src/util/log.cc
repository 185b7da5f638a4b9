#include "util/log.h"

#include <cstdio>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace strata {
namespace {

void WriteToStderr(LogLevel, std::string_view message) {
  std::fprintf(stderr, "strata: %.*s\n", static_cast<int>(message.size()), message.data());
}

// The process's sink. Never destroyed: background threads may log while the process exits.
struct SinkSlot {
  absl::Mutex mu;
  LogSink sink ABSL_GUARDED_BY(mu) = WriteToStderr;
};
SinkSlot& Slot() {
  static SinkSlot* const slot = new SinkSlot();
  return *slot;
}

}  // namespace

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "unknown";
}

LogSink SetLogSink(LogSink sink) {
  SinkSlot& slot = Slot();
  absl::MutexLock lock(&slot.mu);
  return std::exchange(slot.sink, std::move(sink));
}

void Log(LogLevel level, std::string_view message) {
  SinkSlot& slot = Slot();
  absl::MutexLock lock(&slot.mu);
  if (slot.sink) slot.sink(level, message);
}

}  // namespace strata
