#pragma once
// The per-ISA class table written by `convtune profile` (000 §4.1, Fig. 6):
// every profiled microkernel with its speed, and the classes of selected
// microkernels (same sizes but h). Its JSON keys are a public format.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convtune/core/machine.h"
#include "convtune/execution/compiler.h"
#include "convtune/execution/status.h"
#include "convtune/ukernel/ukernel.h"

namespace convtune {

// 2: microkernels carry "family" and the table lists the "families" profiled.
// 3: a microkernel whose fastest measured form is fenced carries "fence"
//    ("F(r)" or "F(s)", ukernel.h TapFence). Versions 1 and 2 are still read
//    (no fence: every figure is the plain kernel's).
constexpr int kTableFormatVersion = 3;

struct UkRecord {
  std::string name;
  UkSizes sizes;
  std::string family = "paper";  // ukernel_family(); one of ClassTable::families
  Status status = Status::ok;  // ok | compile_error | crash | timeout | wrong_result (never load_error)
  double gflops = 0;
  double percent_peak = 0;  // 0..100+
  bool selected = false;
  TapFence fence = TapFence::none;  // the form gflops was measured in: the fastest (profile_stages.h)
  std::vector<long long> counters;  // per call, names in ClassTable::counters; empty when absent
};

struct UkClass {
  UkSizes sizes;       // h is meaningless here (set to 0)
  std::vector<int> h;  // sorted h of the selected members
};

struct ClassTable {
  int format_version = kTableFormatVersion;
  std::string isa;
  MachineInfo machine;
  CompilerInfo compiler;
  std::string created;     // ISO 8601 UTC
  std::string tool_version;
  double peak_gflops = 0;  // the 100% reference
  double peak_start_gflops = 0, peak_end_gflops = 0;
  double threshold = 0.80;
  bool quick = false;      // profiled with --quick (a subset)
  bool emulated = false;   // profiled under an emulator: timings not meaningful
  bool resumed = false;    // finished by `profile --resume` from a journal (profile_journal.h)
  std::string counters;    // "PAPI_TOT_CYC,..." or "none: <why>"
  std::vector<std::string> families{"paper"};  // the families profiled, in profiled_families() order (profile.h)
  double wall_seconds = 0;
  std::vector<UkRecord> microkernels;
  std::vector<UkClass> classes;

  std::string origin;  // where it was read from (not serialised)

  /// Marks the selected microkernels and rebuilds `classes`. A dense one is
  /// selected when percent_peak >= threshold*100 (000 §4.1: near the FMA
  /// peak). A depthwise one issues a vector load per FMA (CONTRACT.md
  /// "Depthwise microkernels") and is bound by loads, below the FMA roof
  /// (the roofline model: a kernel's attainable peak is the roof of the
  /// resource that binds it), so it is ranked within its family instead:
  /// selected when its gflops reach threshold times the fastest depthwise
  /// microkernel of the same filter (r, s) in the table. Per filter, because a
  /// depthwise shape takes r = R and s = S only: every filter measured keeps
  /// at least its fastest microkernel, so its spaces come from the table.
  void select_and_classify();
  /// The record of given sizes, or nullptr.
  const UkRecord* find(const UkSizes& u) const;
  /// Selected microkernels.
  std::vector<UkRecord> selected() const;
};

/// Per filter (r, s): the fastest depthwise microkernel's gflops among those
/// that ran correctly (the reference select_and_classify ranks them against).
std::map<std::pair<int, int>, double> depthwise_best(const std::vector<UkRecord>& microkernels);

nlohmann::json table_to_json(const ClassTable& t);
/// Throws Error naming the origin and the missing or bad key.
ClassTable table_from_json(const nlohmann::json& j, const std::string& origin);

/// Writes the table; throws Error when the file cannot be written.
void write_table(const ClassTable& t, const std::string& path);
/// Reads a table file; throws Error for a missing, truncated or corrupt file.
ClassTable read_table(const std::string& path);

/// Where `profile` writes by default: $XDG_CACHE_HOME/convtune/tables/<isa>.json
/// (or ~/.cache/convtune/tables/<isa>.json).
std::string default_table_path(const std::string& isa);
/// The table to use: `path` if given; else the user's profiled table if it
/// exists; else the shipped configs/tables/<isa>.json embedded in the binary.
/// Throws Error if none exists.
ClassTable load_table(const std::string& isa, const std::optional<std::string>& path);
/// A one-line warning when the table's machine fingerprint differs from this
/// CPU (suggesting `convtune profile`), or "" when it matches.
std::string fingerprint_warning(const ClassTable& t);

}  // namespace convtune
