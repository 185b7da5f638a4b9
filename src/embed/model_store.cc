#include "embed/model_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <span>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "embed/bert_embedder.h"
#include "embed/model_download.h"
#include "util/sha256.h"
#include "util/status_macros.h"
#include "util/sv.h"
#include "util/xdg.h"

namespace strata::embed {
namespace {

namespace fs = std::filesystem;

constexpr double kMinKnownAnswerCosine = 0.9999;

// An exclusive flock on cache_dir/.NAME.lock for the length of one install.
class InstallLock {
 public:
  static absl::StatusOr<InstallLock> Take(const fs::path& cache_dir, const std::string& name) {
    const fs::path path = cache_dir / absl::StrCat(".", name, ".lock");
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return absl::FailedPreconditionError(absl::StrCat("cannot open ", path.string()));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat("another install of ", name, " is running"));
    }
    return InstallLock(fd);
  }
  InstallLock(InstallLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  InstallLock& operator=(InstallLock&&) = delete;
  ~InstallLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  explicit InstallLock(int fd) : fd_(fd) {}
  int fd_;
};

// Puts one file of the card at `dest` (inside NAME.partial/), from the hub or a directory.
using ObtainFile = std::function<absl::Status(const ModelFile& file, const fs::path& dest)>;

// What FetchModel and ImportModel share: the refusals, the lock, NAME.partial/, each file
// obtained and checked (a bad one removed), and the rename that installs the whole.
absl::StatusOr<InstallReport> Install(const ModelCard& card, const fs::path& cache_dir,
                                      bool allow_unconfirmed, const ObtainFile& obtain) {
  if (!card.confirmed && !allow_unconfirmed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model ", card.name,
        ": its manifest entry is unconfirmed (no pinned revision, sizes or SHA-256 digests "
        "checked by a maintainer), so the files cannot be verified; pass --allow-unconfirmed "
        "to install them anyway"));
  }
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create ", cache_dir.string()));
  ASSIGN_OR_RETURN(InstallLock lock, InstallLock::Take(cache_dir, card.name));
  const fs::path final_dir = cache_dir / card.name;
  if (fs::exists(final_dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("model ", card.name, " is already installed in ", final_dir.string(),
                     " (strata model verify ", card.name,
                     " checks it; remove the directory to install it again)"));
  }
  const fs::path partial = cache_dir / absl::StrCat(card.name, ".partial");
  InstallReport report{.dir = final_dir};
  for (const ModelFile& file : card.files) {
    const fs::path dest = partial / file.path;
    fs::create_directories(dest.parent_path(), ec);
    if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create ", dest.string()));
    RETURN_IF_ERROR(obtain(file, dest));
    absl::StatusOr<ModelFile> checked = CheckModelFile(dest, file);
    if (!checked.ok()) {
      // A file of the wrong bytes is no start for a resumed download.
      if (checked.status().code() == absl::StatusCode::kDataLoss) fs::remove(dest, ec);
      return checked.status();
    }
    report.files.push_back(std::move(*checked));
  }
  fs::rename(partial, final_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat("cannot rename ", partial.string(), " to ",
                                                      final_dir.string(), ": ", ec.message()));
  }
  return report;
}

std::string FileUrl(const FetchOptions& options, const ModelCard& card, const ModelFile& file) {
  std::string endpoint = options.endpoint;
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return absl::StrCat(endpoint, "/", card.repository, "/resolve/", card.revision, "/", file.path);
}

}  // namespace

fs::path ModelCacheDir() { return XdgBaseDir("XDG_CACHE_HOME", ".cache") / "strata" / "models"; }

absl::StatusOr<fs::path> InstalledModelDir(const fs::path& cache_dir, std::string_view name) {
  const fs::path dir = cache_dir / fs::path(name);
  std::error_code ec;
  // NAME.partial/ is an install in progress, never a model.
  if (name.empty() || name.find('/') != std::string_view::npos ||
      absl::EndsWith(ToAbsl(name), ".partial") || !fs::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(
        "model ", ToAbsl(name), " is not installed in ", cache_dir.string(),
        " (strata model fetch ", ToAbsl(name), ", or strata model import ", ToAbsl(name), " DIR)"));
  }
  return dir;
}

