#include "embed/bert/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "util/hash.h"
#include "util/sv.h"

namespace strata::embed::bert {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and read in place");

// The reference implementation refuses headers above 100 MB too; a real one is a few KB.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeSpec {
  std::string_view name;
  Dtype dtype;
  size_t bytes;
};

constexpr DtypeSpec kDtypes[] = {
    {"BOOL", Dtype::kBool, 1}, {"U8", Dtype::kU8, 1},   {"I8", Dtype::kI8, 1},
    {"I16", Dtype::kI16, 2},   {"U16", Dtype::kU16, 2}, {"F16", Dtype::kF16, 2},
    {"BF16", Dtype::kBF16, 2}, {"I32", Dtype::kI32, 4}, {"U32", Dtype::kU32, 4},
    {"F32", Dtype::kF32, 4},   {"F64", Dtype::kF64, 8}, {"I64", Dtype::kI64, 8},
    {"U64", Dtype::kU64, 8},
};

const DtypeSpec& Spec(Dtype dtype) {
  for (const DtypeSpec& spec : kDtypes) {
    if (spec.dtype == dtype) return spec;
  }
  return kDtypes[0];  // Unreachable: every enumerator is in the table.
}

const DtypeSpec* SpecNamed(std::string_view name) {
  for (const DtypeSpec& spec : kDtypes) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

// An unsigned JSON integer that fits in uint64_t; nullopt for anything else.
std::optional<uint64_t> Unsigned(const nlohmann::json& value) {
  if (!value.is_number_unsigned()) return std::nullopt;
  return value.get<uint64_t>();
}

// a * b, or nullopt when it overflows.
std::optional<uint64_t> Multiply(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::nullopt;
  return a * b;
}

}  // namespace

std::string_view DtypeName(Dtype dtype) { return Spec(dtype).name; }

FloatTensor FloatTensor::View(std::vector<int64_t> shape, const float* values) {
  FloatTensor t;
  t.shape_ = std::move(shape);
  t.view_ = values;
  return t;
}

FloatTensor FloatTensor::Own(std::vector<int64_t> shape, std::vector<float> values) {
  FloatTensor t;
  t.shape_ = std::move(shape);
  t.owned_ = std::move(values);
  return t;
}

size_t FloatTensor::size() const {
  size_t n = 1;
  for (int64_t d : shape_) n *= static_cast<size_t>(d);
  return n;
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    out = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else {
    // A subnormal half is a normal float: shift the leading 1 into the implicit bit.
    int shift = 0;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    out = sign | (static_cast<uint32_t>(127 - 15 + 1 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  return std::bit_cast<float>(out);
}

float Bfloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

SafetensorsFile::SafetensorsFile(std::string path, const uint8_t* map, size_t size)
    : path_(std::move(path)), map_(map), size_(size) {}

SafetensorsFile::~SafetensorsFile() {
  if (map_ != nullptr) munmap(const_cast<uint8_t*>(map_), size_);
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string message = absl::StrCat(path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message) : absl::FailedPreconditionError(message);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::FailedPreconditionError(absl::StrCat(path, ": ", std::strerror(err)));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < 8) {
    close(fd);
    return absl::DataLossError(absl::StrCat(path, ": not a safetensors file: ", size,
                                            " bytes, shorter than the "
                                            "8-byte header length"));
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  close(fd);
  if (map == MAP_FAILED) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": mmap: ", std::strerror(err)));
  }
  std::unique_ptr<SafetensorsFile> file(
      new SafetensorsFile(path, static_cast<const uint8_t*>(map), size));
  if (absl::Status s = file->ParseHeader(); !s.ok()) return s;
  return file;
}

