#include "convtune/execution/loaded_kernel.h"

namespace convtune {

LoadedKernel::LoadedKernel(const std::string& so, const std::string& fn, const ProblemData& data)
    : lib_(so), data_(data) {
  packed_.resize(*reinterpret_cast<const unsigned long*>(lib_.symbol(fn + "_packed_floats")));
  auto pack = reinterpret_cast<void (*)(const float*, float*)>(lib_.symbol(fn + "_pack"));
  pack(data.weights.data(), packed_.data());
  // With an epilogue the signature has bias and residual (codegen/conv.h).
  if (data.epilogue == Epilogue::none)
    plain_ = reinterpret_cast<Plain>(lib_.symbol(fn));
  else
    with_epilogue_ = reinterpret_cast<WithEpilogue>(lib_.symbol(fn));
}

void LoadedKernel::run(float* out) const {
  if (plain_) return plain_(data_.input.data(), packed_.data(), out);
  const float* residual = data_.residual.empty() ? nullptr : data_.residual.data();
  with_epilogue_(data_.input.data(), packed_.data(), data_.bias.data(), residual, out);
}

}  // namespace convtune
