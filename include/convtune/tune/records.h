#pragma once
// The tuning log: one JSON object per line per measured candidate, appended
// with one write() as soon as it is measured, so a killed tuner loses at most
// the candidate in flight and --resume never measures anything twice.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convtune/core/machine_id.h"
#include "convtune/core/epilogue.h"
#include "convtune/execution/status.h"

namespace convtune {

constexpr int kRecordFormatVersion = 1;

/// Where a candidate measured before the search came from: --start-from's
/// log of this layer, or a neighbour of the store (neighbours.h). Written as
/// "seed_from": {"by": "start-from" | "transfer", "layer", "config", "log"};
/// records without it were proposed by the search.
struct SeedOrigin {
  enum By { start_from, transfer };
  By by = start_from;
  std::string layer;   // the tuned layer whose winner it was
  std::string config;  // that winner, before the lift to this layer
  std::string log;     // the log it was read from
  nlohmann::json to_json() const;
  /// Throws Error naming the key that is missing or wrong.
  static SeedOrigin from_json(const nlohmann::json& j);
};

struct Record {
  std::string layer;
  std::string shape;     // Shape::to_string()
  std::string config;    // configuration text (000 §3.3)
  std::string choice;    // microkernel choice text
  std::vector<std::string> microkernels;
  std::string strategy = "random";
  uint64_t seed = 0;
  int64_t trial = 0;     // 0-based index in this log
  Status status = Status::crash;  // any status; the default until something ran and reported
  std::string detail;
  double seconds = 0;    // median per call; with a clock probe at the peak_gflops speed (runner.h run_conv)
  std::vector<double> samples;
  double wall_seconds = 0;   // median wall-clock time per call; written when it differs from seconds
  double probe_gflops = 0;   // the clock probe's median speed beside the samples; written when probed
  double gflops = 0;     // nominal FLOPs / seconds
  double real_gflops = 0;  // multiply-adds not on padding / seconds
  double percent_peak = 0;
  double peak_gflops = 0;
  double compile_seconds = 0;
  std::string counter_names;  // "none: ..." when absent
  std::vector<long long> counters;
  std::string isa;
  std::string table;          // class table origin
  std::string table_fingerprint;
  std::string tool_version;
  std::string timestamp;
  std::string note;           // fallback microkernel, padded K, ...
  nlohmann::json search_info = nlohmann::json::object();  // what the strategy says (SearchStrategy::info)
  bool emulated = false;      // ran under an emulator: timings not meaningful
  int threads = 1;            // --threads: CPUs measured on (peak_gflops counts them all); written when > 1
  MachineId machine;          // where it was measured; unknown in records written before it was recorded
  Epilogue epilogue = Epilogue::none;  // --epilogue the kernel fuses; written when not none
  std::optional<SeedOrigin> seed_from;  // a seed measured before the search; written when set

  nlohmann::json to_json() const;
  /// Throws Error naming the key that is missing or has a wrong type or value
  /// ("key 'status' is missing").
  static Record from_json(const nlohmann::json& j);
};

/// A record's speed as a share of the peak its own process measured (the
/// clock probe's reference, runner.h): what compares across sessions whose
/// clock differed (one machine's peak loop can run a fifth slower in one
/// session than in the next). Its GFLOP/s when the peak is unknown (0).
double relative_speed(const Record& r);

/// Whether `a` ran faster than `b` by relative_speed: how the finalists (within
/// a session, finalist.h), the delivered kernel, export and merge rank records.
bool faster(const Record& a, const Record& b);

/// `r` as if measured in a process whose peak is `peak`: gflops, real_gflops,
/// seconds and samples scaled by peak / r.peak_gflops, peak_gflops set (wall
/// times unchanged); `r` itself when either peak is 0.
Record at_peak(Record r, double peak);

/// The statuses a record may have: all of them (status.h).
const std::vector<Status>& record_statuses();

/// Appends one record as one write() of the whole line; throws Error with the
/// real errno when the log cannot be written (a short write is undone).
void append_record(const std::string& path, const Record& r);

/// A log as read back: its complete records, and the torn tail (bytes after
/// the last '\n', left by a kill during a write or a full disk).
struct LogContents {
  std::vector<Record> records;
  std::vector<size_t> lines;  // 1-based line number of each record
  uint64_t complete_bytes = 0;  // up to and including the last '\n'
  uint64_t torn_bytes = 0;
};

/// Reads a log (no file, or a file that is not a regular file such as
/// /dev/null, reads as empty). Every complete line must be a valid record:
/// otherwise throws Error "log 'X' line N: <problem>; fix or remove that line".
LogContents read_log(const std::string& path);

/// Cuts a torn tail off the log so that the next record starts a line;
/// returns the bytes dropped (0: nothing to do).
uint64_t drop_torn_tail(const std::string& path, const LogContents& log);

/// The note to print after drop_torn_tail dropped `bytes`.
std::string torn_log_note(const std::string& path, uint64_t bytes);

/// The records of read_log (the torn tail ignored).
std::vector<Record> read_records(const std::string& path);

}  // namespace convtune