absl::StatusOr<ModelFile> CheckModelFile(const fs::path& path, const ModelFile& file) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(path.string(), ": no such file"));
  if (file.size >= 0 && size != static_cast<uintmax_t>(file.size)) {
    return absl::DataLossError(
        absl::StrCat(file.path, ": ", size, " bytes, the manifest says ", file.size));
  }
  ASSIGN_OR_RETURN(std::string digest, Sha256File(path));
  if (!file.sha256.empty() && digest != file.sha256) {
    return absl::DataLossError(
        absl::StrCat(file.path, ": SHA-256 ", digest, ", the manifest says ", file.sha256));
  }
  return ModelFile{.path = file.path, .size = static_cast<int64_t>(size), .sha256 = digest};
}

absl::StatusOr<InstallReport> FetchModel(const ModelCard& card, const FetchOptions& options) {
  const auto log = [&options](const std::string& line) {
    if (options.log) options.log(line);
  };
  return Install(card, options.cache_dir, options.allow_unconfirmed,
                 [&](const ModelFile& file, const fs::path& dest) -> absl::Status {
                   std::error_code ec;
                   // Bytes from an earlier attempt: resumed, unless they cannot be a start of the
                   // file.
                   if (fs::exists(dest, ec) && file.size >= 0) {
                     const uintmax_t have = fs::file_size(dest, ec);
                     if (have == static_cast<uintmax_t>(file.size)) return absl::OkStatus();
                     if (have > static_cast<uintmax_t>(file.size)) fs::remove(dest, ec);
                   }
                   const std::string url = FileUrl(options, card, file);
                   absl::Status status;
                   for (int attempt = 1; attempt <= std::max(1, options.attempts); ++attempt) {
                     log(absl::StrCat("fetching ", file.path, attempt > 1 ? " (resuming)" : ""));
                     status = DownloadTo(url, dest, options.stall_timeout_seconds);
                     if (status.ok() || status.code() != absl::StatusCode::kUnavailable) break;
                     log(absl::StrCat(status.message()));
                   }
                   return status;
                 });
}

absl::StatusOr<InstallReport> ImportModel(const ModelCard& card, const fs::path& source_dir,
                                          const fs::path& cache_dir, bool allow_unconfirmed) {
  return Install(card, cache_dir, allow_unconfirmed,
                 [&source_dir](const ModelFile& file, const fs::path& dest) -> absl::Status {
                   const fs::path source = source_dir / file.path;
                   std::error_code ec;
                   if (!fs::is_regular_file(source, ec)) {
                     return absl::NotFoundError(absl::StrCat(source.string(), ": no such file"));
                   }
                   fs::copy_file(source, dest, fs::copy_options::overwrite_existing, ec);
                   if (ec) {
                     return absl::DataLossError(
                         absl::StrCat("cannot copy ", source.string(), ": ", ec.message()));
                   }
                   return absl::OkStatus();
                 });
}

absl::StatusOr<VerifyReport> VerifyModel(const ModelCard& card, const fs::path& cache_dir) {
  ASSIGN_OR_RETURN(const fs::path dir, InstalledModelDir(cache_dir, card.name));
  for (const ModelFile& file : card.files) {
    RETURN_IF_ERROR(CheckModelFile(dir / file.path, file).status());
  }
  // In fp32: the known-answer vector is the reference implementation's.
  ASSIGN_OR_RETURN(std::unique_ptr<Embedder> embedder,
                   MakeBertEmbedder({{"dir", dir.string()}, {"int8", "0"}}));
  const std::string input(kKnownAnswerInput);
  ASSIGN_OR_RETURN(const std::vector<float> vector,
                   embedder->Embed(std::span<const std::string>(&input, 1), Role::kDocument));
  VerifyReport report{.dir = dir, .dimension = embedder->info().dimension};
  if (report.dimension != card.dimension || vector.size() != size_t(card.dimension)) {
    return absl::DataLossError(absl::StrCat("model ", card.name, ": dimension ", report.dimension,
                                            ", the manifest says ", card.dimension));
  }
  if (card.known_answer.empty()) return report;
  double dot = 0, norm_a = 0, norm_b = 0;
  for (size_t i = 0; i < vector.size(); ++i) {
    dot += double(vector[i]) * card.known_answer[i];
    norm_a += double(vector[i]) * vector[i];
    norm_b += double(card.known_answer[i]) * card.known_answer[i];
  }
  const double cosine = norm_a > 0 && norm_b > 0 ? dot / std::sqrt(norm_a * norm_b) : 0;
  report.known_answer_cosine = cosine;
  if (!(cosine >= kMinKnownAnswerCosine)) {
    return absl::DataLossError(absl::StrCat("model ", card.name, ": cosine ", cosine,
                                            " with the known-answer vector, below ",
                                            kMinKnownAnswerCosine));
  }
  return report;
}

}  // namespace strata::embed
