#pragma once
// The end of a tune: the K best configurations of the log are measured again
// in fresh processes, interleaved over rounds, so that a transient during the
// search (a clock change, a neighbour on the sibling vCPU) cannot crown a
// mediocre candidate; the winner is then checked at every output element.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convtune/execution/measure.h"
#include "convtune/tune/records.h"

namespace convtune {

class Runner;
struct ProblemData;

/// The duel's children (finalist_duel.h), unless it has fewer rounds.
constexpr int kDuelChildren = 3;

struct Finalist {
  std::string config;
  double search_gflops = 0;         // the log's figure
  std::string exe;                  // built executable ("" when it did not build)
  Status status = Status::ok;       // ok, or why it was dropped
  std::string detail;               // what happened, for a dropped finalist
  std::vector<double> round_gflops; // one median per round, in round order
  double seconds = 0;               // median of the rounds' medians, per call
  double gflops = 0;                // the same as GFLOP/s (0: not re-measured)
  double spread = 0;                // (max - min) / median of round_gflops, in %
  double duel_gflops = 0;           // the duel's figure (finalist_duel.h; 0: not in a duel)
  double duel_iqr = 0;              // its samples' interquartile range over their median, in %
  std::string full_check = "not run";  // passed | failed | not run
  bool winner = false;
};

/// k `ok` records with distinct configurations (the first record of a
/// configuration measured twice is its figure): each session's best in turn,
/// sessions ordered by their best, then each session's second, and so on;
/// within a session by share of its peak (records.h relative_speed). A
/// session is the records that share a peak_gflops: one tune process's.
std::vector<Record> top_records(const std::vector<Record>& records, size_t k);

/// Measures every finalist still `ok` once per round in a fresh process,
/// interleaved (measure.h round_order); one that fails in any round is
/// dropped with the failure's status and detail. Stops early (figures left
/// at 0) when stop() says so.
void remeasure(const Runner& runner, std::vector<Finalist>& f, const TimingProtocol& protocol, int rounds,
               double timeout_s, double flops, double real_flops, double peak_gflops,
               const std::function<bool()>& stop);

/// Checks the ok finalists, best first, at every output element of `full`
/// (made with 0 check points; it replaces the runner's problem) until one
/// passes: its index, or -1. Each one that fails is dropped with the failure.
int full_check(Runner& runner, const ProblemData& full, std::vector<Finalist>& f, double timeout_s,
               const std::function<bool()>& stop);

/// Survivors first, by the duel's GFLOP/s (else re-measured, else search),
/// then the dropped.
void rank_finalists(std::vector<Finalist>& f);

/// The finalists as JSON (--json and finalists.json) and as a text table.
nlohmann::json finalists_json(const std::vector<Finalist>& f);
std::string finalists_table(const std::vector<Finalist>& f, int rounds, int duel_rounds = 0);

}  // namespace convtune
