#pragma once
// IdMap: values by integer id, for ids that may be dense (a query of common terms reads every
// version's postings) or sparse (a rare term's few versions).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace strata::util {

// Values by int64 id. Told the ids' range and about how many there will be, it keeps those in
// the range in a vector over it when they fill a quarter of it or more, and the others (or
// all, when they are sparse) in a hash map: at 100,000 versions a query of common terms kept
// ~100,000 entries in each of its hash maps, where nearly every lookup missed the cache. Any
// id may be used whatever the range said.
template <typename T>
class IdMap {
 public:
  IdMap() = default;
  // For about `count` ids in [low, high].
  IdMap(int64_t low, int64_t high, size_t count) {
    if (count == 0 || high < low) return;
    const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1;
    if (span <= kMaxDense && span <= uint64_t{4} * count) {
      low_ = low;
      dense_.resize(span);
    } else {
      hashed_.reserve(count);
    }
  }

  // The value of `id`, or null.
  const T* Find(int64_t id) const {
    if (const std::optional<T>* slot = DenseSlot(id)) return slot->has_value() ? &**slot : nullptr;
    const auto it = hashed_.find(id);
    return it == hashed_.end() ? nullptr : &it->second;
  }

  // The value of `id`, set to `value` first when it had none; whether it was set.
  std::pair<T*, bool> TryEmplace(int64_t id, T value) {
    if (std::optional<T>* slot = DenseSlot(id)) {
      const bool added = !slot->has_value();
      if (added) {
        slot->emplace(std::move(value));
        ++dense_size_;
      }
      return {&**slot, added};
    }
    const auto [it, added] = hashed_.try_emplace(id, std::move(value));
    return {&it->second, added};
  }

  // Sets the value of `id`.
  void Set(int64_t id, T value) { *TryEmplace(id, value).first = std::move(value); }

  size_t size() const { return dense_size_ + hashed_.size(); }

 private:
  // Larger ranges stay hashed: a vector over 2^24 ids of 8-byte values is 256 MiB.
  static constexpr uint64_t kMaxDense = uint64_t{1} << 24;

  std::optional<T>* DenseSlot(int64_t id) {
    return const_cast<std::optional<T>*>(std::as_const(*this).DenseSlot(id));
  }
  const std::optional<T>* DenseSlot(int64_t id) const {
    if (dense_.empty() || id < low_) return nullptr;
    const uint64_t at = static_cast<uint64_t>(id) - static_cast<uint64_t>(low_);
    return at < dense_.size() ? &dense_[at] : nullptr;
  }

  int64_t low_ = 0;
  std::vector<std::optional<T>> dense_;  // By id - low_; empty when all are hashed.
  size_t dense_size_ = 0;
  absl::flat_hash_map<int64_t, T> hashed_;
};

}  // namespace strata::util
