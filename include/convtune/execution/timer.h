#pragma once
// Time and hardware counters through PAPI. The real-time clock always works;
// counters are used when this machine has them and said to be absent when not.
#include <cstdint>
#include <string>
#include <vector>

namespace convtune {

/// PAPI's real-time clock in nanoseconds (initialises PAPI on first use).
int64_t now_ns();

/// The counters we ask for: PAPI_TOT_CYC and cache misses.
class Counters {
 public:
  /// Opens what exists; never throws.
  Counters();
  ~Counters();
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;

  bool available() const { return !names_.empty(); }
  const std::vector<std::string>& names() const { return names_; }
  /// "PAPI_TOT_CYC,PAPI_L1_DCM" or "none: <reason>"
  std::string description() const;
  void start();
  /// Values since start(), in names() order (empty when unavailable).
  std::vector<long long> stop();

 private:
  int eventset_ = -1;
  std::vector<std::string> names_;
  std::string why_none_;
  bool running_ = false;
};

}  // namespace convtune
