#pragma once
// run_tune's stages, in the order run_tune calls them (tune_stages.cpp):
// setup, transfer, runner, announce, search, peak re-check, finalists,
// deliver. Each is a function of the TuneSession the earlier ones filled, so
// that each can be run, and tested, alone. For the tuner and its tests only: callers run
// the whole of run_tune (tune.h).
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convtune/codegen/conv.h"
#include "convtune/core/file_lock.h"
#include "convtune/core/isa.h"
#include "convtune/core/machine_id.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/measure.h"
#include "convtune/execution/runner.h"
#include "convtune/execution/workdir.h"
#include "convtune/offline/class_table.h"
#include "convtune/search/search.h"
#include "convtune/space/config.h"
#include "convtune/space/space.h"
#include "convtune/tune/records.h"
#include "convtune/tune/tune.h"

namespace convtune {

/// One tune's state, filled stage by stage. Members are declared in the
/// order the stages fill them; they are destroyed in reverse, so the runner
/// goes before its work directory and the log's lock is released last.
struct TuneSession {
  explicit TuneSession(const TuneOptions& o) : opt(o), t0(std::chrono::steady_clock::now()) {}
  TuneSession(const TuneSession&) = delete;
  TuneSession& operator=(const TuneSession&) = delete;

  const TuneOptions opt;  // a copy: a session may outlive the options it was made from
  std::chrono::steady_clock::time_point t0;
  TuneResult res;

  // tune_setup: the target, the log, the space and the strategy.
  Isa isa;
  int cpu = -1;
  std::vector<int> cpus;              // measuring_cpus(cpu, threads)
  ClassTable table;
  std::string table_warning;          // fingerprint_warning: said once the log is checked too
  Space space;
  std::vector<std::string> notes;     // joined into every record's note and the result's notes
  SearchOptions sopt;
  MachineId here;                     // every record names it (merge.h)
  std::string fn;                     // the generated function's name
  std::string out_dir;
  std::optional<FileLock> lock;       // one tuner per log (not for /dev/null and the like)
  LogContents log;                    // the resumed records and their line numbers
  std::vector<Config> previous_configs;  // log.records' configurations, observed once the peak is known
  std::unique_ptr<SearchStrategy> strategy;
  std::deque<Config> starts;          // --start-from's and the neighbours' configurations, measured first
  std::map<std::string, SeedOrigin> seed_origins;  // by config text: where each of starts came from
  bool transfer_done = false;         // tune_seed_transfer ran
  bool no_finalists = false;          // a budget's closing phase had no room: the best alone is checked

  // tune_start_runner.
  std::optional<WorkDir> wd;
  std::optional<Runner> runner;

  // tune_search.
  TimingProtocol protocol;
  int jobs = 1;                                    // parallel compilations
  bool search_ready = false;                       // the problem set and the protocol fixed
  bool exhausted = false;                          // the strategy had nothing left to propose
  double measure_s = 0;                            // wall time of this run's verify-and-time runs
  std::optional<std::chrono::steady_clock::time_point> stop_at;  // no candidate measured after it
  std::map<std::string, GeneratedKernel> kernels;  // by config text, for the best one
  std::vector<Record> run_records;                 // this run's, for the finalists
  std::map<std::string, std::string> exe_of;       // ok candidates' executables, by config text
};

/// Checks the options, loads the ISA and the class table, builds the space,
/// opens (and locks) the log and checks that every resumed record belongs to
/// this tune, seeds --start-from, cuts a torn last line; then says the
/// table's warning. Measures nothing and compiles nothing. Throws Error, with
/// the message the CLI prints, for anything that does not fit.
void tune_setup(TuneSession& s);

/// Transfer from tuned neighbours (neighbours.h): with opt.transfer_store,
/// the store's nearest neighbours' winners, lifted to this space, join the
/// configurations measured first (those already in the log left out); once
/// per session. Returns the notes it added to s.notes (what each neighbour
/// gave, or why its winner was skipped). Measures nothing.
std::vector<std::string> tune_seed_transfer(TuneSession& s);

/// The work directory, the runner (its driver compiled) and the peak; the
/// resumed records observed at that peak (records.h at_peak).
void tune_start_runner(TuneSession& s);

/// The progress lines on stderr before the search: the ISA, what is tuned,
/// the space and the peak, the notes, what is resumed.
void tune_announce(const TuneSession& s);

/// Generates cs (named <work dir>/<names[i]>) into gen and cjobs and builds
/// them in parallel: the search's batches and the finalists from a resumed log.
std::vector<CompileResult> tune_generate_and_build(const TuneSession& s, const std::vector<Config>& cs,
                                                   const std::vector<std::string>& names,
                                                   std::vector<GeneratedKernel>& gen, std::vector<CompileJob>& cjobs);

/// The problem set in the runner, the timing protocol and the compile jobs:
/// once per session (tune_search and tune_search_batch call it; the closing
/// stages need it when no batch ran).
void tune_prepare_search(TuneSession& s);

/// The search loop until the budget is spent, the strategy has nothing left
/// or Ctrl-C: batches proposed, generated and compiled, then each candidate
/// measured and recorded in the log before the next one is measured.
void tune_search(TuneSession& s);

/// tune_search for at most n more candidates (never past --trials), without
/// the progress bar: one batch of the budget scheduler (network_tune.h). The
/// session stays open for the next batch; s.stop_at, when set, ends it early.
void tune_search_batch(TuneSession& s, int64_t n);

/// The record of candidate c as trial s.res.trials: a compile error when
/// built is not ok (measured is then unused), else measured's figures.
Record tune_record_of(const TuneSession& s, const Config& c, const CompileResult& built, const RunResult& measured);

/// Appends r to the log and counts it: the strategy observes it, the best
/// (and its generated kernel k) and the executable of an ok one are kept.
void tune_take_record(TuneSession& s, const Config& c, const Record& r, const std::string& exe,
                      const GeneratedKernel& k);

/// The peak measured again after a search that measured something: a note
/// when it moved by more than 5 %.
void tune_recheck_peak(TuneSession& s);

/// The K best re-measured interleaved, dueled, ranked and the winner checked
/// at every output element (finalist.h); <out>/finalists.json written.
void tune_finalists(TuneSession& s);

/// The result's notes, and the best kernel's .c and .h in the out directory
/// (regenerated from its configuration when it comes from a resumed log).
void tune_deliver(TuneSession& s);

}  // namespace convtune
