#include "util/clock.h"

#include <chrono>

namespace strata {

int64_t SystemClock::NowUnixMs() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

const SystemClock* SystemClock::Get() {
  static const SystemClock* const kClock = new SystemClock();
  return kClock;
}

}  // namespace strata
