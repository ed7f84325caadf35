// Random sampling (000 §6.1) for the first half of the budget, then hill
// climbing (004 §3, hillclimb.cpp) from the fastest point measured.
// Why: 100 random samples leave 1x1 layers a few % below the configurations
// one climb finds around them (yolo9000-13, resnet18-11: a few dozen trials
// of climbing from the best sample close most of the gap). The random half keeps
// the paper's spread over the whole space (both views, every class), which
// a climb from the csa plan alone does not have.
#include <algorithm>
#include <utility>

#include "factories.h"

namespace convtune {

namespace {

class RandomHillclimbSearch : public SearchStrategy {
 public:
  RandomHillclimbSearch(const Space& space, uint64_t seed, const SearchOptions& opt)
      : space_(space), seed_(seed), opt_(opt), random_(make_random_search(space, seed)),
        sampled_(opt.trials > 0 ? std::max<int64_t>(1, opt.trials / 2) : kSampledWithoutBudget) {}

  std::string name() const override { return "random-hillclimb"; }

  // The tuner observes every batch before it asks for the next (tune_search.cpp),
  // so the climb starts with the whole random half measured.
  std::vector<Config> propose(size_t n) override {
    const int64_t left = sampled_ - int64_t(history_.size());
    if (!climb_ && left > 0) {
      std::vector<Config> v = random_->propose(size_t(std::min<int64_t>(int64_t(n), left)));
      if (!v.empty()) return v;  // else the space holds nothing unsampled: the climb says so too
    }
    if (!climb_) {
      // The climb learns every measurement, so it starts at the fastest and
      // never proposes a sampled configuration again (local_search.h).
      climb_ = make_hillclimb_search(space_, seed_, opt_);
      for (const auto& [c, o] : history_) climb_->observe(c, o);
    }
    return climb_->propose(n);
  }

  void observe(const Config& c, const Observation& o) override {
    history_.emplace_back(c, o);
    random_->observe(c, o);
    if (climb_) climb_->observe(c, o);
  }

  nlohmann::json info() const override {
    nlohmann::json j = {{"phase", climb_ ? "hillclimb" : "random"}, {"sampled", sampled_}};
    if (climb_) j["hillclimb"] = climb_->info();
    return j;
  }

 private:
  static constexpr int64_t kSampledWithoutBudget = 50;  // a tune always passes --trials; tests may not

  const Space& space_;
  uint64_t seed_;
  SearchOptions opt_;
  std::unique_ptr<SearchStrategy> random_, climb_;
  int64_t sampled_;
  std::vector<std::pair<Config, Observation>> history_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_random_hillclimb_search(const Space& space, uint64_t seed,
                                                             const SearchOptions& opt) {
  return std::make_unique<RandomHillclimbSearch>(space, seed, opt);
}

}  // namespace convtune
