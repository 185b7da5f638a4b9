#pragma once
// The time source of a Store (StoreOptions::clock): an embedding program passes its own to
// control the recorded times of writes, as strata's tests do.

#include <cstdint>

namespace strata {

// Thread safety: implementations must be safe to call from any thread (the store's
// background threads read it too).
class Clock {
 public:
  virtual ~Clock() = default;
  // Current time in unix milliseconds.
  virtual int64_t NowUnixMs() const = 0;
};

}  // namespace strata
