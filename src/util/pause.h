#pragma once
// Waiting in a background thread that may be asked to stop.

#include <chrono>
#include <stop_token>

namespace strata::util {

// Waits `duration`, or less when a stop is requested meanwhile; returns false once one is.
bool PauseUnlessStopped(std::stop_token stop, std::chrono::milliseconds duration);

}  // namespace strata::util
