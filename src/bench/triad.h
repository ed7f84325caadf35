#pragma once
// The memory-bandwidth yardstick beside a bench: STREAM's triad (a = b + s*c,
// [McCalpin1995]) over three arrays that together hold a layer's
// tensor_bytes, built with $CC and the ISA's flags like the kernels, on the
// bench's threads (OpenMP, as convtune's P loops). It answers "how close to
// the bandwidth at this working set": a depthwise layer moves few FLOPs per
// byte, so its GB/s, not its % of peak, says how much is left.
#include <functional>
#include <memory>
#include <string>

#include "convtune/core/aligned.h"
#include "convtune/core/isa.h"
#include "convtune/execution/dynlib.h"

namespace convtune {

/// Each array's floats for a working set of `bytes` (3 x 4 bytes per element).
inline long triad_length(double bytes) { return bytes / 12.0 > 16 ? static_cast<long>(bytes / 12.0) : 16L; }
/// STREAM's count of what one triad call moves: 3 x 4 bytes per element (the
/// write-allocate not counted).
inline double triad_bytes(double bytes) { return 12.0 * double(triad_length(bytes)); }

class Triad {
 public:
  /// Arrays of bytes / 12 floats each (so 3 x 4 bytes per element in all),
  /// built in dir. Throws Error when the source does not compile.
  Triad(const Isa& isa, double bytes, int threads, const std::string& dir);
  std::function<void()> call();
  double bytes() const { return 12.0 * double(n_); }

 private:
  long n_;
  int threads_;
  AlignedFloats a_, b_, c_;
  std::unique_ptr<DynLib> lib_;
  void (*triad_)(float*, const float*, const float*, long, int) = nullptr;
};

}  // namespace convtune
