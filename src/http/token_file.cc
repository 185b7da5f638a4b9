#include "http/token_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/sha256.h"
#include "util/sv.h"

namespace strata::http {
namespace {

constexpr size_t kMinTokenBytes = 16;
constexpr size_t kMaxTokenBytes = 512;

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/' || c == '=';
}

// The workspaces of a token line's second field.
absl::StatusOr<tools::WorkspaceAccess> ParseWorkspaces(std::string_view field) {
  if (field.empty() || field == "*") return tools::WorkspaceAccess();
  std::vector<std::string> workspaces;
  for (absl::string_view item : absl::StrSplit(ToAbsl(field), ',')) {
    if (item == "*") {
      return absl::InvalidArgumentError("\"*\" (every workspace) stands alone");
    }
    if (item.empty()) {
      return absl::InvalidArgumentError(
          "an empty workspace name in the list (write \"\" for the global workspace)");
    }
    workspaces.push_back(item == "\"\"" ? std::string() : std::string(item));
  }
  return tools::WorkspaceAccess(std::move(workspaces));
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  // A volatile read keeps the compiler from turning the loop into an early exit.
  volatile unsigned char result = diff;
  return result == 0;
}

absl::StatusOr<TokenTable> TokenTable::Parse(std::string_view text, std::string_view source) {
  TokenTable table;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(ToAbsl(text), '\n')) {
    ++line_number;
    const absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty() || line[0] == '#') continue;
    auto fail = [&](std::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(source), ":", line_number, ": ", ToAbsl(why)));
    };
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() > 2) {
      return fail("expected TOKEN [WORKSPACES], with no spaces inside the workspace list");
    }
    const absl::string_view token = fields[0];
    if (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes) {
      return fail(absl::StrCat("a token has ", kMinTokenBytes, " to ", kMaxTokenBytes,
                               " characters, this one ", token.size()));
    }
    for (char c : token) {
      if (!IsTokenChar(c)) {
        return fail("a token holds only A-Z a-z 0-9 - . _ ~ + / =");
      }
    }
    absl::StatusOr<tools::WorkspaceAccess> access =
        ParseWorkspaces(fields.size() == 2 ? ToStd(fields[1]) : std::string_view());
    if (!access.ok()) return fail(ToStd(access.status().message()));
    std::string digest = Sha256Hex(ToStd(token));
    for (const TokenGrant& grant : table.grants_) {
      if (grant.digest == digest) return fail("this token is listed twice");
    }
    table.grants_.push_back({.digest = std::move(digest), .access = *std::move(access)});
  }
  if (table.grants_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(ToAbsl(source), ": holds no token"));
  }
  return table;
}

absl::StatusOr<TokenTable> TokenTable::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::NotFoundError(absl::StrCat(path, ": read failed"));
  return Parse(text.str(), path);
}

std::optional<TokenGrant> TokenTable::Find(std::string_view presented) const {
  const std::string digest = Sha256Hex(presented);
  const TokenGrant* found = nullptr;
  for (const TokenGrant& grant : grants_) {
    // Every digest is compared: the time does not tell which one matched.
    if (ConstantTimeEquals(digest, grant.digest)) found = &grant;
  }
  if (found == nullptr) return std::nullopt;
  return *found;
}

}  // namespace strata::http
