#pragma once
// What bench and bench --library both print: the progress line on stderr and
// the JSON key of an implementation. One definition for both commands.
#include <cstdio>
#include <string>

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

}  // namespace convtune
