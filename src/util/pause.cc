#include "util/pause.h"

#include <condition_variable>
#include <mutex>

namespace strata::util {

bool PauseUnlessStopped(std::stop_token stop, std::chrono::milliseconds duration) {
  // Nothing notifies `wake`: it ends at the deadline or at the stop request.
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  wake.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace strata::util
