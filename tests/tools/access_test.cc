// tools::WorkspaceAccess, and a restricted caller through the registry: every workspace a tool
// reads or writes is checked before the store is, so the refusal is the same whether or not
// the memory exists (the e2e test tests/e2e/test_http.py covers every tool over HTTP).

#include "tools/access.h"

#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strata/strata.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"
#include "tools/registry.h"

namespace strata::tools {
namespace {

using ::nlohmann::json;
using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

TEST(WorkspaceAccessTest, EveryOrAList) {
  const WorkspaceAccess every;
  EXPECT_TRUE(every.unrestricted());
  EXPECT_TRUE(every.Allows("anything"));
  EXPECT_THAT(every.Check("workspace", "x"), IsOk());
  EXPECT_THAT(every.CheckUnrestricted("stats"), IsOk());

  const WorkspaceAccess some({"a", ""});
  EXPECT_FALSE(some.unrestricted());
  EXPECT_TRUE(some.Allows("a"));
  EXPECT_TRUE(some.Allows(""));
  EXPECT_FALSE(some.Allows("b"));
  EXPECT_FALSE(some.Allows("A"));
  EXPECT_THAT(some.Check("supersedes.workspace", "b"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("supersedes.workspace: this token may not use workspace \"b\"")));
  EXPECT_THAT(some.CheckUnrestricted("stats"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("stats")));

  const WorkspaceAccess none(std::vector<std::string>{});
  EXPECT_FALSE(none.Allows(""));
}

class RestrictedCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Store>> store =
        Store::Open({.path = dir_.File("memory.db"), .embedder = "none"});
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    registry_ = std::make_unique<ToolRegistry>(store_.get(), RegistryOptions{});
  }

  absl::StatusOr<json> Call(const std::string& name, const json& args,
                            const WorkspaceAccess* access) {
    return registry_->Call(*registry_->Find(name), args, {}, access);
  }

  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ToolRegistry> registry_;
};

TEST_F(RestrictedCallTest, AnotherWorkspaceIsRefusedAliveOrAbsent) {
  ASSERT_THAT(Call("remember", {{"category", "c"}, {"key", "k"}, {"body", "b"}, {"workspace", "b"}},
                   nullptr),
              IsOk());
  const WorkspaceAccess team_a({"a"});
  const absl::StatusOr<json> there =
      Call("get", {{"category", "c"}, {"key", "k"}, {"workspace", "b"}}, &team_a);
  const absl::StatusOr<json> absent =
      Call("get", {{"category", "c"}, {"key", "nothing"}, {"workspace", "b"}}, &team_a);
  EXPECT_THAT(there, StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("\"b\"")));
  EXPECT_EQ(there.status(), absent.status());
  // The Perseus Vault argument name is checked as its canonical twin.
  EXPECT_THAT(Call("perseus_vault_history",
                   {{"category", "c"}, {"key", "k"}, {"workspace_hash", "b"}}, &team_a)
                  .status(),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("\"b\"")));
  // Its own workspace, and recall scoped to it.
  EXPECT_THAT(Call("remember", {{"category", "c"}, {"key", "k"}, {"body", "b"}, {"workspace", "a"}},
                   &team_a),
              IsOk());
  absl::StatusOr<json> found = Call("recall", {{"query", "b"}}, &team_a);
  ASSERT_THAT(found, IsOk());
  ASSERT_EQ((*found)["items"].size(), 1u) << found->dump();
  EXPECT_EQ((*found)["items"][0]["workspace"], "a");
  // Unrestricted callers are unchanged.
  absl::StatusOr<json> all = Call("recall", {{"query", "b"}}, nullptr);
  ASSERT_THAT(all, IsOk());
  EXPECT_EQ((*all)["items"].size(), 2u);
}

}  // namespace
}  // namespace strata::tools
