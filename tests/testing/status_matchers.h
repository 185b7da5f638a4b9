#pragma once
// GoogleTest helpers for absl::Status and absl::StatusOr.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace strata::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

// EXPECT_THAT(F(), IsOk());
MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status: " << s;
  return s.ok();
}

// EXPECT_THAT(F(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")));
MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status: " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}

// EXPECT_THAT(F(), IsOkAndHolds(Eq(3)));
MATCHER_P(IsOkAndHolds, matcher, "") {
  if (!arg.ok()) {
    *result_listener << "status: " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(matcher, *arg, result_listener);
}

}  // namespace strata::testing

// Asserts that a StatusOr is OK and binds its value: ASSERT_OK_AND_ASSIGN(auto v, F());
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(STRATA_TEST_CONCAT_(statusor_, __LINE__), lhs, expr)
#define STRATA_TEST_CONCAT_INNER_(a, b) a##b
#define STRATA_TEST_CONCAT_(a, b) STRATA_TEST_CONCAT_INNER_(a, b)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  ASSERT_TRUE(tmp.ok()) << tmp.status();           \
  lhs = std::move(tmp).value()

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::strata::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::strata::testing::IsOk())