absl::Status SafetensorsFile::ParseHeader() {
  auto bad = [this](auto&&... parts) {
    return absl::DataLossError(absl::StrCat(path_, ": ", parts...));
  };
  uint64_t header_bytes;
  std::memcpy(&header_bytes, map_, 8);
  if (header_bytes > size_ - 8) {
    return bad("the header length ", header_bytes, " runs past the end of the file (", size_ - 8,
               " bytes after the length)");
  }
  if (header_bytes > kMaxHeaderBytes) {
    return bad("the header length ", header_bytes, " is over the limit of ", kMaxHeaderBytes);
  }
  const char* text = reinterpret_cast<const char*>(map_ + 8);
  const nlohmann::json header =
      nlohmann::json::parse(text, text + header_bytes, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) return bad("the header is not valid JSON");
  if (!header.is_object()) return bad("the header is not a JSON object");
  data_ = map_ + 8 + header_bytes;
  data_size_ = size_ - 8 - header_bytes;

  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return bad("__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) return bad("__metadata__ entry \"", key, "\" is not a string");
        metadata_.emplace_back(key, value.get<std::string>());
      }
      continue;
    }
    const std::string& tensor = name;  // A structured binding cannot be captured in C++20.
    auto bad_tensor = [&](auto&&... parts) { return bad("tensor \"", tensor, "\": ", parts...); };
    if (!entry.is_object()) return bad_tensor("not an object");
    const auto dtype = entry.find("dtype");
    const auto shape = entry.find("shape");
    const auto offsets = entry.find("data_offsets");
    if (dtype == entry.end() || !dtype->is_string()) return bad_tensor("no dtype string");
    if (shape == entry.end() || !shape->is_array()) return bad_tensor("no shape array");
    if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2) {
      return bad_tensor("data_offsets is not an array [begin, end]");
    }
    const DtypeSpec* spec = SpecNamed(dtype->get<std::string>());
    if (spec == nullptr) return bad_tensor("unknown dtype \"", dtype->get<std::string>(), "\"");
    TensorInfo info{.name = name, .dtype = spec->dtype};
    uint64_t elements = 1;
    for (const nlohmann::json& dim : *shape) {
      const std::optional<uint64_t> d = Unsigned(dim);
      if (!d || *d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return bad_tensor("shape ", shape->dump(),
                          " has a dimension that is not a "
                          "non-negative integer");
      }
      const std::optional<uint64_t> product = Multiply(elements, *d);
      if (!product) return bad_tensor("shape ", shape->dump(), " overflows");
      elements = *product;
      info.shape.push_back(static_cast<int64_t>(*d));
    }
    const std::optional<uint64_t> begin = Unsigned((*offsets)[0]);
    const std::optional<uint64_t> end = Unsigned((*offsets)[1]);
    if (!begin || !end || *begin > *end) {
      return bad_tensor("data_offsets ", offsets->dump(), " is not a range [begin, end]");
    }
    if (*end > data_size_) {
      return bad_tensor("data_offsets ", offsets->dump(), " run past the data section (",
                        data_size_, " bytes)");
    }
    const std::optional<uint64_t> bytes = Multiply(elements, spec->bytes);
    if (!bytes || *bytes != *end - *begin) {
      return bad_tensor("shape ", shape->dump(), " of ", ToAbsl(spec->name), " needs ",
                        bytes ? absl::StrCat(*bytes) : "too many", " bytes, data_offsets ",
                        offsets->dump(), " hold ", *end - *begin);
    }
    info.begin = static_cast<size_t>(*begin);
    info.end = static_cast<size_t>(*end);
    tensors_.push_back(std::move(info));
  }

  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& previous = *by_offset[i - 1];
    const TensorInfo& next = *by_offset[i];
    // Empty tensors occupy no bytes and overlap nothing.
    if (next.begin < previous.end && next.begin != next.end) {
      return bad("tensors \"", previous.name, "\" [", previous.begin, ", ", previous.end,
                 ") and \"", next.name, "\" [", next.begin, ", ", next.end, ") overlap");
    }
  }
  return absl::OkStatus();
}

uint64_t SafetensorsFile::ContentHash() const {
  // Four independent lanes of multiply-rotate over 64-bit little-endian words, so the loop
  // runs at memory speed (FNV-1a, a multiply per byte, would take ten times as long); the
  // tail bytes and the size go through FNV-1a, and Mix64 mixes the lanes together.
  constexpr uint64_t kMultiply = 0x9e3779b97f4a7c15ull;
  constexpr uint64_t kMultiplyAfter = 0xc2b2ae3d27d4eb4full;
  uint64_t lanes[4] = {1, 2, 3, 4};
  size_t i = 0;
  for (; i + 32 <= size_; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t word;
      std::memcpy(&word, map_ + i + 8 * l, 8);
      if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
      lanes[l] = std::rotl(lanes[l] + word * kMultiply, 31) * kMultiplyAfter;
    }
  }
  uint64_t hash = Fnv1a64(std::string_view(reinterpret_cast<const char*>(map_ + i), size_ - i),
                          Fnv1a64(absl::StrCat(size_, ":")));
  for (uint64_t lane : lanes) hash = Mix64(hash ^ lane);
  return hash;
}

const TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  for (const TensorInfo& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<FloatTensor> SafetensorsFile::LoadFloat(const TensorInfo& tensor) const {
  const uint8_t* bytes = data_ + tensor.begin;
  const size_t count = (tensor.end - tensor.begin) / Spec(tensor.dtype).bytes;
  switch (tensor.dtype) {
    case Dtype::kF32: {
      if (reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0) {
        return FloatTensor::View(tensor.shape, reinterpret_cast<const float*>(bytes));
      }
      std::vector<float> values(count);
      std::memcpy(values.data(), bytes, count * sizeof(float));
      return FloatTensor::Own(tensor.shape, std::move(values));
    }
    case Dtype::kF16:
    case Dtype::kBF16: {
      std::vector<float> values(count);
      const bool half = tensor.dtype == Dtype::kF16;
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, bytes + 2 * i, 2);
        values[i] = half ? HalfToFloat(bits) : Bfloat16ToFloat(bits);
      }
      return FloatTensor::Own(tensor.shape, std::move(values));
    }
    default:
      return absl::FailedPreconditionError(absl::StrCat(
          path_, ": tensor \"", tensor.name, "\" has dtype ", ToAbsl(DtypeName(tensor.dtype)),
          "; only F32, F16 and BF16 are read as floats"));
  }
}

}  // namespace strata::embed::bert
