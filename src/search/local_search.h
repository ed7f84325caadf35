#pragma once
// What the neighbourhood descents share (Droplet, 003 §3; hill climbing,
// 004 §3): start at the fastest of the csa configuration (001 §4.1) and
// the other start plans (csa.cpp; all measured before the first move), or,
// after a resume, at the best point measured and the plans it lacks; measure the current point's neighbours in the
// tuner's batches; after each batch move to the best neighbour if accept()
// says so; at a point with no accepted neighbour start again from a random
// point, so the whole budget is used; never propose a configuration twice.
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "convtune/space/coordinates.h"
#include "convtune/search/search.h"

namespace convtune {

class LocalSearch : public SearchStrategy {
 public:
  LocalSearch(const Space& space, uint64_t seed, const SearchOptions& opt)
      : view_(space), rng_(seed), opt_(opt), csa_(csa_plan(space, opt)) {}

  std::vector<Config> propose(size_t n) override;
  void observe(const Config& c, const Observation& o) override;

 protected:
  struct Entry {
    Point point;
    std::optional<Move> move;  // none: the current point itself
    bool plan = false;         // a start plan (start()): all are measured before the first move
  };

  /// Whether the best neighbour of a batch replaces a current point that ran.
  virtual bool accept(const Observation& neighbour, const Observation& current) const = 0;
  /// Called once per current point when its neighbourhood cannot fill a
  /// batch; may queue more points (Droplet's speculation). Default: nothing.
  virtual void fill(size_t room) { (void)room; }

  std::string text(const Point& p) const { return to_string(view_.to_config(p)); }
  nlohmann::json base_info() const { return {{"origin", "csa"}, {"csa", csa_.info}, {"moves", moves_}, {"restarts", restarts_}}; }

  CoordinateView view_;
  std::mt19937_64 rng_;
  SearchOptions opt_;
  CsaPlan csa_;
  std::set<std::string> seen_;
  std::map<std::string, Observation> results_;
  std::deque<Entry> queue_;
  Point current_;
  bool current_measured_ = false;
  std::optional<Move> last_move_;  // the move that led to the current point

 private:
  void move_to(const Point& p, std::optional<Move> m);
  void start();
  bool restart();
  void decide();

  std::set<std::string> pending_;
  std::map<std::string, Entry> batch_;
  std::string current_text_;
  size_t plans_left_ = 0;  // start plans not yet proposed: no move before they ran
  bool started_ = false, filled_ = false;
  int64_t moves_ = 0, restarts_ = 0;
};

}  // namespace convtune
