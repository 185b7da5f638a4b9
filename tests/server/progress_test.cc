// The progress line's text: count, percent of a known total, rate and ETA once some time has
// passed; drawn in place on a terminal, as plain lines at an interval elsewhere.

#include "server/progress.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::server {
namespace {

TEST(ProgressText, CountAndPercentOfAKnownTotal) {
  EXPECT_EQ(ProgressText("exported", 250, 1000, 100), "exported 250/1000 (25%)");
}

TEST(ProgressText, RateAndEtaOnceTimeHasPassed) {
  EXPECT_EQ(ProgressText("imported", 3000, 12000, 1000),
            "imported 3000/12000 (25%), 3000/s, ETA 3s");
  EXPECT_EQ(ProgressText("imported", 100, 20000, 1000),
            "imported 100/20000 (0%), 100/s, ETA 3m19s");
}

TEST(ProgressText, NoEtaWithoutATotalOrOnceDone) {
  EXPECT_EQ(ProgressText("embedded", 500, 0, 2000), "embedded 500, 250/s");
  EXPECT_EQ(ProgressText("embedded", 500, 500, 2000), "embedded 500/500 (100%), 250/s");
}

TEST(ProgressLine, DisabledDrawsNothing) {
  ::testing::internal::CaptureStderr();
  {
    ProgressLine line("exported", ProgressStyle::kNone);
    line.Update(1, 2);
    line.Finish();
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(ProgressLine, EnabledDrawsInPlaceAndErasesAtTheEnd) {
  ::testing::internal::CaptureStderr();
  {
    ProgressLine line("exported", ProgressStyle::kInPlace);
    line.Update(1, 4);
  }
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(out.starts_with("\rexported 1/4 (25%)")) << out;
  EXPECT_TRUE(out.ends_with("\033[K\r\033[K")) << out;
}

TEST(ProgressLine, PlainLinesOncePerIntervalAndNothingToErase) {
  ::testing::internal::CaptureStderr();
  {
    ProgressLine line("imported", ProgressStyle::kLines, std::chrono::milliseconds(0));
    line.Update(1, 4);
    line.Update(2, 4);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "imported 1/4 (25%)\nimported 2/4 (50%)\n");
}

TEST(ProgressLine, NoPlainLineBeforeTheFirstInterval) {
  ::testing::internal::CaptureStderr();
  {
    ProgressLine line("imported", ProgressStyle::kLines, std::chrono::hours(1));
    line.Update(1, 4);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace strata::server
