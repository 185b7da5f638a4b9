#pragma once
// IdMap: values by integer id, for ids that may be dense (a query of common terms reads every
// version's postings) or sparse (a rare term's few versions).

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace strata::util {

// Values by int64 id. Told the ids' range and about how many there will be, it keeps those in
// the range in a vector over it when they fill a quarter of it or more, and the others (or
// all, when they are sparse) in a hash map: at 100,000 versions a query of common terms kept
// ~100,000 entries in each of its hash maps, where nearly every lookup missed the cache. Any
// id may be used whatever the range said. `kNone` marks a vector's slot without a value (a
// flag beside each would double an 8-byte value's slot): it is never a value.
template <typename T, T kNone>
class IdMap {
 public:
  IdMap() = default;
  // For about `count` ids in [low, high].
  IdMap(int64_t low, int64_t high, size_t count) : low_(low), high_(high) {
    if (count == 0 || high < low) return;
    const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1;
    if (span <= kMaxDense && span <= uint64_t{4} * count) {
      dense_.assign(span, kNone);
    } else {
      hashed_.reserve(count);
    }
  }

  // The range it was told, for a map of other values by the same ids.
  int64_t low() const { return low_; }
  int64_t high() const { return high_; }

  // The value of `id`, or null.
  const T* Find(int64_t id) const {
    if (const T* slot = DenseSlot(id)) return *slot == kNone ? nullptr : slot;
    const auto it = hashed_.find(id);
    return it == hashed_.end() ? nullptr : &it->second;
  }

  // The value of `id`, set to `value` first when it had none; whether it was set.
  std::pair<T*, bool> TryEmplace(int64_t id, T value) {
    assert(value != kNone);
    if (T* slot = DenseSlot(id)) {
      const bool added = *slot == kNone;
      if (added) {
        *slot = std::move(value);
        ++dense_size_;
      }
      return {slot, added};
    }
    const auto [it, added] = hashed_.try_emplace(id, std::move(value));
    return {&it->second, added};
  }

  // Sets the value of `id`.
  void Set(int64_t id, T value) {
    assert(value != kNone);
    if (T* slot = DenseSlot(id)) {
      dense_size_ += *slot == kNone;
      *slot = std::move(value);
    } else {
      hashed_.insert_or_assign(id, std::move(value));
    }
  }

  size_t size() const { return dense_size_ + hashed_.size(); }

 private:
  // Larger ranges stay hashed: a vector over 2^24 ids of 8-byte values is 128 MiB.
  static constexpr uint64_t kMaxDense = uint64_t{1} << 24;

  T* DenseSlot(int64_t id) { return const_cast<T*>(std::as_const(*this).DenseSlot(id)); }
  const T* DenseSlot(int64_t id) const {
    if (dense_.empty() || id < low_) return nullptr;
    const uint64_t at = static_cast<uint64_t>(id) - static_cast<uint64_t>(low_);
    return at < dense_.size() ? &dense_[at] : nullptr;
  }

  int64_t low_ = 0, high_ = -1;
  std::vector<T> dense_;  // By id - low_, kNone where none; empty when all are hashed.
  size_t dense_size_ = 0;
  absl::flat_hash_map<int64_t, T> hashed_;
};

}  // namespace strata::util
