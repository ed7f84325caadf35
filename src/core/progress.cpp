#include "convtune/core/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

namespace convtune {

namespace {
double now_s() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}
std::string mmss(double s) {
  if (s < 0 || s > 360000) return "--:--";
  int t = int(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{:02}:{:02}", t / 60, t % 60);
}
}  // namespace

bool Progress::terminal_enabled(bool quiet) { return !quiet && isatty(2); }

Progress::Progress(std::string label, size_t total, bool quiet)
    : label_(std::move(label)), total_(total), enabled_(terminal_enabled(quiet)), start_s_(now_s()) {
  draw(true);
}

Progress::~Progress() { finish(); }

void Progress::advance(size_t n, const std::string& best) {
  done_ += n;
  if (!best.empty()) best_ = best;
  draw(done_ >= total_);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw(true);
  std::fputc('\n', stderr);
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  double now = now_s();
  if (!force && now - last_draw_s_ < 0.1) return;
  last_draw_s_ = now;
  double el = now - start_s_;
  double rate = el > 0 ? double(done_) / el : 0;
  double eta = rate > 0 ? double(total_ - std::min(done_, total_)) / rate : -1;
  std::string line = fmt::format("\r{}: {}/{}  {:.1f}/s  elapsed {}  ETA {}", label_, done_, total_,
                                 rate, mmss(el), mmss(eta));
  if (!best_.empty()) line += "  best " + best_;
  std::fprintf(stderr, "%s\033[K", line.c_str());
  std::fflush(stderr);
}

}  // namespace convtune
