#pragma once
// One file over HTTP(S) for `strata model fetch`, through libcurl when strata was built with
// it (Debian's libcurl4-openssl-dev, an optional dependency).

#include <filesystem>
#include <string>

#include "absl/status/status.h"

namespace strata::embed {

// False when strata was built without libcurl: DownloadTo then always fails.
bool DownloadSupported();

// Fetches `url` into `dest`, continuing after the bytes `dest` already holds (a Range
// request; a server that ignores it restarts the file), following redirects. Gives up when
// no byte arrives for `stall_timeout_seconds`. A 416 to a Range request means `dest` is
// already whole. Errors: NotFound (404), FailedPrecondition (another 4xx), Unavailable (no
// connection, a stall, a cut, a 5xx: worth retrying), Unimplemented (no libcurl), DataLoss
// (dest cannot be written).
absl::Status DownloadTo(const std::string& url, const std::filesystem::path& dest,
                        int stall_timeout_seconds);

}  // namespace strata::embed
