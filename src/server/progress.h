#pragma once
// Progress on stderr for the long commands (export, import, embed): count, rate and, when the
// total is known, percent and ETA. On a terminal one line redrawn in place at most a few times
// a second; otherwise (a pipe, a log file) a plain line every ten seconds, so a run shorter
// than that prints none.

#include <chrono>
#include <cstdint>
#include <string>

namespace strata::server {

// "exported 12000/48000 (25%), 3000/s, ETA 12s": `done` of `total` (0: unknown) after
// `elapsed_ms`. The rate and ETA are left out until some time has passed.
std::string ProgressText(const std::string& label, int64_t done, int64_t total, int64_t elapsed_ms);

enum class ProgressStyle {
  kNone,     // Prints nothing.
  kInPlace,  // One line, redrawn with \r and erased at the end: for a terminal.
  kLines,    // A whole line each `line_interval`, left in place: for pipes and logs.
};

// Thread safety: none; one per command.
class ProgressLine {
 public:
  static constexpr std::chrono::milliseconds kLineInterval{10'000};

  explicit ProgressLine(std::string label, ProgressStyle style = DefaultStyle(),
                        std::chrono::milliseconds line_interval = kLineInterval);
  ~ProgressLine() { Finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Redraws the line unless it was drawn less than a quarter second ago (kInPlace), or prints
  // one when `line_interval` has passed since the start or the last one (kLines).
  void Update(int64_t done, int64_t total);
  // Erases an in-place line, so that what is printed next starts a clean line.
  void Finish();

  // kInPlace when stderr is a terminal, else kLines.
  static ProgressStyle DefaultStyle();

 private:
  std::string label_;
  ProgressStyle style_;
  std::chrono::milliseconds line_interval_;
  bool drawn_ = false;  // An in-place line is on the screen.
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_ = start_;
};

}  // namespace strata::server
