#pragma once
// A read-only view of a .safetensors file: an 8-byte little-endian header length, a JSON
// header mapping each tensor name to {dtype, shape, data_offsets} (plus an optional
// "__metadata__" object of strings), then the tensors' bytes. The file is mmapped; F32
// tensors are read in place and F16/BF16 ones converted to fp32 when loaded.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace strata::embed::bert {

enum class Dtype { kBool, kU8, kI8, kI16, kU16, kF16, kBF16, kI32, kU32, kF32, kF64, kI64, kU64 };

// "F32", "BF16", ... as the header spells it.
std::string_view DtypeName(Dtype dtype);

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<int64_t> shape;
  // Byte range inside the data section (which starts right after the header).
  size_t begin = 0;
  size_t end = 0;
};

// A tensor's values as fp32, row-major. Either a view into a file mapping (an aligned F32
// tensor) or its own converted copy.
// Thread safety: immutable; any thread may read it.
class FloatTensor {
 public:
  FloatTensor() = default;
  static FloatTensor View(std::vector<int64_t> shape, const float* values);
  static FloatTensor Own(std::vector<int64_t> shape, std::vector<float> values);

  const std::vector<int64_t>& shape() const { return shape_; }
  const float* data() const { return view_ != nullptr ? view_ : owned_.data(); }
  size_t size() const;
  std::span<const float> values() const { return {data(), size()}; }
  // Whether the values are read from the file mapping in place.
  bool mapped() const { return view_ != nullptr; }

 private:
  std::vector<int64_t> shape_;
  const float* view_ = nullptr;  // Not owned; the mapping outlives this.
  std::vector<float> owned_;
};

// Thread safety: immutable after Open; any thread may call the const methods.
class SafetensorsFile {
 public:
  // Maps `path` and validates the whole header: its length within the file, valid JSON, known
  // dtypes, non-negative shapes whose element count times the dtype's size equals the tensor's
  // byte length, offsets inside the data section and not overlapping. Errors: NotFound (no
  // such file), DataLoss naming the file and the tensor for anything malformed.
  static absl::StatusOr<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  // Sorted by name.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // Null when the file has no tensor of that name.
  const TensorInfo* Find(std::string_view name) const;
  // The "__metadata__" entries (string to string), sorted by key.
  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }

  // The tensor's values as fp32: in place for F32 (copied only when the bytes are not 4-byte
  // aligned), converted for F16 and BF16. The view borrows the mapping: this file outlives it.
  // Errors: FailedPrecondition for any other dtype.
  absl::StatusOr<FloatTensor> LoadFloat(const TensorInfo& tensor) const;

  // A 64-bit hash of every byte of the file, header and weights (not cryptographic: it tells
  // one model from another in a fingerprint). Reads the whole mapping (5 ms for 90 MB here,
  // PERF.md); stable across platforms and releases.
  uint64_t ContentHash() const;

 private:
  SafetensorsFile(std::string path, const uint8_t* map, size_t size);
  absl::Status ParseHeader();

  std::string path_;
  const uint8_t* map_;  // The whole file, munmapped by the destructor.
  size_t size_;
  const uint8_t* data_ = nullptr;  // The data section, inside map_.
  size_t data_size_ = 0;
  std::vector<TensorInfo> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

// IEEE 754 binary16 and bfloat16 bits to float, exactly (subnormals, infinities, NaN kept).
float HalfToFloat(uint16_t bits);
float Bfloat16ToFloat(uint16_t bits);

}  // namespace strata::embed::bert
