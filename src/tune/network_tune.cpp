// A selection of layers tuned in turn, or within a time budget (network_tune.h).
#include "convtune/tune/network_tune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "convtune/core/interrupt.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/runner.h"
#include "convtune/tune/budget.h"
#include "convtune/tune/tune_stages.h"

namespace convtune {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TuneOptions layer_options(const NetworkTuneOptions& opt, const Shape& shape, bool first) {
  TuneOptions o = opt.tune;
  o.shape = shape;
  if (opt.per_layer_dirs && !o.out_dir.empty()) {
    if (opt.transfer) o.transfer_store = o.out_dir;  // the other layers' directories
    o.out_dir += "/" + layer_id(shape);
  }
  o.table_warning = first;  // the same table for every layer: warn once
  return o;
}

// A layer's summary, with oneDNN's line (or field) when it was compared.
std::string layer_text(const NetworkTuneOptions& opt, const TuneResult& r, const OnednnComparison& c) {
  std::string text = opt.json ? tune_json(r) : tune_summary(r);
  if (!opt.onednn || !r.has_best || r.interrupted || r.emulated) return text;
  if (opt.json) {
    auto j = nlohmann::json::parse(text);
    j["onednn"] = onednn_json(c);
    return j.dump() + "\n";
  }
  return text + onednn_text(c, r.peak_gflops);
}

// An ONNX model's shape stands for `count` nodes: the network is the sum over its nodes.
void sum_network(NetworkTuneResult& res, const std::vector<int>& counts) {
  double flops = 0, weighted = 0, time = 0;
  for (size_t i = 0; i < res.layers.size(); ++i) {
    const TuneResult& r = res.layers[i];
    const double n = i < counts.size() ? counts[i] : 1;
    const double pct = r.has_best ? 100 * r.best.gflops / r.peak_gflops : 0;
    flops += n * r.shape.flops();
    weighted += n * r.shape.flops() * pct;
    if (r.has_best) time += n * r.best.seconds;
  }
  res.network_seconds = time;
  res.flop_weighted_percent_peak = flops > 0 ? weighted / flops : 0;
}

std::string network_json(const NetworkTuneOptions& opt, const NetworkTuneResult& res) {
  nlohmann::json j{{"network", opt.network},
                   {"layers", res.layers.size()},
                   {"flop_weighted_percent_peak", res.flop_weighted_percent_peak},
                   {"network_seconds", res.network_seconds}};
  if (res.layers[0].emulated) j["emulated"] = true;
  if (opt.budget_s > 0) {
    j["budget_s"] = opt.budget_s;
    j["budget_spent_s"] = res.budget_spent_s;
    j["wall_s"] = res.wall_s;
  }
  return j.dump() + "\n";
}

std::string budget_text(const NetworkTuneOptions& opt, const NetworkTuneResult& res) {
  return fmt::format("budget: {} of {} spent, this run's closing phase included; this run's wall time {:.1f} s\n",
                     format_duration(res.budget_spent_s), format_duration(opt.budget_s), res.wall_s);
}

std::string network_text(const NetworkTuneOptions& opt, const NetworkTuneResult& res) {
  std::string o = fmt::format("\n{:<14} {:>9} {:>8} {:>7}  {}\n", "layer", "GFLOP/s", "% peak", "trials", "config");
  for (const auto& r : res.layers)
    o += fmt::format("{:<14} {:>9.1f} {:>8.1f} {:>7}  {}\n", r.layer, r.has_best ? r.best.gflops : 0.0,
                     r.has_best ? 100 * r.best.gflops / r.peak_gflops : 0.0, r.trials,
                     r.has_best ? r.best.config : "-");
  o += fmt::format("FLOP-weighted average: {:.1f}% of peak; whole network {:.3f} ms{}\n",
                   res.flop_weighted_percent_peak, res.network_seconds * 1e3,
                   res.layers[0].emulated ? " (emulated: timings not meaningful)" : "");
  if (opt.budget_s > 0) o += budget_text(opt, res);
  return o;
}

void print_summaries(const NetworkTuneOptions& opt, const std::vector<int>& counts, NetworkTuneResult& res) {
  sum_network(res, counts);
  if (res.layers.size() < 2) {
    if (opt.budget_s > 0 && !opt.json) opt.print(budget_text(opt, res));  // one job's budget
    return;
  }
  opt.print(opt.json ? network_json(opt, res) : network_text(opt, res));
}

// Without a budget: each layer to --trials, its summary printed as it ends.
NetworkTuneResult tune_in_turn(const std::vector<Shape>& shapes, const std::vector<int>& counts,
                               const NetworkTuneOptions& opt) {
  NetworkTuneResult res;
  const auto t0 = Clock::now();
  for (const Shape& s : shapes) {
    const TuneOptions o = layer_options(opt, s, res.layers.empty());
    TuneResult r = run_tune(o);
    OnednnComparison c;
    if (opt.onednn && r.has_best && !r.interrupted && !r.emulated) c = compare_onednn(r, o);
    opt.print(layer_text(opt, r, c));
    res.layers.push_back(r);
    res.onednn.push_back(c);
    if (r.interrupted) {
      res.interrupted = true;
      return res;
    }
  }
  res.wall_s = seconds_since(t0);
  print_summaries(opt, counts, res);
  return res;
}

// With a budget: one open tune session per layer and what the rule knows of it.
struct BudgetedLayer {
  std::unique_ptr<TuneSession> s;
  OnednnComparison onednn;
  BudgetLayer rule;
  double tuned_s = 0;     // this run's time in its batches
  double start_s = 0;     // its setup, peak and oneDNN
  int64_t run_trials = 0;  // measured in this run's batches
};

// The best time after each trial of the layer's log, resumed records first.
std::vector<double> best_curve_of(const TuneSession& s) {
  std::vector<double> curve;
  double best = 0;
  auto add = [&](const Record& r) {
    if (r.status == Status::ok && r.seconds > 0 && (best == 0 || r.seconds < best)) best = r.seconds;
    curve.push_back(best);
  };
  for (const Record& r : s.log.records) add(r);
  for (const Record& r : s.run_records) add(r);
  return curve;
}

// The share of a budget its reserve keeps for finalists beyond every
// layer's light closing: a model of many distinct shapes would otherwise
// spend most of a short budget re-measuring (ResNet-50's 23 shapes: about
// 20 s each, three quarters of 10 minutes).
constexpr double kFinalistsShare = 0.2;

// The closing phase's time, with or without finalists: their re-measure
// rounds, each about one measured run of this layer; the duel, which builds
// every finalist as the search builds a candidate and takes `duel_rounds`
// samples of each, of at least a fifth of --min-repeat-ms (tune_deliver.cpp);
// the peak re-checked; the winner checked at every output element.
double closing_estimate(const BudgetedLayer& l, bool finalists) {
  const TuneOptions& o = l.s->opt;
  if (l.run_trials == 0) return 0;
  const double run_s = l.s->measure_s / double(l.run_trials);
  const int top = finalists && o.top > 1 ? o.top : 0;
  double s = (2 + double(top) * o.top_rounds) * run_s + 2 * peak_min_ms(o.min_repeat_ms) * 1e-3;
  if (top && o.duel_rounds > 0)
    s += top * l.rule.seconds_per_trial + o.duel_rounds * top * std::max(o.min_repeat_ms / 5 * 1e-3, run_s / (o.repeat + 1));
  return s + l.rule.seconds_per_trial;  // the full check: about one candidate's time
}

void refresh(BudgetedLayer& l) {
  l.rule.trials = l.s->res.trials;
  l.rule.exhausted = l.rule.exhausted || l.s->exhausted;
  l.rule.best_curve = best_curve_of(*l.s);
  if (l.run_trials > 0) {
    l.rule.seconds_per_trial = l.tuned_s / double(l.run_trials);
    l.rule.closing_s = closing_estimate(l, true);
    l.rule.light_closing_s = closing_estimate(l, false);
  }
}

double model_seconds(const std::vector<BudgetedLayer>& ls, bool onednn) {
  double t = 0;
  for (const BudgetedLayer& l : ls) {
    if (onednn && l.onednn.seconds <= 0) return 0;  // not every layer compared
    t += l.rule.count * (onednn ? l.onednn.seconds : (l.s->res.has_best ? l.s->res.best.seconds : 0));
  }
  return t;
}

BudgetState state_of(const NetworkTuneOptions& opt, const std::vector<BudgetedLayer>& ls, double spent_s) {
  BudgetState st{opt.budget_s, spent_s, {}};
  for (const BudgetedLayer& l : ls)
    st.layers.push_back({l.s->res.layer, l.rule.seconds_per_trial, l.rule.closing_s});
  return st;
}

// Every layer's session set up (every argument checked before any work),
// then its runner and peak, then oneDNN timed once: all counted in the budget.
std::vector<BudgetedLayer> open_layers(const std::vector<Shape>& shapes, const std::vector<int>& counts,
                                       const NetworkTuneOptions& opt, const BudgetState& state) {
  std::vector<BudgetedLayer> ls(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    TuneOptions o = layer_options(opt, shapes[i], i == 0);
    if (!opt.trials_cap) o.trials = 10000000;  // trials_check's most: the budget is the limit
    ls[i].s = std::make_unique<TuneSession>(o);
    tune_setup(*ls[i].s);
    ls[i].rule.count = i < counts.size() ? counts[i] : 1;
    ls[i].rule.cap = opt.trials_cap ? opt.tune.trials : 0;
    for (const BudgetState::Layer& sl : state.layers)
      if (sl.id == ls[i].s->res.layer && sl.seconds_per_trial > 0 && ls[i].s->log.records.size() > 0) {
        ls[i].rule.opened = true;  // resumed: its opening batch ran in an earlier run
        ls[i].rule.seconds_per_trial = sl.seconds_per_trial;
        ls[i].rule.closing_s = sl.closing_s;
      }
  }
  for (BudgetedLayer& l : ls) {
    const auto t = Clock::now();
    tune_start_runner(*l.s);
    tune_announce(*l.s);
    if (opt.onednn && !l.s->res.emulated) l.onednn = time_onednn(l.s->res, l.s->opt);
    l.rule.reference_s = l.onednn.seconds;
    l.start_s = seconds_since(t);
    refresh(l);
  }
  return ls;
}

// One batch for layer l, stopped at batch_end: the progress line and the state
// after it. Its first in this run seeds it from the neighbours tuned by then.
void run_batch(BudgetedLayer& l, const BudgetBatch& b, Clock::time_point batch_end) {
  TuneSession& s = *l.s;
  for (const std::string& n : tune_seed_transfer(s))
    if (!s.opt.quiet) std::fprintf(stderr, "convtune: note: %s\n", n.c_str());
  s.stop_at = batch_end;
  const int64_t before = s.res.trials;
  const auto t = Clock::now();
  tune_search_batch(s, b.trials);
  l.tuned_s += seconds_since(t);
  l.run_trials += s.res.trials - before;
  l.rule.opened = true;
  if (s.res.trials == before) l.rule.exhausted = true;  // nothing fit or nothing left: never again this run
  refresh(l);
}

// The closing phase of every layer within `left_s`: the finalists once, the
// winner verified and written (tune_stages.h). The layers with most of the
// model's time come first; a layer whose finalists do not fit in what is
// left after every later layer's light closing delivers its search's best
// without them. Once a layer has closed, estimates are scaled by the most any
// closed layer took over its own (below 1 too: the estimate counts every
// finalist's build as a whole candidate's time).
void close_layers(std::vector<BudgetedLayer>& ls, bool interrupted, double left_s) {
  std::vector<size_t> order(ls.size());
  std::iota(order.begin(), order.end(), size_t(0));
  auto share = [&](size_t i) { return ls[i].rule.count * (ls[i].s->res.has_best ? ls[i].s->res.best.seconds : 0); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return share(a) > share(b); });
  double light_left = 0, most = 0;  // the most a closed layer took over its estimate
  for (const BudgetedLayer& l : ls) light_left += l.rule.light_closing_s;
  const auto t0 = Clock::now();
  for (size_t i : order) {
    BudgetedLayer& l = ls[i];
    TuneSession& s = *l.s;
    light_left -= l.rule.light_closing_s;
    const double scale = most > 0 ? most : 1;
    const bool finalists = l.rule.closing_s * scale <= left_s - seconds_since(t0) - light_left * scale;
    if (!finalists && s.opt.top > 1 && !interrupted && s.res.has_best) {
      if (!s.opt.quiet)
        std::fprintf(stderr, "convtune: note: %s: no finalists, the budget has no room left for them; its search's "
                             "best is checked and delivered\n", s.res.layer.c_str());
      s.no_finalists = true;
    }
    const auto t = Clock::now();
    if (interrupted) s.res.interrupted = true;  // as a tune stopped by Ctrl-C: no finalists
    tune_prepare_search(s);                     // the protocol, for a layer that had no batch
    tune_recheck_peak(s);
    tune_finalists(s);
    tune_deliver(s);
    const double took = seconds_since(t);
    const double estimate = finalists ? l.rule.closing_s : l.rule.light_closing_s;
    if (estimate > 0) most = std::max(most, took / estimate);
    s.res.wall_s = l.start_s + l.tuned_s + took;
    set_onednn_ratio(l.onednn, s.res);
  }
}

