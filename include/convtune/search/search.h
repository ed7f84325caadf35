#pragma once
// Search strategies over the structured space, behind one small interface
// (TVM's SearchPolicy, reduced): propose configurations, observe results.
// The tuner owns measurement, records and resume; strategies only choose.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convtune/space/config.h"
#include "convtune/space/space.h"

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
  /// What the tuner copies into each record's search_info ({} for nothing).
  virtual nlohmann::json info() const { return nlohmann::json::object(); }
};

/// Settings of the strategies (--pvalue, --parents, --offspring,
/// --mutation-rate) and the machine's caches (0 = unknown) for csa.
struct SearchOptions {
  double pvalue = 0.05;       // droplet: 003 §3.3 significance level
  int parents = 8;            // opevo: lambda (002 Algorithm 1)
  int offspring = 8;          // opevo: rho
  double mutation_rate = 0.5; // opevo: q of the q-random walk (002 §4.3)
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  std::string cache_source = "given";  // MachineInfo::cache_source when detected
  int64_t trials = 0;  // the tune's budget (--trials; 0 = not given): random-hillclimb samples half of it
  int vector_registers = 32;  // the ISA's (Isa::vector_registers): csa's brgemm plan fits its tile in them
};

/// Names accepted by --search.
std::vector<std::string> strategy_names();
/// Throws Error listing the names for an unknown one, or naming a bad option.
std::unique_ptr<SearchStrategy> make_strategy(const std::string& name, const Space& space, uint64_t seed,
                                              const SearchOptions& opt = {});

/// 001 §4.1's Convolution Slicing Analysis mapped into the space: the
/// configuration and what was chosen (caches, tiles, schedule, costs).
/// `output_stationary` is the same microkernel and parallel split in
/// oneDNN brgconv's order: the whole C reduced inside each output tile, so
/// every output is stored once (the descents measure both and start from
/// the faster; csa.cpp says why).
/// `streaming` (empty when it is the same as `output_stationary` or no
/// choice qualifies) is that order with the widest one-row microkernel
/// that covers all of K, whose every call stores one contiguous run.
struct CsaPlan {
  Config config;
  Config output_stationary;
  Config streaming;
  Config c_blocked;  // C in blocks whose weights fit L1, above the output tiles, with Pf(w); or empty
  Config brgemm;     // 1x1 layers: oneDNN's register block, fewest loads per FMA (csa.cpp); or empty
  Config winograd;   // the Winograd view with that register block where the shape has one (csa.cpp); or empty
  Config depthwise;  // depthwise and Lanes(g) layers: a block of 8 pixels, of 14 under the k loop on small outputs (csa.cpp); or empty
  Config taps_outside;  // the taps above the output tiles, a channel block per tap in L2 (csa.cpp); or empty
  Config first;      // the one a cold descent measures first: the model's expected fastest (csa.cpp)
  nlohmann::json info;
};
CsaPlan csa_plan(const Space& space, const SearchOptions& opt);

/// The arithmetic mean of a non-empty sample (Droplet's move rule compares two).
double mean(const std::vector<double>& v);
/// Welch's two-sample t-test (unequal variances): the two-sided p-value of
/// "same mean"; 1 when either sample has fewer than two values.
double welch_p_value(const std::vector<double>& a, const std::vector<double>& b);
/// The CDF of Student's t distribution with df degrees of freedom (df > 0).
double student_t_cdf(double t, double df);
/// The regularized incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x);

}  // namespace convtune
