#pragma once
// One generated convolution loaded into this process (dlopen), its weights
// packed once outside any timing, as a user's program holds it (packing is
// like oneDNN's weight reorder): bench's kernel and the finalists' duel
// (tune/finalist_duel.h) call it alike.
#include <string>

#include "convtune/core/aligned.h"
#include "convtune/execution/dynlib.h"
#include "convtune/execution/runner.h"

namespace convtune {

class LoadedKernel {
 public:
  /// Loads `so`, whose symbols are `fn`, `fn`_pack and `fn`_packed_floats
  /// (codegen/conv.h), and packs data's weights. `data` must outlive it. Throws
  /// Error when the file or a symbol is missing.
  LoadedKernel(const std::string& so, const std::string& fn, const ProblemData& data);
  /// One convolution of data's input into `out` (data.output_size() floats),
  /// with the epilogue's bias and residual when it has one.
  void run(float* out) const;

 private:
  using Plain = void (*)(const float*, const float*, float*);
  using WithEpilogue = void (*)(const float*, const float*, const float*, const float*, float*);
  DynLib lib_;
  const ProblemData& data_;
  AlignedFloats packed_;
  Plain plain_ = nullptr;
  WithEpilogue with_epilogue_ = nullptr;
};

}  // namespace convtune
