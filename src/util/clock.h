#pragma once
// Time sources. Modules take a Clock (strata/clock.h, public: an embedding program may pass
// one) so tests can drive time deterministically.

#include <atomic>
#include <cstdint>

#include "strata/clock.h"

namespace strata {

// The wall clock (CLOCK_REALTIME). Stateless.
class SystemClock final : public Clock {
 public:
  int64_t NowUnixMs() const override;
  // A process-wide instance; never destroyed.
  static const SystemClock* Get();
};

// A clock that moves only when told. Thread safety: atomic; safe from any thread.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now_unix_ms) : now_(now_unix_ms) {}
  int64_t NowUnixMs() const override { return now_.load(); }
  void Set(int64_t now_unix_ms) { now_.store(now_unix_ms); }
  void Advance(int64_t delta_ms) { now_.fetch_add(delta_ms); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace strata
