#pragma once
// The bounds on what one tool call may carry, in one table. Each is generous enough that no
// honest agent meets it and tight enough that hostile input cannot make a call expensive;
// docs/decisions.md ("Limits") says why each number. A call over a bound fails with a message
// naming the argument, the bound and the value ("key: at most 1024 bytes, got 5000").
//
// Bounds of the protocol layer live with their flags: the line size (--max-line-bytes, 8 MiB,
// server/stdio_loop.h), the JSON nesting depth (64) and the JSON-RPC batch size (1000)
// (mcp::DispatcherOptions).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "strata/strata.h"

namespace strata::tools {

// Strings, in bytes of UTF-8. A memory's own fields (category, key, workspace, type, tags, the
// body as a JSON text) are bounded by the public API (strata.h); these are the calls' others.
inline constexpr size_t kMaxSourceBytes = 4096;
inline constexpr size_t kMaxReasonBytes = 16 * 1024;
inline constexpr size_t kMaxQueryBytes = 16 * 1024;
// Any other string argument (mode, ...).
inline constexpr size_t kMaxOtherStringBytes = 4096;

// Counts.
inline constexpr size_t kMaxBatchItems = 10000;  // Memories in one remember_batch.

// The ranges of `limit` and `offset` of recall and history are the public API's
// (kMaxRecallLimit, kMaxHistoryLimit, ...).

// The byte bound of a string argument (of each item, for a list such as `tags`), by name.
constexpr size_t MaxStringBytes(std::string_view argument) {
  constexpr struct {
    std::string_view argument;
    size_t max_bytes;
  } kStringLimits[] = {
      {"category", kMaxCategoryBytes}, {"batch_category", kMaxCategoryBytes},
      {"key", kMaxKeyBytes},           {"workspace", kMaxWorkspaceBytes},
      {"type", kMaxTypeBytes},         {"tags", kMaxTagBytes},
      {"source", kMaxSourceBytes},     {"reason", kMaxReasonBytes},
      {"query", kMaxQueryBytes},
  };
  for (const auto& limit : kStringLimits) {
    if (limit.argument == argument) return limit.max_bytes;
  }
  return kMaxOtherStringBytes;
}

}  // namespace strata::tools
