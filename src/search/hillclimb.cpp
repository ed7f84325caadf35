// 004 §3.2-3.3: hill climbing from a fixed start (the csa configuration,
// 001 §4.1, in place of 004's tile size 32): move to the best measured
// neighbour whenever it beats the current point (004 Alg. 1: no statistics,
// any improvement counts).
#include "local_search.h"

namespace convtune {

namespace {

class HillClimbSearch : public LocalSearch {
 public:
  using LocalSearch::LocalSearch;
  std::string name() const override { return "hillclimb"; }
  nlohmann::json info() const override { return base_info(); }

 private:
  bool accept(const Observation& neighbour, const Observation& current) const override {
    return neighbour.gflops > current.gflops;
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_hillclimb_search(const Space& space, uint64_t seed, const SearchOptions& opt) {
  return std::make_unique<HillClimbSearch>(space, seed, opt);
}

}  // namespace convtune
