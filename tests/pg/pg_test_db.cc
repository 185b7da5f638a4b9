#include "pg/pg_test_db.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "pg/connection.h"

namespace strata::pg::testing {

std::string FreshDatabaseUri() {
  const char* base = std::getenv("STRATA_TEST_PG_URI");
  if (base == nullptr || *base == '\0') {
    ADD_FAILURE() << "STRATA_TEST_PG_URI is unset: run through tests/pg/with_cluster";
    return "";
  }
  static int counter = 0;
  // A parameterized test's name has a '/'; PostgreSQL cuts names at 63 bytes. The process id
  // keeps apart a death test's child, which runs the test again from its start.
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : test) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  const std::string name = absl::StrCat("t", getpid(), "_", ++counter, "_", test.substr(0, 40));
  auto admin = Connection::Open(base);
  EXPECT_TRUE(admin.ok()) << admin.status();
  if (!admin.ok()) return "";
  EXPECT_TRUE((*admin)->Exec(absl::StrCat("CREATE DATABASE \"", name, "\"")).ok());
  // A query parameter overrides the URI's path: the same server, the new database.
  return absl::StrCat(base, "&dbname=", name);
}

}  // namespace strata::pg::testing
