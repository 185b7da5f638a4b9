// util/helper_thread.h: tasks run on one thread of the helper's, in the order handed, their
// results come back through the futures, and ending the helper runs what was handed first.

#include "util/helper_thread.h"

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace strata::util {
namespace {

TEST(HelperThreadTest, RunsEachTaskOnOneThreadOfItsOwnInTheOrderHanded) {
  HelperThread helper;
  std::vector<std::future<std::thread::id>> ran;
  std::vector<int> order;  // Written by the helper's thread only, read after every task.
  for (int i = 0; i < 20; ++i) {
    ran.push_back(helper.Run([&order, i] {
      order.push_back(i);
      return std::this_thread::get_id();
    }));
  }
  std::vector<std::thread::id> threads;
  for (std::future<std::thread::id>& f : ran) threads.push_back(f.get());
  for (const std::thread::id id : threads) {
    EXPECT_EQ(id, threads.front());
    EXPECT_NE(id, std::this_thread::get_id());
  }
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
}

TEST(HelperThreadTest, ResultsComeBackWhateverTheirType) {
  HelperThread helper;
  std::future<std::string> text = helper.Run([] { return std::string("beside"); });
  std::future<std::vector<int>> list = helper.Run([] { return std::vector<int>{1, 2, 3}; });
  EXPECT_EQ(text.get(), "beside");
  EXPECT_EQ(list.get(), (std::vector<int>{1, 2, 3}));
}

// The destructor runs what was handed before it ends the thread: a task handed and never
// waited for still runs.
TEST(HelperThreadTest, EndingRunsWhatWasHanded) {
  absl::Notification release;
  int done = 0;
  {
    HelperThread helper;
    (void)helper.Run([&release] { release.WaitForNotification(); });
    for (int i = 0; i < 5; ++i) (void)helper.Run([&done] { ++done; });
    release.Notify();
  }
  EXPECT_EQ(done, 5);
}

}  // namespace
}  // namespace strata::util
