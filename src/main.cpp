// strata: parses the command line and starts the server (see server/cli.h).

#include "allocator.h"
#include "server/cli.h"

int main(int argc, char** argv) {
  strata::ConfigureAllocator();
  return strata::server::Main(argc, argv);
}
