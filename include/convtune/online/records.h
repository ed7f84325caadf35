#pragma once
// The tuning log: one JSON object per line per measured candidate, appended
// and flushed as soon as it is measured, so a killed tuner loses at most the
// candidate in flight and --resume never measures anything twice.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace convtune {

constexpr int kRecordFormatVersion = 1;

struct Record {
  std::string layer;
  std::string shape;     // Shape::to_string()
  std::string config;    // configuration text (000 §3.3)
  std::string choice;    // microkernel choice text
  std::vector<std::string> microkernels;
  std::string strategy = "random";
  uint64_t seed = 0;
  int64_t trial = 0;     // 0-based index in this log
  std::string status;    // ok | compile_error | wrong_result | crash | timeout | load_error
  std::string detail;
  double seconds = 0;    // median per call
  std::vector<double> samples;
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

  nlohmann::json to_json() const;
  /// Throws Error naming the missing key.
  static Record from_json(const nlohmann::json& j);
};

/// Appends one record and flushes it to the file; throws Error when the log
/// cannot be written.
void append_record(const std::string& path, const Record& r);

/// Reads a log; a truncated last line (a killed writer) is skipped, any
/// other bad line is an Error naming the line.
std::vector<Record> read_records(const std::string& path);

}  // namespace convtune
