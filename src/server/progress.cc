#include "server/progress.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace strata::server {

std::string ProgressText(const std::string& label, int64_t done, int64_t total,
                         int64_t elapsed_ms) {
  std::string text = absl::StrCat(label, " ", done);
  if (total > 0) absl::StrAppend(&text, "/", total, " (", done * 100 / total, "%)");
  // Under half a second the rate says little.
  if (elapsed_ms < 500 || done == 0) return text;
  const int64_t rate = done * 1000 / elapsed_ms;
  absl::StrAppend(&text, ", ", rate, "/s");
  if (total > done && rate > 0) {
    const int64_t eta_s = (total - done + rate - 1) / rate;
    absl::StrAppend(
        &text, ", ETA ",
        eta_s >= 60 ? absl::StrCat(eta_s / 60, "m", eta_s % 60, "s") : absl::StrCat(eta_s, "s"));
  }
  return text;
}

ProgressLine::ProgressLine(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled) {}

bool ProgressLine::StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void ProgressLine::Update(int64_t done, int64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  drawn_ = true;
  const int64_t elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - start_).count();
  // \r returns to the line's start, \033[K clears what a longer line left.
  std::fprintf(stderr, "\r%s\033[K", ProgressText(label_, done, total, elapsed_ms).c_str());
  std::fflush(stderr);
}

void ProgressLine::Finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace strata::server
