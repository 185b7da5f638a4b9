#pragma once
// SHA-256 (FIPS 180-4), for checking downloaded files against their published digests.

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace strata {

// Thread safety: none; one owner feeds it.
class Sha256 {
 public:
  Sha256();
  void Update(std::string_view bytes);
  // The digest as 64 lowercase hex digits. Ends the object's use: call it once.
  std::string HexDigest();

 private:
  void Block(const unsigned char* block);

  std::array<uint32_t, 8> state_;
  std::array<unsigned char, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// The SHA-256 of `bytes` in hex.
std::string Sha256Hex(std::string_view bytes);

// The SHA-256 of the file at `path` in hex, read in chunks. Errors: NotFound when it cannot be
// opened, DataLoss when a read fails.
absl::StatusOr<std::string> Sha256File(const std::filesystem::path& path);

}  // namespace strata
