// 000 §6.1: random sampling of the structured space; no configuration twice.
#include <set>

#include "convtune/search/search.h"

namespace convtune {

namespace {

class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(const Space& space, uint64_t seed) : space_(space), rng_(seed) {}
  std::string name() const override { return "random"; }

  std::vector<Config> propose(size_t n) override {
    std::vector<Config> out;
    // The space can be smaller than the budget: stop after many repeats.
    for (int misses = 0; out.size() < n && misses < 2000;) {
      Config c = sample_config(space_, rng_);
      if (seen_.insert(to_string(c)).second) {
        out.push_back(c);
        misses = 0;
      } else {
        ++misses;
      }
    }
    return out;
  }

  void observe(const Config& c, const Observation&) override { seen_.insert(to_string(c)); }

 private:
  const Space& space_;
  std::mt19937_64 rng_;
  std::set<std::string> seen_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_random_search(const Space& space, uint64_t seed) {
  return std::make_unique<RandomSearch>(space, seed);
}

}  // namespace convtune
