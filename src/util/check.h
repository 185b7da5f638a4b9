#pragma once
// STRATA_DCHECK(condition): states an invariant of our own code, as SQLite's assert() does: a
// header's REQUIRES, an order a caller promised, a size two structures share. Never a check of
// input: bad input is an InvalidArgument status.
//
// Checked where NDEBUG is not defined (meson's b_ndebug=false: the debug, sanitizer and fuzz
// builds), where a false condition logs "file:line: check failed: condition" (util/log.h) and
// aborts. The release build (b_ndebug=if-release) compiles the condition but never evaluates
// it, so it may be as slow as it needs to be.

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "util/log.h"

namespace strata::internal {

[[noreturn]] inline void DcheckFailed(const char* condition, const char* file, int line) {
  Log(LogLevel::kError, absl::StrCat(file, ":", line, ": check failed: ", condition));
  std::abort();
}

}  // namespace strata::internal

#ifdef NDEBUG
#define STRATA_DCHECK(condition)             \
  do {                                       \
    if (false) static_cast<void>(condition); \
  } while (false)
#else
#define STRATA_DCHECK(condition)                                                        \
  do {                                                                                  \
    if (!(condition)) ::strata::internal::DcheckFailed(#condition, __FILE__, __LINE__); \
  } while (false)
#endif
