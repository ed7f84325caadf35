#pragma once
// oneDNN benchdnn's convolution problem descriptors
// ("g32mb1ic32ih112oc32oh112kh3ph1n\"mobilenet:conv2_1/dw\"", its
// tests/benchdnn/doc/driver_conv.md and knobs_desc.md), read as benchdnn's
// str2desc reads them (tests/benchdnn/conv/conv_aux.cpp), and the 2D ones as
// convtune shapes at batch 1: the shape lists of oneDNN's own conv tests
// (tests/data/benchdnn/) as a corpus of odd sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "convtune/core/shape.h"

namespace convtune {

/// A descriptor with benchdnn's defaults and deductions applied.
struct BenchdnnDesc {
  int64_t g = 1, mb = 2;
  int64_t ic = 0, id = 0, ih = 0, iw = 0;
  int64_t oc = 0, od = 0, oh = 0, ow = 0;
  int64_t kd = 0, kh = 0, kw = 0;
  int64_t sd = 1, sh = 1, sw = 1;
  int64_t pd = 0, ph = 0, pw = 0;        // front, top, left pads
  int64_t pd_r = 0, ph_r = 0, pw_r = 0;  // back, bottom, right pads: what oh implies, may be < 0
  int64_t dd = 0, dh = 0, dw = 0;        // benchdnn's dilation: taps d+1 apart, 0 = none
  int ndims = 4;                         // 3: 1D (only w given), 4: 2D, 5: 3D (a d entry given)
  std::string name;                      // n"...", without the quotes
};

/// Parses one descriptor: entries g mb ic id ih iw oc od oh ow kd kh kw sd sh
/// sw pd ph pw dd dh dw, each a non-negative integer, in any order, '_'
/// allowed after a value, then n and the name to the end. As benchdnn: mb 2
/// unless given, missing w values copy the h ones (h copies d when only d is
/// given), a missing oh from the pads (ph 0 when missing too), a missing ph
/// from oh (the half of the slack), and the end pads from oh:
/// (oh-1)*sh - ih + ((kh-1)*(dh+1)+1) - ph. Throws Error naming the entry.
BenchdnnDesc parse_benchdnn_desc(const std::string& text);

/// Whether the descriptor is a 2D convolution: benchdnn's 2D form, or a 3D
/// one whose depth is one (id = kd = od = 1, no depth pad).
bool benchdnn_2d(const BenchdnnDesc& d);

/// The descriptor as a convtune Shape at batch 1 (benchdnn's --mb=1), named
/// "": weights [oc][ic/g][kh][kw] as convtune's, dilation d+1. An end pad
/// within stride-1 above the one oh implies computes the same (the extra
/// rows are never read), so a start pad in that range is taken as the end
/// pad too (the plain shape); a negative end pad there becomes 0. Throws
/// Error saying why it cannot be a shape: not 2D, input rows or columns no
/// output reads (an end pad below that range), or validate_shape's reason.
Shape benchdnn_shape(const BenchdnnDesc& d);

/// One descriptor line of a shape list.
struct BenchdnnEntry {
  int line = 0;      // 1-based line of the file
  std::string text;  // the descriptor as written
  BenchdnnDesc desc;
  bool two_d = false;  // benchdnn_2d
  Shape shape;         // when skip is ""
  std::string skip;    // why it is not a convtune shape; "" when it is
};

/// The descriptors of a benchdnn shape list (one a line; '#' comments and
/// blank lines skipped). Throws Error "FILE:LINE: ..." for an unreadable
/// file or a line that is not a descriptor.
std::vector<BenchdnnEntry> read_benchdnn(const std::string& path);

/// `convtune layers --benchdnn`: a line per entry (its line, name and shape
/// or why not), then the counts of entries, 2D entries and shapes.
std::string benchdnn_report(const std::vector<BenchdnnEntry>& entries);

}  // namespace convtune
