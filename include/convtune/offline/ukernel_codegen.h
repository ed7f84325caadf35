#pragma once
// Emits C for one microkernel instance from the ISA description; the contract
// is microkernels/CONTRACT.md.
#include <cstdint>
#include <string>
#include <vector>

#include "convtune/core/isa.h"
#include "convtune/offline/ukernel.h"

namespace convtune {

/// Element strides baked into an instance (names as in CONTRACT.md).
struct UkLayout {
  int64_t in_row = 0, in_pix = 0, stride = 1;  // IROW, IPIX, ST
  int64_t w_r = 0, w_s = 0, w_c = 0;           // WR, WS, WC
  int64_t out_row = 0, out_pix = 0;            // OROW, OPIX
};

/// The matching problem of the offline measurement: C = nc*size_c channels,
/// K' = size_k*lanes, output size_h x size_w, stride 1.
UkLayout profile_layout(const UkSizes& u, int lanes, int64_t nc);

/// The `static inline` C function for one instance, named `name`.
std::string emit_ukernel(const Isa& isa, const UkSizes& u, const UkLayout& l,
                         const std::string& name);

/// Scalar reference of the contract (for tests and profile verification).
void reference_ukernel(const UkSizes& u, const UkLayout& l, int lanes, const float* I,
                       const float* W, float* O, int64_t nc, bool accumulate);

}  // namespace convtune
