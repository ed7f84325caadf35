#pragma once
// Code generation for a whole convolution from a configuration (000 §3.4):
// the Lseq -> Seq rewrite, then one pass over the specifiers; microkernels
// come from ukernel_codegen (AVX-512, or any ISA described as data).
#include <string>
#include <vector>

#include "convtune/space/config.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"

namespace convtune {

struct CodegenInput {
  Shape shape;
  Config config;              // must pass validate_config
  std::string function_name = "ct_conv";
  std::string provenance;     // e.g. class table origin and fingerprint, for the comment block
  Epilogue epilogue = Epilogue::none;  // fused into the microkernel call that completes each output block
};

struct GeneratedKernel {
  std::string c_source;  // self-contained: includes its microkernels
  std::string header;    // prototypes, layouts and size macros
  int64_t packed_floats = 0;
  int64_t threads = 1;   // the product of the configuration's P counts
  /// Compiler flags the file needs beyond the ISA's: {"-fopenmp"} when it has
  /// a parallel loop, else none. Every build of generated code adds them
  /// (CompileJob::flags), so a single-threaded kernel never links OpenMP.
  std::vector<std::string> cflags;
};

/// Floats of the packed weight buffer: Kp * C * R * S (Kp = K rounded up to
/// the vector length; the extra columns are zero).
int64_t packed_weight_floats(const Shape& shape, int64_t lanes);

/// Generates (microkernels/CONTRACT.md, "Generated convolutions"):
///   const unsigned long NAME_packed_floats;
///   void NAME_pack(const float *restrict kcrs, float *restrict packed);
///   void NAME(const float *restrict input, const float *restrict packed,
///             float *restrict output);
/// input:  [N][H][W][C] (NHWC), not padded: padding taps are never multiplied
/// kcrs:   [K][C][R][S] as frameworks store them; NAME_pack writes the packed
///         buffer once, outside the timed call
/// output: [N][Ho][Wo][K], exactly K wide, overwritten (no need to clear it)
/// With an epilogue the entry point is instead
///   void NAME(const float *restrict input, const float *restrict packed,
///             const float *restrict bias, const float *restrict residual,
///             float *restrict output);
/// bias [K]; residual [N][Ho][Wo][K] for bias,add, else NULL (not read).
/// Throws Error if the configuration does not fit the shape.
GeneratedKernel generate_conv(const Isa& isa, const CodegenInput& in);

}  // namespace convtune
