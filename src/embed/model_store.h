#pragma once
// Installed models: $XDG_CACHE_HOME/strata/models/NAME (else ~/.cache/strata/models/NAME),
// one sentence-transformers directory per manifest card. A model is assembled in
// NAME.partial/ and renamed to NAME only when every file is whole and checked, so an
// installed directory is never written in place: a server reading one never sees a half
// model, and an interrupted fetch leaves only NAME.partial/ to resume from.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "embed/model_manifest.h"

namespace strata::embed {

// $XDG_CACHE_HOME/strata/models, else $HOME/.cache/strata/models, else ./.cache/...
std::filesystem::path ModelCacheDir();

// cache_dir/name when it is installed. Errors: NotFound saying how to install it.
absl::StatusOr<std::filesystem::path> InstalledModelDir(const std::filesystem::path& cache_dir,
                                                        std::string_view name);

// What an install wrote: the directory and each file's size and SHA-256 as computed.
struct InstallReport {
  std::filesystem::path dir;
  std::vector<ModelFile> files;
};

struct FetchOptions {
  std::string endpoint;  // The hub's base URL, e.g. "http://127.0.0.1:8080".
  std::filesystem::path cache_dir;
  int stall_timeout_seconds = 30;
  int attempts = 3;  // Per file; a cut or stalled attempt resumes where it stopped.
  // Installs a card that is not confirmed (nothing recorded to check the bytes against).
  bool allow_unconfirmed = false;
  std::function<void(std::string_view)> log;  // One line per step; may be empty.
};

// Downloads every file of `card` from options.endpoint/<repository>/resolve/<revision>/<path>
// and installs the model. Errors: FailedPrecondition (already installed, another install of
// it running, an unconfirmed card without allow_unconfirmed), DataLoss (a size or digest
// that does not match: the file is removed, nothing installed), the download's errors
// (NotFound for a 404, Unavailable, Unimplemented without libcurl).
absl::StatusOr<InstallReport> FetchModel(const ModelCard& card, const FetchOptions& options);

// Installs the files of `card` from `source_dir` (laid out as the repository is), checked
// as FetchModel checks them. Errors: as FetchModel's, NotFound for a missing file.
absl::StatusOr<InstallReport> ImportModel(const ModelCard& card,
                                          const std::filesystem::path& source_dir,
                                          const std::filesystem::path& cache_dir,
                                          bool allow_unconfirmed);

// The file at `path` against `file`'s recorded size and digest (those recorded), with the
// size and digest computed. Errors: NotFound, DataLoss naming the file and both values.
absl::StatusOr<ModelFile> CheckModelFile(const std::filesystem::path& path, const ModelFile& file);

struct VerifyReport {
  std::filesystem::path dir;
  int dimension = 0;
  std::optional<double> known_answer_cosine;  // Absent when the card records no vector.
};

// Checks an installed model: every file against the card, then the model itself (loaded by
// the bert embedder) on kKnownAnswerInput: its dimension, and the cosine with the card's
// known-answer vector. Errors: NotFound (not installed), DataLoss (a file, the dimension or a
// cosine below 0.9999), the embedder's errors.
absl::StatusOr<VerifyReport> VerifyModel(const ModelCard& card,
                                         const std::filesystem::path& cache_dir);

}  // namespace strata::embed
