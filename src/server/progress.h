#pragma once
// A progress line on stderr for the long commands (export, import, embed): count, rate and,
// when the total is known, percent and ETA, redrawn in place at most a few times a second,
// and only when stderr is a terminal (pipes and tests see nothing of it).

#include <chrono>
#include <cstdint>
#include <string>

namespace strata::server {

// "exported 12000/48000 (25%), 3000/s, ETA 12s": `done` of `total` (0: unknown) after
// `elapsed_ms`. The rate and ETA are left out until some time has passed.
std::string ProgressText(const std::string& label, int64_t done, int64_t total, int64_t elapsed_ms);

// Thread safety: none; one per command.
class ProgressLine {
 public:
  // Draws when `enabled` (by default: stderr is a terminal).
  explicit ProgressLine(std::string label, bool enabled = StderrIsTerminal());
  ~ProgressLine() { Finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Redraws the line unless it was drawn less than a quarter second ago.
  void Update(int64_t done, int64_t total);
  // Erases the line, so that what is printed next starts a clean line.
  void Finish();

  static bool StderrIsTerminal();

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace strata::server
