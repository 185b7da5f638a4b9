#include "dedup/band_map.h"

#include "util/check.h"
#include "util/hash.h"

namespace strata::dedup {
namespace {

constexpr size_t kMinSlots = 1024;

}  // namespace

uint64_t BandMap::Fingerprint(int64_t key) {
  const uint64_t fp = Mix64(static_cast<uint64_t>(key)) >> 32;
  return fp == 0 ? 1 : fp;  // 0 marks an empty slot.
}

// From the fingerprint alone, so that a deletion can tell where a stored entry belongs.
size_t BandMap::Home(uint64_t fp) const { return Mix64(fp) & mask_; }

void BandMap::Insert(int64_t key, int64_t memory_id) {
  STRATA_DCHECK(0 < memory_id && memory_id <= kMaxMemoryId);
  // At most 80% full: linear probing's runs stay short.
  if ((size_ + 1) * 5 > slots_.size() * 4) Grow();
  const uint64_t entry = Fingerprint(key) << 32 | static_cast<uint64_t>(memory_id);
  for (size_t i = Home(entry >> 32);; i = (i + 1) & mask_) {
    if (slots_[i] == entry) return;
    if (slots_[i] == 0) {
      slots_[i] = entry;
      ++size_;
      return;
    }
  }
}

void BandMap::Erase(int64_t key, int64_t memory_id) {
  if (slots_.empty()) return;
  const uint64_t entry = Fingerprint(key) << 32 | static_cast<uint64_t>(memory_id);
  size_t hole = Home(entry >> 32);
  while (slots_[hole] != entry) {
    if (slots_[hole] == 0) return;
    hole = (hole + 1) & mask_;
  }
  // Backward-shift deletion: each later entry of the run that may sit in the hole (its home
  // is not cyclically in (hole, j]) moves there, and its slot becomes the hole.
  for (size_t j = (hole + 1) & mask_; slots_[j] != 0; j = (j + 1) & mask_) {
    const size_t home = Home(slots_[j] >> 32);
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = 0;
  --size_;
}

void BandMap::Clear() {
  slots_.clear();
  slots_.shrink_to_fit();
  mask_ = 0;
  size_ = 0;
}

void BandMap::Grow() {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(old.empty() ? kMinSlots : old.size() * 2, 0);
  mask_ = slots_.size() - 1;
  for (uint64_t entry : old) {
    if (entry == 0) continue;
    size_t i = Home(entry >> 32);
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = entry;
  }
}

}  // namespace strata::dedup
