// ConfigureAllocator (src/allocator.h) in a program linked with mimalloc as strata's are: the
// decommit delay becomes 1000 ms, unless MIMALLOC_DECOMMIT_DELAY set one (meson registers
// this test twice, once with it set).

#include <mimalloc.h>

#include <cstdlib>

#include "allocator.h"
#include "gtest/gtest.h"

namespace strata {
namespace {

TEST(AllocatorTest, DecommitDelayIsASecondUnlessTheEnvironmentSetsOne) {
  const char* set = std::getenv("MIMALLOC_DECOMMIT_DELAY");
  const long expected = set != nullptr ? std::atol(set) : 1000;
  if (set == nullptr) {
    // Else the call below would be seen to work without doing anything.
    ASSERT_NE(mi_option_get(mi_option_decommit_delay), 1000) << "mimalloc's default is 1 s";
  }
  ConfigureAllocator();
  EXPECT_EQ(mi_option_get(mi_option_decommit_delay), expected);
}

}  // namespace
}  // namespace strata
