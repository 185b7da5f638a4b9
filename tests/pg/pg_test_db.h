#pragma once
// A fresh database for each test, on the cluster tests/pg/with_cluster started.

#include <string>

namespace strata::pg::testing {

// Creates a new, empty database on the cluster STRATA_TEST_PG_URI names and returns its URI
// (it goes with the cluster). Fails the test (and returns "") when the variable is unset.
std::string FreshDatabaseUri();

}  // namespace strata::pg::testing
