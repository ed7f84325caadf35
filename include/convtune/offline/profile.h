#pragma once
// The offline stage (000 §4.1): generate every microkernel the ISA admits,
// compile them in parallel, measure each alone against the measured peak,
// keep those above the threshold and group them into classes.
#include <string>
#include <vector>

#include "convtune/offline/class_table.h"
#include "convtune/core/isa.h"

namespace convtune {

struct ProfileOptions {
  std::string isa = "avx512";
  bool emulate = false;   // an ISA of another architecture under qemu-user (runner.h)
  double threshold = 0.80;
  bool quick = false;     // a small representative subset
  int cpu = -1;           // measuring core; -1 = the last one
  int jobs = 0;           // parallel compilations; 0 = the cores but one
  int per_unit = 16;      // microkernels per translation unit
  double min_ms = 4;      // one measurement lasts at least this long
  int repeat = 5;         // measurements kept (median)
  bool quiet = false;
  std::string keep_dir;   // keep generated sources here (empty: temporary)
  std::string journal;    // journal every measurement here (profile_journal.h); "" = none
  bool resume = false;    // continue the journal instead of refusing it
};

struct ProfileResult {
  ClassTable table;            // complete unless interrupted
  bool interrupted = false;    // Ctrl-C: the journal holds everything measured
  size_t resumed_first = 0, resumed_again = 0;    // measurements read back from the journal
  size_t measured_first = 0, measured_again = 0;  // measured by this run (forms: plain and fenced, profile_stages.h)
};

/// The families `convtune profile` measures: the dense ones (ukernel.h
/// ukernel_families) and "depthwise" when the ISA's depthwise_space admits any.
std::vector<std::string> profiled_families(const Isa& isa);

/// Every microkernel a full profile measures: the dense families'
/// (enumerate_ukernels(isa)), then the depthwise family's.
std::vector<UkSizes> profiled_ukernels(const Isa& isa);

/// The quick subset: for every dense family and (r, s) pair, the microkernels
/// at the edges of each size, plus the BLIS-like (2,1,12,1,1,1) and one
/// h-interval class; for the depthwise family, per square filter (the ones
/// depthwise layers have), the edges of k, w and h and the class k2w4 (any h).
std::vector<UkSizes> quick_subset(const Isa& isa);

/// The reduction length (c steps) a microkernel is profiled with. 000 §4.1
/// repeats the block 512 times along c. A whole-filter (taps) microkernel
/// reads r*s times more weights per step: at 512 steps a 7x7 one streams 6 MB
/// of weights from L3 and measures as memory-bound, which it never is in a
/// convolution (oneDNN's brgconv sizes its c blocks to stay in L2). Its
/// reduction is halved (to 16 at least) until its weights fit half of this
/// machine's L2 (l2_bytes; 0 = unknown, taken as 2 MiB), the rest left to the
/// input rows. A fixed 1 MiB (half of a 2 MiB L2) would put k3c2w2h2r3s3's
/// 884 KB of weights past a 512 KiB L2 (AMD Zen 3's): it would measure at
/// half its speed with this rule, and few taps microkernels would be selected.
/// A depthwise microkernel takes the same rule: each of its c steps reads r*s
/// new weight vectors per channel vector over the same input block, and a
/// convolution keeps a block's taps cached across all its pixels (at 512
/// steps a k16 7x7 one would stream 25 MB of weights from L3).
int64_t profile_nc(const Isa& isa, const UkSizes& u, int64_t l2_bytes);

/// Runs the whole offline stage (or the rest of a journaled one) and returns
/// the table (not yet written). Throws Error for a journal that exists without
/// opt.resume, is invalid, or was started with other options or elsewhere.
ProfileResult run_profile(const ProfileOptions& opt);

}  // namespace convtune
