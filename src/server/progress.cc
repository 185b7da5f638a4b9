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

ProgressLine::ProgressLine(std::string label, ProgressStyle style,
                           std::chrono::milliseconds line_interval)
    : label_(std::move(label)), style_(style), line_interval_(line_interval) {}

ProgressStyle ProgressLine::DefaultStyle() {
  return isatty(STDERR_FILENO) == 1 ? ProgressStyle::kInPlace : ProgressStyle::kLines;
}

void ProgressLine::Update(int64_t done, int64_t total) {
  if (style_ == ProgressStyle::kNone) return;
  const auto now = std::chrono::steady_clock::now();
  if (style_ == ProgressStyle::kInPlace ? drawn_ && now - last_draw_ < std::chrono::milliseconds(250)
                                        : now - last_draw_ < line_interval_) {
    return;
  }
  last_draw_ = now;
  const std::string text = ProgressText(
      label_, done, total,
      std::chrono::duration_cast<std::chrono::milliseconds>(now - start_).count());
  if (style_ == ProgressStyle::kInPlace) {
    drawn_ = true;
    // \r returns to the line's start, \033[K clears what a longer line left.
    std::fprintf(stderr, "\r%s\033[K", text.c_str());
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::Finish() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace strata::server
