#pragma once
// A one-line progress display on stderr for long work: done/total, rate, ETA
// and best so far. Silent when stderr is not a terminal or when quiet.
#include <cstddef>
#include <string>

namespace convtune {

class Progress {
 public:
  Progress(std::string label, size_t total, bool quiet);
  ~Progress();
  /// Marks n more items done; `best` is shown when non-empty.
  void advance(size_t n = 1, const std::string& best = "");
  /// Ends the line (prints a final state when enabled).
  void finish();
  bool enabled() const { return enabled_; }
  /// True when progress lines would be shown for this process.
  static bool terminal_enabled(bool quiet);

 private:
  void draw(bool force);
  std::string label_, best_;
  size_t total_, done_ = 0;
  bool enabled_, finished_ = false;
  double start_s_, last_draw_s_ = 0;
};

}  // namespace convtune
