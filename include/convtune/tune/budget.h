#pragma once
// The time budget of `convtune tune --budget` over many layers: the duration
// text, and the rule that gives the next batch of candidates to one layer, in
// the spirit of Ansor's task scheduler (Zheng et al. 2020 §6): every
// layer first gets an opening batch, then the batch goes to the layer with the
// largest expected gain of the model's time per second of tuning. Pure
// functions: network_tune.cpp measures, this file decides (docs/budget.md).
#include <cstdint>
#include <string>
#include <vector>

namespace convtune {

/// "90s", "10m", "1h30m", "1h30m15s" or plain (decimal) seconds, > 0.
/// Throws Error "--budget '<text>': <problem>; give a duration such as 90s,
/// 10m, 1h30m or plain seconds".
double parse_duration(const std::string& text);
/// Whole seconds as "45s", "3m12s", "10m", "1h30m" (rounded down).
std::string format_duration(double seconds);

/// What the rule knows of one layer.
struct BudgetLayer {
  double count = 1;              // nodes of this shape in the model (ONNX counts)
  int64_t trials = 0;            // candidates in its log
  int64_t cap = 0;               // --trials: at most this many (0: no cap)
  bool exhausted = false;        // the strategy has nothing left to try (or a batch measured nothing)
  bool opened = false;           // it has had its opening batch (its seconds per trial are known)
  double seconds_per_trial = 0;  // measured tuning time per candidate (0: unknown)
  double closing_s = 0;          // estimated time of its closing phase (0: unknown)
  double light_closing_s = 0;    // the same without finalists: the winner checked and written (0: unknown)
  std::vector<double> best_curve;  // best seconds after each of its trials (0 before the first that ran)
  double reference_s = 0;        // oneDNN's time on the layer, measured in the same run (0: not compared)
};

struct BudgetRule {
  double prior_gain = 0.05;  // optimistic relative gain per trial of a layer with no history
  double prior_trials = 8;   // how many trials of history outweigh that prior
  int64_t window = 16;       // the recent history the observed gain is taken over
  // The most the reserve keeps for finalists beyond every layer's light
  // closing (0: all of them). A budget run sets a share of the budget, so that
  // the finalists of many layers cannot take the time of their searches; the
  // closing phase then runs the finalists of the layers that fit.
  double finalists_s = 0;
};

/// The next batch: layer -1 when none fits (or every layer is done).
struct BudgetBatch {
  int layer = -1;
  int64_t trials = 0;
  double estimate_s = 0;  // trials x its seconds per trial (0 when nothing is measured yet)
  double stop_after_s = 0;  // no candidate of it should start later than this from now
  bool opening = false;
};

/// Expected relative gain of the layer's best time per further trial: the
/// prior, outweighed as trials accumulate by the gain seen over the last
/// `window` trials (a layer that stopped improving tends to 0). A layer
/// slower than its reference_s keeps at least that known gap spread over
/// `window` trials: oneDNN shows the time is reachable, so the layer is not
/// starved while it trails.
double expected_gain(const BudgetLayer& l, const BudgetRule& rule = {});

/// count x best time x expected_gain / seconds per trial: the model's
/// seconds expected to be saved per second spent on the layer. A layer with
/// no best yet counts at `fallback_best_s` (the slowest layer's best).
double budget_score(const BudgetLayer& l, double fallback_best_s, const BudgetRule& rule = {});

/// The time kept for the closing phase: every layer's light_closing_s, plus
/// what their finalists add (closing_s beyond it), at most rule.finalists_s
/// when that is set; the mean of the known ones for a layer not measured yet.
double budget_reserve(const std::vector<BudgetLayer>& layers, const BudgetRule& rule = {});

/// The next batch of at most `batch` candidates with `left_s` seconds of the
/// budget left: the first layer without its opening batch (one candidate
/// when nothing is measured yet), else the best score's. It fits when its
/// estimate plus the reserve (budget_reserve) plus one candidate of every
/// other layer still to open is within left_s; a batch is cut to the trials
/// that fit, and a layer none of whose trials fit yields to the next.
/// Unknown seconds per trial and closing times are the mean of the known.
BudgetBatch next_batch(const std::vector<BudgetLayer>& layers, double left_s, int64_t batch,
                       const BudgetRule& rule = {});

/// The spent time of a budget run, kept in <out>/budget.json: the budget,
/// the seconds spent so far and each layer's measured seconds per trial and
/// closing estimate, so that --resume spends what is left.
struct BudgetState {
  double budget_s = 0;
  double spent_s = 0;
  struct Layer {
    std::string id;
    double seconds_per_trial = 0, closing_s = 0;
  };
  std::vector<Layer> layers;
};
/// Reads path; a missing file is a fresh state. Throws Error naming the file
/// for one that does not parse.
BudgetState read_budget_state(const std::string& path);
/// Writes it atomically (files.h write_file_atomic).
void write_budget_state(const std::string& path, const BudgetState& s);

}  // namespace convtune
