#pragma once
// What bench and bench --library both print: the progress line on stderr and
// the JSON key of an implementation. One definition for both commands.
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "convtune/bench/bench_entry.h"
#include "convtune/execution/measure.h"

namespace convtune {

// "convtune: <text>" on stderr unless --quiet.
inline void bench_note(bool quiet, const std::string& text) {
  if (!quiet) std::fprintf(stderr, "convtune: %s\n", text.c_str());
}

// The implementations a bench compares, in the order it reports them: display
// name and JSON key. bench_from_json reads the keys back in this order.
struct BenchImpl {
  const char* name;
  const char* key;
};
inline constexpr BenchImpl kBenchImpls[] = {{"convtune", "convtune"},
                                            {"oneDNN", "onednn"},
                                            {"im2col+OpenBLAS", "im2col_blas"},
                                            {"XNNPACK", "xnnpack"},
                                            {"LIBXSMM", "libxsmm"},
                                            {"STREAM triad", "triad"}};  // bench's bandwidth yardstick (triad.h)

// The JSON key of an implementation's display name ("oneDNN" -> "onednn").
inline std::string bench_json_key(const std::string& name) {
  for (const BenchImpl& i : kBenchImpls)
    if (name == i.name) return i.key;
  return name;
}

// The other's time over the library's or convtune's (above 1: it is the
// faster); 0 when either did not run.
inline double speed_ratio(const BenchEntry* ours, const BenchEntry* other) {
  return ours && other && ours->ran() && other->ran() && ours->seconds > 0 ? other->seconds / ours->seconds : 0;
}

// Paired: of several processes the median of each one's own ratio (each timed
// both implementations interleaved, at one clock), else the ratio of the
// times; 0 when that is 0 (one of the two did not run).
inline double paired_ratio(double of_medians, const std::vector<double>& per_process) {
  return of_medians > 0 && !per_process.empty() ? median(per_process) : of_medians;
}

// One implementation's object of bench's or bench --library's JSON read
// back (its "missing" reason, or its times); throws nlohmann's exception for a
// field that is absent or of the wrong type.
BenchEntry entry_from_json(const std::string& name, const nlohmann::json& x);

}  // namespace convtune
