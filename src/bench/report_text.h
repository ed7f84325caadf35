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

// The JSON key of an implementation's display name ("oneDNN" -> "onednn").
inline std::string bench_json_key(const std::string& name) {
  if (name == "oneDNN") return "onednn";
  if (name == "im2col+OpenBLAS") return "im2col_blas";
  if (name == "XNNPACK") return "xnnpack";
  if (name == "LIBXSMM") return "libxsmm";
  return name;
}

}  // namespace convtune
