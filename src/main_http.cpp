// strata-http: strata with the HTTP transport linked in; `strata serve --http` runs it
// (server/cli.h).

#include "allocator.h"
#include "http/server.h"
#include "server/cli.h"

int main(int argc, char** argv) {
  strata::ConfigureAllocator();
  return strata::server::Main(argc, argv, strata::http::ServeHttp);
}
