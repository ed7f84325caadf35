#pragma once
// The one kernel-equals-reference harness of the tests: a generated
// convolution (or microkernel) is built, run on data with guard zones around
// its buffers, and every output element compared against the reference; and
// the one list of fixed-configuration convolution cases, a row per case with
// its K on each ISA (as XNNPACK generates its kernel tests from one spec).
// Used by tests/codegen/, tests/execution/neon_test.cpp and
// tests/ukernel/ukernel_codegen_test.cpp. Kernels of an ISA this CPU does not
// run go under its emulator (NEON under qemu-aarch64).
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "convtune/codegen/conv.h"
#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/core/shape.h"
#include "convtune/execution/runner.h"
#include "convtune/space/config.h"
#include "convtune/ukernel/codegen.h"

namespace convtune::test {

/// "" when this host runs `isa`'s kernels, natively or under emulation; else
/// why not (for GTEST_SKIP).
std::string cannot_run(const Isa& isa);
/// Whether `isa`'s kernels run under emulation here (the CPU does not run them).
bool emulated_here(const Isa& isa);

/// One kernel checked against the reference.
struct ConvCheck {
  Status status = Status::crash;  // ok when every output element equals the reference
  std::string detail;             // why, for anything but ok
  std::string source;  // the generated C
  std::vector<std::string> cflags;
  std::string counter_names;  // the driver's ("none: emulated ..." under qemu)
};

/// Generates `cfg` for `shape` (with `epilogue`), builds it with the driver
/// and runs it once: the driver compares every output element against the
/// reference (of `checked_as`; by default the kernel's own epilogue), checks
/// the guard zones around the output and the packed weights, reads the input
/// (bias, residual) against inaccessible pages and checks that bias and
/// residual stay unmodified. `threads` CPUs for the kernel's OpenMP threads.
ConvCheck check_conv(const Isa& isa, const Shape& shape, const Config& cfg, Epilogue epilogue = Epilogue::none,
                     int threads = 1, std::optional<Epilogue> checked_as = std::nullopt);
/// The same for C source of one's own defining ct_conv (and ct_conv_pack,
/// ct_conv_packed_floats) with the signature of `epilogue`.
ConvCheck check_conv_source(const Isa& isa, const Shape& shape, const std::string& c_source,
                            const std::vector<std::string>& cflags, int threads, Epilogue epilogue = Epilogue::none,
                            std::optional<Epilogue> checked_as = std::nullopt);

/// Several kernels built and checked with one driver (one compile of it), as
/// check_conv checks each; all with an epilogue or all without (the driver's
/// entry signature). The results in the order of `specs`.
struct ConvSpec {
  Shape shape;
  Config cfg;
  Epilogue epilogue = Epilogue::none;
};
std::vector<ConvCheck> check_convs(const Isa& isa, const std::vector<ConvSpec>& specs);
/// check_convs's failures, a line each (shape, configuration, detail); "" when every kernel is ok.
std::string conv_failures(const std::vector<ConvSpec>& specs, const std::vector<ConvCheck>& checked);

/// Up to `n` configurations the tuner's sampler draws for `shape` at
/// `threads` that `keep` admits (every one without it), seeded, from a
/// table of the ISA without microkernels (the families' enumeration), in
/// at most 400 draws.
std::vector<Config> sampled_configs(const Isa& isa, const Shape& shape, size_t n, int threads, unsigned seed,
                                    const std::function<bool(const Config&)>& keep = {});

/// A profile unit's C source: the cases' microkernels uk0, uk1, ..., then
/// `extra`, then ct_profile_fns[] of uk0.. and `extra_fns` (microkernels/driver.c).
std::string ukernel_unit(const Isa& isa, const std::vector<UkCase>& cases, const std::string& extra = "",
                         const std::vector<std::string>& extra_fns = {});
/// Builds `unit` with the driver and checks ct_profile_fns[i] at claimed[i]'s
/// sizes and layout against the contract's reference (overwrite on NaN
/// garbage, then accumulate; the gaps between output rows and pixels keep
/// their values): each one's status (ok, wrong_result, crash, timeout).
struct UkCheck {
  Status status = Status::crash;
  std::string detail;  // what differed, or the compiler's log
};
std::vector<UkCheck> run_ukernel_unit(const Isa& isa, const std::string& unit, const std::vector<UkCase>& claimed);
/// Each case's microkernel checked against the scalar reference
/// (reference_ukernel): natively loaded into this process, accumulating onto
/// random output then overwriting NaN garbage, every float of the buffers
/// and 64 guard floats after each compared; emulated, through run_ukernel_unit.
/// Per case.
std::vector<UkCheck> check_ukernels(const Isa& isa, const std::vector<UkCase>& cases);

/// A convolution case of the one list: the shape with K for its ISA, the
/// configuration, the threads it runs on.
struct ConvCase {
  std::string shape;
  std::string config;
  int threads = 1;
};
void PrintTo(const ConvCase& c, std::ostream* os);
/// The list's cases of `isa` ("avx512", "avx2", "neon") that run on `threads`.
std::vector<ConvCase> conv_cases(const std::string& isa, int threads = 1);

/// The largest divisor of n no larger than cap (1 when none is above 1).
int64_t largest_divisor(int64_t n, int64_t cap);
/// A valid configuration of any shape for the border and group tests: the
/// taps in the microkernel (taps) or the paper's tap loops outside it, a
/// channel split `c_outer` above the k loop; under the group loops `outer`
/// ("R(g)", "P(2,g), R(g)"; "" for none) it tiles one group's problem, and
/// `tail` appends switches (", Pf(w)", ", Nt(o)").
Config blocked_config(const Shape& s, int lanes, bool taps, int64_t c_outer = 1, const std::string& outer = "",
                      const std::string& tail = "");

}  // namespace convtune::test
