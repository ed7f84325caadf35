#pragma once
// Emits C for one microkernel instance from the ISA description; the contract
// is microkernels/CONTRACT.md.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "convtune/core/epilogue.h"
#include "convtune/core/isa.h"
#include "convtune/ukernel/ukernel.h"

namespace convtune {

/// Element strides baked into an instance (names as in CONTRACT.md).
struct UkLayout {
  int64_t in_row = 0, in_pix = 0;              // IROW, IPIX
  int64_t stride = 1, stride_w = 1;            // ST (output rows), STW (output columns)
  int64_t dil_h = 1, dil_w = 1;                // DH, DW: tap r reads row r*DH, tap s column s*DW
  int64_t w_r = 0, w_s = 0, w_c = 0;           // WR, WS, WC
  int64_t w_it = 0;                            // WIT: weights step per c iteration
  int64_t out_row = 0, out_pix = 0;            // OROW, OPIX
};

/// Which part of the block touches real data, for instances at the image
/// border and at the K tail (CONTRACT.md "Border and tail variants"). Taps
/// outside [r_lo, r_hi) for output row h (and [s_lo, s_hi) for column w)
/// read padding: their multiply-adds are not emitted. Output channels
/// k_lanes and above do not exist: they are neither read nor written.
/// With an epilogue the instance takes three more arguments, `int last,
/// const float *B, const float *Q`, and when `last` is set applies the
/// epilogue to its accumulators before the store (CONTRACT.md "Epilogues");
/// only generated convolutions use it, profile measures the plain store.
struct UkVariant {
  std::vector<std::pair<int, int>> rows;  // per h: [r_lo, r_hi); empty = every tap
  std::vector<std::pair<int, int>> cols;  // per w: [s_lo, s_hi); empty = every tap
  int k_lanes = 0;                        // 0 = size_k * lanes (no tail)
  Epilogue epilogue = Epilogue::none;
  TapFence fence = TapFence::none;  // not part of full(): it changes the code, not what it computes
  // Pf(w) (space/config.h): cache lines prefetched per c step, 0 for none;
  // not part of full() either. The function then takes `const float *P,
  // long pn`: c steps it < pn prefetch lines it*prefetch .. it*prefetch +
  // prefetch - 1 from P on (CONTRACT.md "Prefetch").
  int prefetch = 0;
  // Pf(o) (space/config.h): at c step nc - ceil(isa.output_ahead_fmas / the
  // step's multiply-adds), or 0 when nc is smaller, prefetch every line of
  // the block's output (CONTRACT.md "Prefetch"); not part of full().
  bool prefetch_out = false;
  // Nt(o) (space/config.h): the function takes `int last` (after accumulate,
  // shared with the epilogue's) and, when it is set and O is aligned to the
  // ISA's stream_align, stores the block's vectors at aligned offsets with
  // store_stream (CONTRACT.md "Non-temporal stores"); not part of full().
  bool stream_out = false;
  // Flat(hw) at stride > 1 (space/config.h): per h, the input offset of
  // output row h's pixel from io, for a block of the flat view that runs
  // across the end of an output row; empty = h*ST*IROW (CONTRACT.md "Flat").
  std::vector<int64_t> in_rows;
  // Lanes(g) (space/config.h), depthwise microkernels only: Cg, the inputs of
  // each group of Cg lanes; c step `it` reads input it of the lane's group,
  // lane (l / Cg) * Cg + it of the input vector, through the ISA's
  // lane_permute (CONTRACT.md "Lanes(g)"). 0: not Lanes(g); not part of full().
  int lane_cg = 0;
  bool full() const {
    return rows.empty() && cols.empty() && k_lanes == 0 && epilogue == Epilogue::none && in_rows.empty();
  }
};

/// The layout of the offline measurement: C = nc*size_c channels,
/// K' = size_k*lanes, output size_h x size_w, stride 1, weights packed in the
/// microkernel's order (CONTRACT.md). Depthwise: C = K' channels, weights
/// [nc][r][s][K'].
UkLayout profile_layout(const UkSizes& u, int lanes, int64_t nc);

/// What every generated file starts with: the ISA's header and prelude.
std::string generated_prelude(const Isa& isa);

/// The load (store) of the first n lanes at ptr: the ISA's load (store) for
/// a whole vector, load_masked (store_masked) for a tail, 0 < n < lanes.
std::string load_lanes(const Isa& isa, const std::string& ptr, int64_t n);
std::string store_lanes(const Isa& isa, const std::string& ptr, const std::string& val, int64_t n);

/// The entry-point table `ct_profile_fns[]` that microkernels/driver.c's
/// ukernels mode calls, over functions with the microkernel signature.
std::string profile_fn_table(const std::vector<std::string>& names);

/// The `static` C function for one instance, named `name`.
std::string emit_ukernel(const Isa& isa, const UkSizes& u, const UkLayout& l,
                         const std::string& name, const UkVariant& v = {});

/// Scalar reference of the contract (for tests and profile verification).
void reference_ukernel(const UkSizes& u, const UkLayout& l, int lanes, const float* I,
                       const float* W, float* O, int64_t nc, bool accumulate);

}  // namespace convtune
