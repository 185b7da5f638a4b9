#include "embed/model_download.h"

#include <cstdio>
#include <memory>
#include <string>
#include <type_traits>
#include <system_error>

#include "absl/strings/str_cat.h"

#if STRATA_HAVE_CURL
#include <curl/curl.h>
#include <dlfcn.h>
#endif

namespace strata::embed {

#if STRATA_HAVE_CURL
namespace {

// libcurl, loaded when the first download starts rather than linked: linked, it and the 30
// libraries it needs (TLS, Kerberos, LDAP, ...) were loaded by every start of the server,
// which never downloads, and cost its cold start milliseconds.
struct Curl {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  std::string error;  // Why it could not be loaded; empty when loaded.
};

const Curl& LoadCurl() {
  static const Curl curl = [] {
    Curl c;
    void* lib = nullptr;
    for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4"}) {
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (lib == nullptr) {
      const char* why = dlerror();
      c.error = absl::StrCat("cannot load libcurl (", why ? why : "libcurl.so.4: not found",
                             "); install Debian's libcurl4, or download the files by hand and "
                             "use `strata model import NAME DIR`");
      return c;
    }
    auto get = [lib, &c](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (fn == nullptr && c.error.empty()) {
        c.error = absl::StrCat("libcurl has no ", symbol);
      }
    };
    get(c.global_init, "curl_global_init");
    get(c.easy_init, "curl_easy_init");
    get(c.easy_cleanup, "curl_easy_cleanup");
    get(c.easy_setopt, "curl_easy_setopt");
    get(c.easy_getinfo, "curl_easy_getinfo");
    get(c.easy_perform, "curl_easy_perform");
    get(c.easy_strerror, "curl_easy_strerror");
    if (c.error.empty()) c.global_init(CURL_GLOBAL_DEFAULT);  // Once, before any handle.
    return c;
  }();
  return curl;
}

struct CurlDeleter {
  void operator()(CURL* curl) const { LoadCurl().easy_cleanup(curl); }
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
    LoadCurl().easy_getinfo(sink.curl, CURLINFO_RESPONSE_CODE, &code);
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

bool DownloadSupported() { return LoadCurl().error.empty(); }

absl::Status DownloadTo(const std::string& url, const std::filesystem::path& dest,
                        int stall_timeout_seconds) {
  const Curl& api = LoadCurl();
  if (!api.error.empty()) {
    return absl::UnimplementedError(absl::StrCat("cannot download ", url, ": ", api.error));
  }
  std::error_code ec;
  const uintmax_t have =
      std::filesystem::exists(dest, ec) ? std::filesystem::file_size(dest, ec) : 0;
  // "r+" keeps the bytes already there and lets a restart write from 0; "w" creates.
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(dest.c_str(), have > 0 ? "r+b" : "wb"));
  if (!file || std::fseek(file.get(), 0, SEEK_END) != 0) {
    return absl::DataLossError(absl::StrCat("cannot write ", dest.string()));
  }
  std::unique_ptr<CURL, CurlDeleter> curl(api.easy_init());
  if (!curl) return absl::InternalError("curl_easy_init failed");
  Sink sink{.curl = curl.get(), .file = file.get(), .resume_from = static_cast<long>(have)};
  char error[CURL_ERROR_SIZE] = {};
  const long timeout = stall_timeout_seconds;
  api.easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  api.easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error);
  api.easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 1L);
  api.easy_setopt(curl.get(), CURLOPT_MAXREDIRS, 10L);
  api.easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  api.easy_setopt(curl.get(), CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  api.easy_setopt(curl.get(), CURLOPT_FAILONERROR, 1L);
  api.easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT, timeout);
  // A stall, not a slow link, ends a download: less than 1 byte/s for `timeout` seconds.
  api.easy_setopt(curl.get(), CURLOPT_LOW_SPEED_LIMIT, 1L);
  api.easy_setopt(curl.get(), CURLOPT_LOW_SPEED_TIME, timeout);
  api.easy_setopt(curl.get(), CURLOPT_USERAGENT, "strata-model-fetch");
  api.easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, WriteBody);
  api.easy_setopt(curl.get(), CURLOPT_WRITEDATA, &sink);
  // A Range header of our own, not CURLOPT_RESUME_FROM: that one fails on a server that
  // answers with the whole file, which WriteBody takes as a restart.
  const std::string range = absl::StrCat(have, "-");
  if (have > 0) api.easy_setopt(curl.get(), CURLOPT_RANGE, range.c_str());
  const CURLcode result = api.easy_perform(curl.get());
  long code = 0;
  api.easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &code);
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
        absl::StrCat(url, ": ", *error ? error : api.easy_strerror(result)));
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
