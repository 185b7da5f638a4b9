#include "embed/bert/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "testing/bert_model.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace strata::embed::bert {
namespace {

using ::strata::testing::MakeRawTensor;
using ::strata::testing::RawTensor;
using ::strata::testing::SafetensorsBytes;
using ::strata::testing::StatusIs;
using ::strata::testing::WriteTextFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A file of `header` (JSON text, not padded) followed by `data_bytes` zero bytes.
std::string FileWithHeader(const std::string& header, size_t data_bytes) {
  const uint64_t length = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &length, 8);
  return out + header + std::string(data_bytes, '\0');
}

class SafetensorsTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<SafetensorsFile>> OpenBytes(const std::string& bytes) {
    WriteTextFile(path_, bytes);
    return SafetensorsFile::Open(path_);
  }
  // Opens a file whose header is `header` and expects DataLoss naming the file and `what`.
  void ExpectRefused(const std::string& header, size_t data_bytes, const std::string& what) {
    EXPECT_THAT(OpenBytes(FileWithHeader(header, data_bytes)),
                StatusIs(absl::StatusCode::kDataLoss, AllOf(HasSubstr(path_), HasSubstr(what))))
        << header;
  }

  strata::testing::TempDir dir_;
  const std::string path_ = dir_.File("model.safetensors");
};

TEST_F(SafetensorsTest, ReadsShapesOffsetsAndMetadata) {
  ASSERT_OK_AND_ASSIGN(
      auto file, OpenBytes(SafetensorsBytes({MakeRawTensor("a", "F32", {2, 3}, {1, 2, 3, 4, 5, 6}),
                                             MakeRawTensor("b", "F16", {2}, {0.5f, -2.0f})})));
  ASSERT_EQ(file->tensors().size(), 2u);
  const TensorInfo* a = file->Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, Dtype::kF32);
  EXPECT_THAT(a->shape, ElementsAre(2, 3));
  EXPECT_EQ(a->end - a->begin, 24u);
  EXPECT_EQ(file->Find("c"), nullptr);
  EXPECT_THAT(file->metadata(), ElementsAre(std::pair<std::string, std::string>("format", "pt")));

  ASSERT_OK_AND_ASSIGN(FloatTensor av, file->LoadFloat(*a));
  EXPECT_TRUE(av.mapped());
  EXPECT_THAT(av.values(), ElementsAre(1, 2, 3, 4, 5, 6));
  ASSERT_OK_AND_ASSIGN(FloatTensor bv, file->LoadFloat(*file->Find("b")));
  EXPECT_FALSE(bv.mapped());
  EXPECT_THAT(bv.values(), ElementsAre(0.5f, -2.0f));
}

TEST_F(SafetensorsTest, ConvertsBf16AndKeepsMisalignedF32Correct) {
  RawTensor bf16{.name = "b", .dtype = "BF16", .shape = {3}};
  for (float f : {1.5f, -0.15625f, 3e38f}) {
    const uint16_t bits = static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
    bf16.bytes.append(reinterpret_cast<const char*>(&bits), 2);
  }
  // One BF16 tensor of 6 bytes first puts the F32 tensor at an odd-of-4 offset.
  ASSERT_OK_AND_ASSIGN(
      auto file, OpenBytes(SafetensorsBytes({bf16, MakeRawTensor("f", "F32", {2}, {7, -8})})));
  ASSERT_OK_AND_ASSIGN(FloatTensor b, file->LoadFloat(*file->Find("b")));
  EXPECT_THAT(b.values(),
              ElementsAre(1.5f, -0.15625f,
                          std::bit_cast<float>(std::bit_cast<uint32_t>(3e38f) & 0xffff0000u)));
  ASSERT_OK_AND_ASSIGN(FloatTensor f, file->LoadFloat(*file->Find("f")));
  EXPECT_FALSE(f.mapped());
  EXPECT_THAT(f.values(), ElementsAre(7, -8));
}

