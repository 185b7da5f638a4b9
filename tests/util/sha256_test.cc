#include "util/sha256.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "testing/temp_dir.h"

namespace strata {
namespace {

// FIPS 180-4 examples and the NIST one-million-'a' vector.
TEST(Sha256, MatchesTheStandardsVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesHashAsTheWhole) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += static_cast<char>(i * 7);
  for (size_t cut : {0, 1, 55, 56, 63, 64, 65, 128, 299}) {
    Sha256 sha;
    sha.Update(std::string_view(text).substr(0, cut));
    sha.Update(std::string_view(text).substr(cut));
    EXPECT_EQ(sha.HexDigest(), Sha256Hex(text)) << cut;
  }
}

TEST(Sha256, FileMatchesItsBytesAndAMissingFileIsNotFound) {
  testing::TempDir tmp;
  const std::string bytes(3 << 20, 'x');
  std::ofstream(tmp.File("f"), std::ios::binary) << bytes;
  auto digest = Sha256File(tmp.File("f"));
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(*digest, Sha256Hex(bytes));
  EXPECT_EQ(Sha256File(tmp.File("missing")).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace strata
