#pragma once
// The band keys of every current memory, in memory: which memories a band key belongs to.
// A write looks up its keys here instead of in a B-tree whose random pages each key would
// dirty (dedup/index.h keeps the table it is loaded from).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::dedup {

// A multimap from band key to memory id, 8 bytes an entry: open addressing with linear
// probing over slots holding a 32-bit fingerprint of the key and the 32-bit memory id. Two
// keys with one fingerprint are one key here: lookups can answer a memory that does not hold
// the key (about 2^-32 of the entries per key looked up), so callers verify what it answers.
// Thread safety: none; callers serialize.
class BandMap {
 public:
  // The largest memory id an entry holds.
  static constexpr int64_t kMaxMemoryId = 0xffffffff;

  // Adds (key, memory_id) unless present. REQUIRES: 0 < memory_id <= kMaxMemoryId.
  void Insert(int64_t key, int64_t memory_id);
  // Removes (key, memory_id) if present.
  void Erase(int64_t key, int64_t memory_id);
  // Calls f(memory_id) for every memory entered under `key`'s fingerprint.
  template <typename F>
  void ForEach(int64_t key, F f) const {
    if (slots_.empty()) return;
    const uint64_t fp = Fingerprint(key);
    for (size_t i = Home(fp);; i = (i + 1) & mask_) {
      const uint64_t slot = slots_[i];
      if (slot == 0) return;
      if (slot >> 32 == fp) f(static_cast<int64_t>(slot & 0xffffffff));
    }
  }
  void Clear();
  size_t size() const { return size_; }
  size_t bytes() const { return slots_.size() * sizeof(uint64_t); }

 private:
  static uint64_t Fingerprint(int64_t key);
  size_t Home(uint64_t fp) const;
  void Grow();

  std::vector<uint64_t> slots_;  // 0: empty; else fingerprint << 32 | memory id.
  size_t mask_ = 0;              // slots_.size() - 1; the size is a power of two.
  size_t size_ = 0;
};

}  // namespace strata::dedup