TEST(HalfToFloat, IsExactForSubnormalsInfinitiesAndNan) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // The smallest subnormal.
  EXPECT_EQ(HalfToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(HalfToFloat(0x8000), -0.0f);
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  EXPECT_EQ(HalfToFloat(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_EQ(Bfloat16ToFloat(0x3f80), 1.0f);
}

TEST_F(SafetensorsTest, RefusesAMissingFile) {
  EXPECT_THAT(SafetensorsFile::Open(dir_.File("absent.safetensors")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("absent.safetensors")));
}

TEST_F(SafetensorsTest, RefusesAFileShorterThanTheLength) {
  EXPECT_THAT(OpenBytes("abc"), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("3 bytes")));
  EXPECT_THAT(OpenBytes(""), StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path_)));
}

TEST_F(SafetensorsTest, RefusesAHeaderLengthPastTheEnd) {
  std::string bytes = FileWithHeader("{}", 0);
  const uint64_t length = 1000;
  std::memcpy(bytes.data(), &length, 8);
  EXPECT_THAT(OpenBytes(bytes),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("runs past the end of the file")));
  std::memset(bytes.data(), 0xff, 8);
  EXPECT_THAT(OpenBytes(bytes),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("runs past the end of the file")));
}

TEST_F(SafetensorsTest, RefusesAFileCutShort) {
  std::string bytes = SafetensorsBytes({MakeRawTensor("a", "F32", {4}, {1, 2, 3, 4})});
  bytes.resize(bytes.size() - 4);
  EXPECT_THAT(OpenBytes(bytes), StatusIs(absl::StatusCode::kDataLoss,
                                         AllOf(HasSubstr("\"a\""), HasSubstr("past the data"))));
}

TEST_F(SafetensorsTest, RefusesBadJson) {
  ExpectRefused(R"({"a": {"dtype": "F32", )", 0, "not valid JSON");
  ExpectRefused(R"([1, 2])", 0, "not a JSON object");
  ExpectRefused(R"({"a": 5})", 0, "tensor \"a\": not an object");
  ExpectRefused(R"({"__metadata__": {"k": 1}})", 0, "__metadata__ entry \"k\"");
}

TEST_F(SafetensorsTest, RefusesMalformedEntries) {
  ExpectRefused(R"({"a": {"dtype": "F99", "shape": [1], "data_offsets": [0, 4]}})", 4,
                "unknown dtype \"F99\"");
  ExpectRefused(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 4, "no dtype");
  ExpectRefused(R"({"a": {"dtype": "F32", "data_offsets": [0, 4]}})", 4, "no shape");
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [1]}})", 4, "data_offsets");
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})", 4,
                "non-negative integer");
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4,
                "non-negative integer");
  ExpectRefused(
      R"({"a": {"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}})", 8,
      "overflows");
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}})", 4,
                "not a range");
}

TEST_F(SafetensorsTest, RefusesShapesThatDoNotMatchTheBytes) {
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})", 24,
                "shape [2,3] of F32 needs 24 bytes, data_offsets [0,20] hold 20");
  ExpectRefused(R"({"a": {"dtype": "F16", "shape": [3], "data_offsets": [0, 4]}})", 4,
                "needs 6 bytes");
}

TEST_F(SafetensorsTest, RefusesOffsetsOutOfRangeOrOverlapping) {
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 8,
                "run past the data section (8 bytes)");
  ExpectRefused(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                    "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                12, "tensors \"a\" [0, 8) and \"b\" [4, 12) overlap");
  // An empty tensor anywhere overlaps nothing.
  ASSERT_OK(OpenBytes(FileWithHeader(
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
          "e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]}})",
      8)));
}

TEST_F(SafetensorsTest, KnowsOtherDtypesButLoadsOnlyFloats) {
  ASSERT_OK_AND_ASSIGN(
      auto file,
      OpenBytes(FileWithHeader(
          R"({"position_ids": {"dtype": "I64", "shape": [1, 2], "data_offsets": [0, 16]}})", 16)));
  const TensorInfo* ids = file->Find("position_ids");
  ASSERT_NE(ids, nullptr);
  EXPECT_THAT(file->LoadFloat(*ids), StatusIs(absl::StatusCode::kFailedPrecondition,
                                              AllOf(HasSubstr("position_ids"), HasSubstr("I64"))));
}

}  // namespace
}  // namespace strata::embed::bert
