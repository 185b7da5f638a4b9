#include "util/hash.h"

namespace strata {

uint64_t Fnv1a64(std::string_view bytes, uint64_t state) {
  uint64_t h = state;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace strata
