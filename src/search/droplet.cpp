// 003 §3, Fig. 4: Droplet Search, a coordinate descent over the coordinate
// view from the csa configuration. After each batch the descent moves to the
// fastest measured neighbour if a Welch t-test over the repeat samples says
// it is faster at p <= --pvalue (003 §3.3; decided per batch as TVM's
// DropletTuner does, so a small budget still makes several moves). A batch
// the neighbourhood cannot fill takes speculative points along the last
// improving direction (003 §3.4).
#include "local_search.h"

namespace convtune {

namespace {

class DropletSearch : public LocalSearch {
 public:
  using LocalSearch::LocalSearch;
  std::string name() const override { return "droplet"; }
  nlohmann::json info() const override {
    nlohmann::json j = base_info();
    j["pvalue"] = opt_.pvalue;
    return j;
  }

 private:
  // 003 §3.3: faster with significance; with fewer than two samples on
  // either side no test is possible and a higher GFLOP/s is enough (TVM).
  bool accept(const Observation& a, const Observation& b) const override {
    if (a.samples.size() < 2 || b.samples.size() < 2) return a.gflops > b.gflops;
    return mean(a.samples) < mean(b.samples) && welch_p_value(a.samples, b.samples) <= opt_.pvalue;
  }

  // 003 §3.4: v_s continues the last improving move; its neighbourhood fills the batch.
  void fill(size_t room) override {
    if (!last_move_ || !current_measured_) return;
    std::optional<Point> vs = view_.repeat(current_, *last_move_);
    if (!vs) return;
    std::vector<Entry> add{{*vs, *last_move_}};
    for (const Neighbor& x : view_.neighbors(*vs, rng_)) add.push_back({x.point, x.move});
    for (const Entry& e : add) {
      if (room == 0) break;
      if (seen_.count(text(e.point))) continue;
      queue_.push_back(e);
      --room;
    }
  }
};

}  // namespace

std::unique_ptr<SearchStrategy> make_droplet_search(const Space& space, uint64_t seed, const SearchOptions& opt) {
  return std::make_unique<DropletSearch>(space, seed, opt);
}

}  // namespace convtune
