#include "embed/model_download.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <system_error>

#include "absl/strings/str_cat.h"

#if STRATA_HAVE_CURL
#include <curl/curl.h>
#endif

namespace strata::embed {

#if STRATA_HAVE_CURL
namespace {

struct CurlDeleter {
  void operator()(CURL* curl) const { curl_easy_cleanup(curl); }
};
struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// Where the body goes: appended to `file`, unless the server answered a Range request with
// the whole file (200), which then replaces what was there.
struct Sink {
  CURL* curl;       // Not owned; outlives this.
  std::FILE* file;  // Not owned; outlives this.
  long resume_from;
  bool started = false;
  bool write_failed = false;
};

size_t WriteBody(char* data, size_t size, size_t count, void* user) {
  Sink& sink = *static_cast<Sink*>(user);
  if (!sink.started) {
    sink.started = true;
    long code = 0;
    curl_easy_getinfo(sink.curl, CURLINFO_RESPONSE_CODE, &code);
    if (sink.resume_from > 0 && code == 200) {
      if (std::fflush(sink.file) != 0 || std::fseek(sink.file, 0, SEEK_SET) != 0) {
        sink.write_failed = true;
        return 0;
      }
    }
  }
  const size_t written = std::fwrite(data, size, count, sink.file);
  if (written != count) sink.write_failed = true;
  return written * size;
}

absl::Status HttpError(long code, const std::string& url) {
  const std::string message = absl::StrCat("HTTP ", code, " from ", url);
  if (code == 404) return absl::NotFoundError(message);
  if (code >= 400 && code < 500) return absl::FailedPreconditionError(message);
  return absl::UnavailableError(message);
}

}  // namespace

bool DownloadSupported() { return true; }

absl::Status DownloadTo(const std::string& url, const std::filesystem::path& dest,
                        int stall_timeout_seconds) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::error_code ec;
  const uintmax_t have =
      std::filesystem::exists(dest, ec) ? std::filesystem::file_size(dest, ec) : 0;
  // "r+" keeps the bytes already there and lets a restart write from 0; "w" creates.
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(dest.c_str(), have > 0 ? "r+b" : "wb"));
  if (!file || std::fseek(file.get(), 0, SEEK_END) != 0) {
    return absl::DataLossError(absl::StrCat("cannot write ", dest.string()));
  }
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return absl::InternalError("curl_easy_init failed");
  Sink sink{.curl = curl.get(), .file = file.get(), .resume_from = static_cast<long>(have)};
  char error[CURL_ERROR_SIZE] = {};
  const long timeout = stall_timeout_seconds;
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl.get(), CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, timeout);
  // A stall, not a slow link, ends a download: less than 1 byte/s for `timeout` seconds.
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_LOW_SPEED_TIME, timeout);
  curl_easy_setopt(curl.get(), CURLOPT_USERAGENT, "strata-model-fetch");
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &sink);
  // A Range header of our own, not CURLOPT_RESUME_FROM: that one fails on a server that
  // answers with the whole file, which WriteBody takes as a restart.
  const std::string range = absl::StrCat(have, "-");
  if (have > 0) curl_easy_setopt(curl.get(), CURLOPT_RANGE, range.c_str());
  const CURLcode result = curl_easy_perform(curl.get());
  long code = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &code);
  if (sink.write_failed || std::fflush(file.get()) != 0) {
    return absl::DataLossError(absl::StrCat("cannot write ", dest.string()));
  }
  // A 200 that replaced a partial file may be shorter than what was there.
  if (sink.started && have > 0 && code == 200) {
    const long end = std::ftell(file.get());
    file.reset();
    std::filesystem::resize_file(dest, static_cast<uintmax_t>(end), ec);
    if (ec) return absl::DataLossError(absl::StrCat("cannot write ", dest.string()));
  }
  if (result == CURLE_HTTP_RETURNED_ERROR) {
    if (code == 416 && have > 0) return absl::OkStatus();
    return HttpError(code, url);
  }
  if (result == CURLE_OPERATION_TIMEDOUT) {
    return absl::UnavailableError(
        absl::StrCat(url, ": timed out (no data for ", stall_timeout_seconds, " s)"));
  }
  if (result != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat(url, ": ", *error ? error : curl_easy_strerror(result)));
  }
  if (code != 200 && code != 206) return HttpError(code, url);
  return absl::OkStatus();
}

#else

bool DownloadSupported() { return false; }

absl::Status DownloadTo(const std::string& url, const std::filesystem::path&, int) {
  return absl::UnimplementedError(
      absl::StrCat("cannot download ", url,
                   ": strata was built without libcurl (libcurl4-openssl-dev); download the "
                   "files by hand and use `strata model import NAME DIR`"));
}

#endif

}  // namespace strata::embed
