// STREAM's triad beside a bench (triad.h).
#include "triad.h"

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/files.h"
#include "convtune/execution/compiler.h"

namespace convtune {

namespace {

// restrict and a static schedule: the loop vectorises with the ISA's flags, and
// each thread streams one contiguous share, as a P loop's share of a tensor.
// One thread runs outside OpenMP: entering a parallel region costs microseconds,
// a share of a small layer's time.
constexpr const char* kSource = R"(#include <stddef.h>
void ct_triad(float* restrict a, const float* restrict b, const float* restrict c, long n, int threads) {
  if (threads == 1) {
    for (long i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}
)";

}  // namespace

Triad::Triad(const Isa& isa, double bytes, int threads, const std::string& dir)
    : n_(triad_length(bytes)), threads_(threads), a_(n_, 0.0f), b_(n_, 1.0f), c_(n_, 2.0f) {
  const std::string src = dir + "/triad.c", so = dir + "/triad.so";
  write_work_file(src, kSource);
  const Compiler cc = Compiler::from_env(isa.cflags);
  const CompileResult built = compile_one(cc, {src, so, {"-O3", "-fopenmp"}});
  if (!built.ok)
    throw Error(fmt::format("the triad loop (the bandwidth yardstick) does not compile ({}); set CC to a working C "
                            "compiler with OpenMP",
                            built.log.substr(0, built.log.find('\n'))));
  lib_ = std::make_unique<DynLib>(so);
  triad_ = reinterpret_cast<void (*)(float*, const float*, const float*, long, int)>(lib_->symbol("ct_triad"));
}

std::function<void()> Triad::call() {
  return [this] { triad_(a_.data(), b_.data(), c_.data(), n_, threads_); };
}

}  // namespace convtune
