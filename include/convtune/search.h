#pragma once
// Search strategies over the structured space, behind one small interface
// (TVM's SearchPolicy, reduced): propose configurations, observe results.
// The tuner owns measurement, records and resume; strategies only choose.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "convtune/config.h"
#include "convtune/space.h"

namespace convtune {

/// What a strategy learns of a measured candidate.
struct Observation {
  bool ok = false;              // ran and verified
  double gflops = 0;            // 0 for a failed candidate
  std::vector<double> samples;  // seconds per call of the kept repeats (for t-tests)
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  /// Up to n configurations never proposed or observed before; fewer (or
  /// none) when the strategy has nothing left to try.
  virtual std::vector<Config> propose(size_t n) = 0;
  /// A measured configuration (also used to replay a log on --resume, in
  /// log order).
  virtual void observe(const Config& c, const Observation& o) = 0;
};

/// Names accepted by --search.
std::vector<std::string> strategy_names();
/// Throws Error listing the names for an unknown one.
std::unique_ptr<SearchStrategy> make_strategy(const std::string& name, const Space& space, uint64_t seed);

}  // namespace convtune
