// util/log.h and strata/log.h: messages reach the sink set last, with their level; a null
// sink drops them.

#include "util/log.h"

#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Captures what the library logs while it lives; restores the previous sink after.
class CapturedLog {
 public:
  CapturedLog()
      : previous_(SetLogSink([this](LogLevel level, std::string_view message) {
          lines_.emplace_back(level, std::string(message));
        })) {}
  ~CapturedLog() { SetLogSink(std::move(previous_)); }
  const std::vector<std::pair<LogLevel, std::string>>& lines() const { return lines_; }

 private:
  std::vector<std::pair<LogLevel, std::string>> lines_;
  LogSink previous_;
};

TEST(Log, MessagesGoToTheSinkWithTheirLevel) {
  CapturedLog log;
  Log(LogLevel::kWarning, "could not save the vector index: disk full");
  Log(LogLevel::kInfo, "rebuilding");
  EXPECT_THAT(log.lines(),
              ElementsAre(Pair(LogLevel::kWarning, "could not save the vector index: disk full"),
                          Pair(LogLevel::kInfo, "rebuilding")));
}

TEST(Log, ANullSinkDropsMessages) {
  LogSink previous = SetLogSink(nullptr);
  Log(LogLevel::kError, "dropped");  // Must not crash.
  EXPECT_FALSE(SetLogSink(std::move(previous)));
}

TEST(Log, TheDefaultSinkIsInPlace) {
  // No test replaced it for good: the one set at start is still there to restore.
  LogSink current = SetLogSink(nullptr);
  EXPECT_TRUE(current);
  SetLogSink(std::move(current));
}

TEST(Log, LevelsHaveNames) {
  EXPECT_STREQ(LogLevelName(LogLevel::kInfo), "info");
  EXPECT_STREQ(LogLevelName(LogLevel::kWarning), "warning");
  EXPECT_STREQ(LogLevelName(LogLevel::kError), "error");
}

}  // namespace
}  // namespace strata
