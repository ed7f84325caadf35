#pragma once
// The closing comparison of `convtune tune`: oneDNN on the same shape, timed
// under the same protocol in a child pinned to the measuring core.
#include <string>

#include <nlohmann/json.hpp>

#include "convtune/online/tune.h"

namespace convtune {

struct OnednnComparison {
  bool available = false;  // oneDNN is in this build
  std::string error;       // it ran but failed (shape rejected, wrong output, ...)
  std::string impl;        // e.g. brgconv:avx512_core
  double seconds = 0;
  double gflops = 0;
  double ratio = 0;        // convtune's GFLOP/s over oneDNN's
};

/// Times oneDNN for r.shape with o's core and timing; never throws.
OnednnComparison compare_onednn(const TuneResult& r, const TuneOptions& o);

/// One line for tune's summary ("" when oneDNN is not in this build).
std::string onednn_text(const OnednnComparison& c, double peak_gflops);
/// {gflops, impl, ratio, seconds}, {error} or null.
nlohmann::json onednn_json(const OnednnComparison& c);

}  // namespace convtune
