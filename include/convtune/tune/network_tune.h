#pragma once
// `convtune tune` over a selection of layers (--network, --onnx, several
// --shape): each layer tuned in turn at --trials, or, with --budget, every
// layer's tune kept open and batches of candidates given out by the budget
// rule (budget.h) until the time is spent; then each layer's finalists once.
#include <functional>
#include <string>
#include <vector>

#include "convtune/core/shape.h"
#include "convtune/tune/tune.h"
#include "convtune/tune/tune_compare.h"

namespace convtune {

struct NetworkTuneOptions {
  TuneOptions tune;              // every layer's; the shape and --out set per layer
  bool per_layer_dirs = false;   // each layer under tune.out_dir/<layer>
  bool json = false;             // JSON Lines: one object per layer, then one for the network
  bool onednn = true;            // compare with oneDNN when it is built in
  bool transfer = true;          // with per_layer_dirs: seed each layer from its neighbours in tune.out_dir (neighbours.h)
  std::string network;           // the model's name in the JSON summary
  double budget_s = 0;           // --budget in seconds; 0: each layer to --trials in turn
  bool trials_cap = false;       // with a budget: tune.trials caps each layer (else no cap)
  std::string budget_file;       // with a budget: its spent time (budget.h BudgetState)
  std::function<void(const std::string&)> print;  // the stdout text, as each part is ready
};

struct NetworkTuneResult {
  std::vector<TuneResult> layers;
  std::vector<OnednnComparison> onednn;  // by layer (not available: not compared)
  bool interrupted = false;
  double network_seconds = 0;            // sum over nodes of each layer's best
  double flop_weighted_percent_peak = 0;
  double wall_s = 0;                     // this run's
  double budget_spent_s = 0;             // with a budget: earlier runs up to their last batch, and this run
};

/// Tunes shapes (counts[i] nodes of shapes[i] in the model; empty: 1 each)
/// and prints each layer's summary and, for more than one layer, the
/// network's, through opt.print. Throws Error for bad input before any work.
NetworkTuneResult run_network_tune(const std::vector<Shape>& shapes, const std::vector<int>& counts,
                                   const NetworkTuneOptions& opt);

/// The with-budget run's progress line after a batch, e.g.
/// "budget 3m12s of 10m: resnet18-7 +4 trials (12), model 4.21 ms (oneDNN 5.10 ms)";
/// onednn_s 0 leaves the parenthesis out.
std::string budget_progress_line(double spent_s, double budget_s, const std::string& layer, int64_t added,
                                 int64_t trials, double model_s, double onednn_s);

}  // namespace convtune
