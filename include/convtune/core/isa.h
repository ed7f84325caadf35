#pragma once
// An instruction set is data (microkernels/isa/<name>.json), not code: vector
// width, register count, intrinsic spellings, compile flags and the
// microkernel space constraints. The generators read only this.
#include <string>
#include <vector>

namespace convtune {

struct IsaSpace {
  int out_min = 14, out_max = 28;      // w*h*k accumulators (000 §4.1)
  int total_min = 16, total_max = 36;  // w*h*k + r*s*c*k
  int max_unroll = 16;                 // bound on w, h, k, c
  std::vector<int> rs_values{1, 3, 5, 7};
  bool rs_square_when_both_above_1 = true;
};

// Bounds of the "taps" family (microkernels/CONTRACT.md): microkernels that
// reduce a whole square filter in registers. The rule itself is in
// src/ukernel/ukernel.cpp; it counts what the emitted code keeps live (the
// w*h*k accumulators, k weight vectors, the broadcast's register if the ISA
// needs one) against Isa::vector_registers.
struct IsaTapsSpace {
  int out_min = 14, out_max = 28;  // w*h*k accumulators
  std::vector<int> filters{3, 5, 7};  // r = s, one of these
  std::vector<int> c_values{1, 2, 4};
  int max_taps = 36;    // r*s*c bounds code size; c = 1 is always allowed
  int max_unroll = 16;  // bound on w, h, k
  // Registers the rule reserves for the input broadcast. The emitted code
  // always keeps one; AVX-512's 0 overcommits on purpose (CONTRACT.md).
  int broadcast_registers = 1;
  // Weight vectors of a tap the rule lets the emitted code re-read from
  // memory at each use instead of keeping in registers (ukernel/codegen.cpp
  // re-reads what the file cannot hold; x86 FMAs take them as operands).
  // At least one weight vector still counts as live.
  int reread_weights = 0;
};

// Bounds of the "depthwise" family (microkernels/CONTRACT.md "Depthwise
// microkernels"): channels in the lanes, c = 1, r and s the filter's. The
// rule is in src/ukernel/ukernel.cpp: w*h*k accumulators, one tap's weight
// vectors (less reread_weights, at least one) and input_registers for the
// input vector against Isa::vector_registers.
struct IsaDepthwiseSpace {
  int out_min = 1, out_max = 28;  // w*h*k accumulators
  std::vector<int> rs_values{1, 3, 5, 7};  // r and s, each one of these
  int max_unroll = 16;            // bound on w, h, k
  int input_registers = 1;        // 0 or 1: the input vector's register
  int reread_weights = 0;         // as IsaTapsSpace::reread_weights
};

// How code of an ISA of another architecture runs here (empty qemu: it cannot).
struct IsaEmulation {
  std::string cross_cc;               // default cross compiler; $CROSS_CC overrides
  std::string qemu;                   // user-mode emulator, e.g. "qemu-aarch64"
  std::vector<std::string> packages;  // Debian packages providing them
};

struct Isa {
  std::string name;         // "avx512"
  std::string description;  // one line for humans
  std::string arch;         // machine architecture, as uname -m says: "x86_64", "aarch64"
  int lanes = 16;           // f32 lanes per vector
  int vector_registers = 32;
  std::string header;       // "immintrin.h"
  std::string vector_type;  // "__m512"
  // Intrinsic templates; placeholders {ptr} {val} {a} {b} {acc}.
  std::string zero, load, store, broadcast, fma;
  // Lanes 0..{n}-1 only (the K tail, 0 < n < lanes): masked lanes read as 0
  // and are not written.
  std::string load_masked, store_masked;
  // Fused epilogues ("epilogue" block; CONTRACT.md "Epilogues"): lane-wise
  // {a} + {b}, max and min. The K tail reads bias and residual with
  // load_masked, so these need no masked form.
  std::string add, max, min;
  // Wino(2) ("winograd" block): lane-wise {a} - {b}, for its transforms.
  std::string sub;
  // Pf(w) ("prefetch" block): a read prefetch of the line at {ptr}, and the
  // floats in a cache line.
  std::string prefetch;
  int line_floats = 16;
  // Pf(o) (same block): a prefetch of the output line at {ptr} into L1, and
  // how many multiply-adds before the end of its reduction a call issues it.
  std::string prefetch_out;
  int output_ahead_fmas = 384;
  // Nt(o) ("stream" block): an output vector's store that bypasses the
  // caches, legal at addresses that are multiples of stream_align bytes, and
  // the fence that orders such stores ("" for none).
  std::string store_stream, stream_fence;
  int stream_align = 64;
  // Lanes(g) ("lane_groups" block, optional; space/config.h): the vector's
  // lanes span groups of Cg channels. {ptr} names lanes ints, {add} an int:
  // lane_index makes the index vector ptr[l] + add (of type index_type);
  // lane_permute gives lane l of {val} at lane {idx}[l]. Empty: no Lanes(g).
  std::string index_type, lane_index, lane_permute;
  std::string prelude;  // C emitted once before the microkernels (helpers the templates call)
  std::vector<std::string> cflags;     // for generated code
  std::vector<std::string> cpu_flags;  // /proc/cpuinfo flags the ISA needs
  int peak_accumulators = 24;          // independent FMA chains for the peak loop
  IsaSpace space;       // the paper family (000 §4.1)
  IsaTapsSpace taps;    // the taps family
  IsaDepthwiseSpace depthwise;  // the depthwise family
  IsaEmulation emulation;

  /// Fills a template: expand(fma, {{"a", x}, {"b", y}, {"acc", z}}).
  static std::string expand(const std::string& tmpl,
                            const std::vector<std::pair<std::string, std::string>>& args);
};

/// Names of the ISA descriptions shipped with the binary, best first.
std::vector<std::string> known_isas();
/// The first of known_isas() this CPU runs natively; throws Error if none.
std::string best_isa();
/// This machine's architecture (uname -m).
std::string host_arch();
/// Loads an ISA by name; throws Error listing the known names.
Isa load_isa(const std::string& name);
/// Parses an ISA description (JSON text); throws Error naming the bad key.
Isa parse_isa(const std::string& json_text, const std::string& origin);
/// True when this CPU can run code for the ISA: same architecture and the
/// ISA's flags (/proc/cpuinfo; on AArch64 also getauxval(AT_HWCAP)), as
/// capped by CONVTUNE_MAX_CPU_ISA.
bool cpu_supports(const Isa& isa);

/// $CONVTUNE_MAX_CPU_ISA (like oneDNN's ONEDNN_MAX_CPU_ISA): the best ISA
/// convtune may detect, so that e.g. =avx2 makes an AVX-512 host look
/// AVX2-only (tests of other hosts). "" when unset; throws Error when it
/// names no ISA.
std::string max_cpu_isa();
/// True when the cap hides this CPU flag: the flags that only ISAs better than
/// the cap need, and the flags named after those ISAs (avx512bw, avx512_vnni).
bool cpu_flag_hidden(const std::string& flag);

}  // namespace convtune
