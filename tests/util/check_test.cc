// util/check.h: a false STRATA_DCHECK aborts naming the condition where NDEBUG is not defined;
// in release builds the condition is not even evaluated.

#include "util/check.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(Dcheck, FalseConditionAbortsNamingItInDebugBuilds) {
  EXPECT_DEBUG_DEATH(STRATA_DCHECK(1 + 1 == 3), "check failed: 1 \\+ 1 == 3");
}

TEST(Dcheck, ConditionIsEvaluatedOnlyInDebugBuilds) {
  int evaluated = 0;
  STRATA_DCHECK(++evaluated == 1);
#ifdef NDEBUG
  EXPECT_EQ(evaluated, 0);
#else
  EXPECT_EQ(evaluated, 1);
#endif
}

}  // namespace
}  // namespace strata
