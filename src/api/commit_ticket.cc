// CommitTicket: how a call's writes left in a group transaction ended (strata.h).

#include "strata/strata.h"

namespace strata {

absl::Status CommitTicket::Wait() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* pending) { return *pending == 0; }, &pending_));
  return status_;
}

bool CommitTicket::joined() const {
  absl::MutexLock lock(&mu_);
  return joined_ > 0;
}

void CommitTicket::Join() {
  absl::MutexLock lock(&mu_);
  ++joined_;
  ++pending_;
}

void CommitTicket::Resolve(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  if (status_.ok()) status_ = status;
  --pending_;
}

}  // namespace strata
