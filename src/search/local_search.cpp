#include "local_search.h"

#include <algorithm>

namespace convtune {

std::vector<Config> LocalSearch::propose(size_t n) {
  if (!started_) start();
  std::vector<Config> out;
  while (out.size() < n) {
    if (!queue_.empty()) {
      Entry e = queue_.front();
      queue_.pop_front();
      if (e.plan) --plans_left_;
      const std::string t = text(e.point);
      if (!seen_.insert(t).second) continue;
      pending_.insert(t);
      batch_[t] = e;
      out.push_back(view_.to_config(e.point));
    } else if (!filled_) {
      filled_ = true;
      fill(n - out.size());
    } else if (!out.empty() || !pending_.empty()) {
      break;  // decide after this batch
    } else if (!restart()) {
      break;  // nothing unmeasured found: the space is exhausted
    }
  }
  return out;
}

void LocalSearch::observe(const Config& c, const Observation& o) {
  const std::string t = to_string(c);
  seen_.insert(t);
  results_[t] = o;
  // Every start plan runs before the first move. A tune's batch is 4
  // candidates on 2 cores (tune_search.cpp): deciding after it moved the descent
  // when CSA's or one of the next three plans was faster, and the queue of
  // the new point dropped the later plans (Pf(w), streaming, c-blocked)
  // unmeasured.
  if (pending_.erase(t) && pending_.empty() && plans_left_ == 0) decide();
}

void LocalSearch::move_to(const Point& p, std::optional<Move> m) {
  current_ = p;
  current_text_ = text(p);
  current_measured_ = results_.count(current_text_) > 0;
  last_move_ = m;
  filled_ = false;
  queue_.clear();
  if (!current_measured_) queue_.push_back({p, std::nullopt});
  std::vector<Neighbor> nb = view_.neighbors(p, rng_);
  std::shuffle(nb.begin(), nb.end(), rng_);
  // Pf(w) switched goes first: one trial tells whether the point's weights
  // stream from beyond L2 (resnet18-12's gain several % with it; 1x1 layers
  // whose weights fit lose a few %), and every later neighbour then starts
  // from the better form. Pf(o) switched next, for the same reason (config.h:
  // a percent or so either way). Nt(o) switched stays among the other
  // neighbours: it loses on nearly every layer (space.cpp).
  std::stable_partition(nb.begin(), nb.end(), [](const Neighbor& x) { return x.move.param.kind == Param::prefetch_out; });
  std::stable_partition(nb.begin(), nb.end(), [](const Neighbor& x) { return x.move.param.kind == Param::prefetch; });
  for (const Neighbor& x : nb) queue_.push_back({x.point, x.move});
}

void LocalSearch::start() {
  started_ = true;
  const Observation* best = nullptr;
  std::optional<Point> at;
  for (const auto& [t, o] : results_) {
    if (!o.ok || (best && o.gflops <= best->gflops)) continue;
    if (auto p = view_.from_config(parse_config(t))) {
      best = &o;
      at = p;
    }
  }
  if (!at) at = view_.from_config(csa_.first);
  if (!at) at = view_.from_config(csa_.config);
  auto known = at ? results_.find(text(*at)) : results_.end();
  if (!at || (known != results_.end() && !known->second.ok)) {
    restart();
    return;
  }
  move_to(*at, std::nullopt);
  // The start plans (csa.cpp) go before any neighbour: the first plan (a
  // cold start stands on it), the output-stationary plan,
  // the same with each other tap fence (config.h F(r), F(s): yolo9000-2's
  // k2w2h{5,6}r3s3 spills without one, and a fence there is worth about 10 %
  // in the whole layer as well; the plan itself comes with the fence its
  // microkernel was profiled fastest in), and the streaming plan and the
  // c-blocked plan (csa.cpp c_blocked: C in L1-sized blocks above the output
  // tiles, with Pf(w)), on 1x1 layers oneDNN's register block (csa.cpp
  // brgemm_choice), the Winograd view, the depthwise block (csa.cpp
  // depthwise_choice), the taps-outside plan (csa.cpp taps_outside), and
  // CSA's own. A resumed log measures the ones it lacks (a log written by a
  // version without them). decide() moves to the fastest, as to a neighbour.
  std::vector<Config> plans{csa_.first, csa_.output_stationary};
  for (TapFence f : {TapFence::none, TapFence::r, TapFence::s}) {
    if (f == csa_.output_stationary.fence) continue;
    plans.push_back(csa_.output_stationary);
    plans.back().fence = f;
  }
  // The output-stationary plan with Pf(w) too (config.h), where it applies.
  if (prefetch_loop(csa_.output_stationary) >= 0) {
    plans.push_back(csa_.output_stationary);
    plans.back().prefetch = true;
  }
  plans.push_back(csa_.streaming);
  plans.push_back(csa_.c_blocked);
  plans.push_back(csa_.brgemm);
  plans.push_back(csa_.winograd);
  plans.push_back(csa_.depthwise);
  plans.push_back(csa_.taps_outside);
  plans.push_back(csa_.config);
  auto at_start = queue_.begin() + (current_measured_ ? 0 : 1);
  for (const Config& c : plans) {
    // nullopt too for a fence the microkernel cannot take
    const std::optional<Point> p = c.specs.empty() ? std::nullopt : view_.from_config(c);
    if (p && text(*p) != current_text_ && !results_.count(text(*p))) {
      at_start = queue_.insert(at_start, Entry{*p, std::nullopt, true}) + 1;
      ++plans_left_;
    }
  }
}

bool LocalSearch::restart() {
  for (int tries = 0; tries < 2000; ++tries) {
    Point p = view_.random_point(rng_);
    if (seen_.count(text(p))) continue;
    ++restarts_;
    move_to(p, std::nullopt);
    return true;
  }
  return false;
}

void LocalSearch::decide() {
  std::map<std::string, Entry> batch;
  batch.swap(batch_);
  current_measured_ = results_.count(current_text_) > 0;
  const Observation* best = nullptr;
  const Entry* best_entry = nullptr;
  for (const auto& [t, e] : batch) {
    const Observation& o = results_[t];
    if (t == current_text_ || !o.ok || (best && o.gflops <= best->gflops)) continue;
    best = &o;
    best_entry = &e;
  }
  if (!best) return;
  auto cur = results_.find(current_text_);
  if (cur == results_.end() || !cur->second.ok || accept(*best, cur->second)) {
    ++moves_;
    move_to(best_entry->point, best_entry->move);
  }
}

}  // namespace convtune
