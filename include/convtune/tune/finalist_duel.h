#pragma once
// The finalists' duel: the last word on which finalist is fastest.
// The search's figures and the re-measure (finalist.h) each time one kernel
// per process, at another moment, scaled by a clock probe. The probe's
// reading can move by a tenth or more from sample to sample, a log's best
// can sit many points of peak above what bench then
// measures, and the re-measure can crown a kernel (a Pf(w) form, say) that
// short interleaved calls put a few % behind another finalist (its plain
// form). So the finalists, built as
// shared objects, run in one child process (`convtune internal-duel`, spawned
// as tune spawns oneDNN: the tuner never forks or loads generated code), their
// samples short and interleaved in measure.h round_order, as bench interleaves
// convtune with oneDNN: neighbours share the clock, so no probe is needed.
// The rounds are split among a few children in turn, since one process's
// buffer and code addresses can favour one kernel (bench --processes).
#include <functional>
#include <string>
#include <vector>

#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "convtune/tune/finalist.h"

namespace convtune {

struct DuelSetup {
  Isa isa;
  Shape shape;
  Epilogue epilogue = Epilogue::none;
  std::string origin;      // the kernels' provenance line (codegen/conv.h)
  int cpu = 0;             // the child pins itself to measuring_cpus(cpu, threads) (machine.h)
  int threads = 1;
  std::string dir;         // the work directory: duelNN.c and duelNN.so
  int jobs = 1;            // parallel compilations
  std::vector<std::string> pch_flags;  // the tune's Runner::pch_flags()
  int rounds = 20;         // samples per finalist, one per round, over all the children
  double min_ms = 20;      // one sample lasts at least this long
  double timeout_s = 30;   // without a new line from the child, it counts as hung
  size_t check_points = 4000;  // output elements checked before timing (0: all)
  int processes = kDuelChildren;  // children, one after another, each with its own buffers: rounds are split among them
};

/// Builds every `ok` finalist and times them in `processes` children in turn;
/// sets each one's duel_gflops (the median of its children's medians) and
/// duel_iqr (its pooled samples' interquartile range over their median, in %). A finalist that fails to build, computes wrong values,
/// crashes or hangs the child is dropped with that status and a "duel: "
/// detail, and the duel goes on without it. Returns a note for the tune's
/// summary ("" when every survivor was timed); figures stay 0 when the duel
/// could not be run at all. Does nothing with fewer than two `ok` finalists.
std::string duel(const DuelSetup& s, std::vector<Finalist>& f, const std::function<bool()>& stop);

/// A finalist's duel time from its samples in each child: the median of the
/// children's medians (0 with none), so one child's favourite does not win.
double duel_seconds(const std::vector<std::vector<double>>& per_child);

/// The child's side: pins itself to measuring_cpus(cpu, threads), loads each shared object (its
/// function named as the file, loaded_kernel.h), checks it at `check_points`
/// output elements, then times the correct ones. Prints JSON lines:
/// {"running":i} before each check and sample (so a crash names its kernel),
/// {"index":i,"status":"wrong_result","detail":".."} for a wrong one, and
/// last {"status":"ok","samples":[[s, ..] per kernel, empty when wrong]}
/// or {"status":"error","detail":".."}. Returns the exit code.
int duel_child(const Shape& shape, Epilogue epilogue, int cpu, int threads, double min_ms, int rounds,
               size_t check_points, const std::vector<std::string>& sos);

}  // namespace convtune
