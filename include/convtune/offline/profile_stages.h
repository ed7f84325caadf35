#pragma once
// run_profile's stages, in the order run_profile calls them
// (profile_stages.cpp): setup and the journal, the runner and the start
// peak, the forms (and what the journal already holds), the units, compile,
// measure, re-measure, select. Each is a function of the ProfileSession the
// earlier ones filled, so that each can be run, and tested, alone. For the
// profiler and its tests only: callers run the whole of run_profile.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convtune/core/isa.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/runner.h"
#include "convtune/execution/workdir.h"
#include "convtune/offline/profile.h"
#include "convtune/offline/profile_journal.h"
#include "convtune/ukernel/ukernel.h"

namespace convtune {

/// A form of a microkernel: its plain code or a fenced variant (ukernel.h
/// TapFence). Without a fence GCC may keep input broadcasts live across taps
/// and spill accumulators, and a fenced form can then run markedly faster
/// than the plain one. The online stage tunes the fence, so a microkernel is
/// admitted on its fastest form, and the table says which one that is.
struct ProfileForm {
  size_t uk;  // index into the profile's microkernels
  TapFence fence;
};

/// One profile's state, filled stage by stage. Members are declared in the
/// order the stages fill them (destroyed in reverse: the runner before its
/// work directory).
struct ProfileSession {
  explicit ProfileSession(const ProfileOptions& o) : opt(o), t_start(std::chrono::steady_clock::now()) {}
  ProfileSession(const ProfileSession&) = delete;
  ProfileSession& operator=(const ProfileSession&) = delete;

  const ProfileOptions opt;  // a copy: a session may outlive the options it was made from
  std::chrono::steady_clock::time_point t_start;

  // profile_setup.
  Isa isa;
  bool emulated = false;
  int cpu = -1;
  std::vector<UkSizes> ks;               // the microkernels profiled
  std::map<std::string, size_t> index;   // by ukernel_name
  std::map<std::string, UkSizes> names;  // by ukernel_name, for read_journal
  int per = 1;                           // forms per translation unit
  ProfileJournal journal;
  bool resuming = false;                 // the journal has a header: continue it

  // profile_start_runner.
  std::optional<WorkDir> wd;
  std::optional<Runner> runner;
  ProfileResult out;                     // out.table: what the profile returns

  // profile_enumerate_forms: every form, its figure so far, and which passes it has had.
  std::vector<ProfileForm> forms;
  std::vector<UkMeasured> res;
  std::vector<char> first_done, again_done;
  std::vector<size_t> first_form;        // per microkernel: its first form (forms are in microkernel order)
  double below = 0;                      // threshold * start peak, GFLOP/s (the dense families' cut)

  // profile_group_units.
  std::vector<std::vector<size_t>> members;  // form indices per unit
  std::vector<size_t> unit_of;               // per form

  // profile_compile.
  std::vector<CompileJob> jobs;          // per unit
  std::vector<CompileResult> built;      // per unit
  std::vector<std::string> unit_key;     // per unit: its source's hash in units_dir ("" without a journal)
};

/// Loads the ISA, checks --threshold and the CPU, enumerates the
/// microkernels (the quick subset with opt.quick), and reads the journal:
/// refused without --resume, repaired with it. Measures and compiles nothing.
void profile_setup(ProfileSession& s);

/// The work directory, the runner and the table's description; the journal's
/// header checked against this run (resumed) or the start peak measured and
/// the header written (new).
void profile_start_runner(ProfileSession& s);

/// Every form of every microkernel, and the figures the journal already holds.
void profile_enumerate_forms(ProfileSession& s);

/// The translation units: up to opt.per_unit consecutive forms, all timed
/// with one reduction length (profile_nc).
void profile_group_units(ProfileSession& s);

/// Writes and compiles every unit that still has work (a journaled run's
/// kept units are reused), in batches, so that Ctrl-C does not wait for all.
void profile_compile(ProfileSession& s);

/// The first measurement of every form not yet measured, one unit at a time.
void profile_measure(ProfileSession& s);

/// When a microkernel's fastest form is measured a second time: `decided`
/// once every form has its first measurement and it is below the threshold
/// (a dense one: of the start peak; a depthwise one: of the fastest
/// microkernel of its filter, class_table.h select_and_classify, known once
/// every one of that filter is measured); `possible` also takes a measured
/// depthwise one whose filter is not all measured yet, for a resumed run to
/// compile the units its re-measurement may need.
enum class AgainMode { decided, possible };

/// Per microkernel (s.ks): whether it wants its second measurement.
std::vector<char> profile_wants_again(const ProfileSession& s, AgainMode mode);

/// The fastest form of each microkernel below the threshold (a depthwise
/// one's: of the fastest of its filter, class_table.h), measured once more;
/// its better figure is kept.
void profile_remeasure(ProfileSession& s);

/// True, and the result marked interrupted, once Ctrl-C has come.
bool profile_stopped(ProfileSession& s);

/// The end peak, every microkernel's record (its fastest form's figure) and
/// the selection and classes (class_table.h select_and_classify).
void profile_select(ProfileSession& s);

}  // namespace convtune
