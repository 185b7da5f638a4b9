#pragma once
// The command line: `strata [serve]` speaks MCP on stdio; remember, recall, history and stats
// are for people at a shell.

namespace strata::server {

// Runs the command named by argv and returns the process exit code.
int Main(int argc, char** argv);

}  // namespace strata::server