NetworkTuneResult tune_within_budget(const std::vector<Shape>& shapes, const std::vector<int>& counts,
                                     const NetworkTuneOptions& opt) {
  const auto t0 = Clock::now();
  const BudgetState state = opt.tune.resume ? read_budget_state(opt.budget_file) : BudgetState{};
  std::vector<BudgetedLayer> ls = open_layers(shapes, counts, opt, state);
  const int jobs = opt.tune.jobs > 0 ? opt.tune.jobs : default_jobs();
  const int64_t batch = std::max(4, 2 * jobs);  // tune_search's batch: one parallel compile
  BudgetRule rule;
  rule.finalists_s = kFinalistsShare * opt.budget_s;
  auto spent = [&] { return state.spent_s + seconds_since(t0); };
  while (!interrupted()) {
    std::vector<BudgetLayer> rules;
    for (const BudgetedLayer& l : ls) rules.push_back(l.rule);
    const double left = opt.budget_s - spent();
    const BudgetBatch b = next_batch(rules, left, batch, rule);
    if (b.layer < 0) break;
    BudgetedLayer& l = ls[size_t(b.layer)];
    const int64_t before = l.s->res.trials;
    const auto end =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(b.stop_after_s));
    run_batch(l, b, end);
    write_budget_state(opt.budget_file, state_of(opt, ls, spent()));
    if (!opt.tune.quiet)
      std::fprintf(stderr, "convtune: %s\n",
                   budget_progress_line(spent(), opt.budget_s, l.s->res.layer, l.s->res.trials - before,
                                        l.s->res.trials, model_seconds(ls, false), model_seconds(ls, true))
                       .c_str());
    if (l.s->res.interrupted) break;
  }
  // The file keeps the time up to the last batch: every run closes its own
  // layers, from the reserve, and a resumed run spends only what is left.
  write_budget_state(opt.budget_file, state_of(opt, ls, spent()));
  const bool stopped = interrupted();
  close_layers(ls, stopped, opt.budget_s - spent());
  NetworkTuneResult res;
  res.interrupted = stopped;
  res.budget_spent_s = spent();
  res.wall_s = seconds_since(t0);
  for (BudgetedLayer& l : ls) {
    opt.print(layer_text(opt, l.s->res, l.onednn));
    res.layers.push_back(l.s->res);
    res.onednn.push_back(l.onednn);
  }
  if (!stopped) print_summaries(opt, counts, res);
  return res;
}

}  // namespace

std::string budget_progress_line(double spent_s, double budget_s, const std::string& layer, int64_t added,
                                 int64_t trials, double model_s, double onednn_s) {
  return fmt::format("budget {} of {}: {} +{} trials ({}), model {:.2f} ms{}", format_duration(spent_s),
                     format_duration(budget_s), layer, added, trials, model_s * 1e3,
                     onednn_s > 0 ? fmt::format(" (oneDNN {:.2f} ms)", onednn_s * 1e3) : "");
}

NetworkTuneResult run_network_tune(const std::vector<Shape>& shapes, const std::vector<int>& counts,
                                   const NetworkTuneOptions& opt) {
  return opt.budget_s > 0 ? tune_within_budget(shapes, counts, opt) : tune_in_turn(shapes, counts, opt);
}

}  // namespace convtune
