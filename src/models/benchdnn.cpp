// benchdnn convolution descriptors (models/benchdnn.h): the rules of
// oneDNN's tests/benchdnn/conv/conv_aux.cpp str2desc and
// tests/benchdnn/common.cpp sanitize_desc, then a convtune Shape.
#include "convtune/models/benchdnn.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/text.h"

namespace convtune {

namespace {

constexpr int64_t kUnset = -1;  // str2desc's "not given" for the pads
// An integer past this is no size (validate_shape's limits are far below).
constexpr int64_t kMaxValue = int64_t(1) << 40;

// One spatial axis as str2desc fills it: output, input, kernel, stride, start pad, dilation.
struct Axis {
  int64_t o = 0, i = 0, k = 0, s = 1, p = kUnset, d = 0;
};

struct Fields {
  int64_t g = kUnset, mb = 2, ic = 0, oc = 0;
  Axis d, h, w;
};

// benchdnn's entry names in its matching order (str2desc's CASE_N list).
std::vector<std::pair<const char*, int64_t*>> entries(Fields& f) {
  return {{"g", &f.g},     {"mb", &f.mb},   {"ic", &f.ic},   {"id", &f.d.i},  {"ih", &f.h.i},  {"iw", &f.w.i},
          {"oc", &f.oc},   {"od", &f.d.o},  {"oh", &f.h.o},  {"ow", &f.w.o},  {"kd", &f.d.k},  {"kh", &f.h.k},
          {"kw", &f.w.k},  {"sd", &f.d.s},  {"sh", &f.h.s},  {"sw", &f.w.s},  {"pd", &f.d.p},  {"ph", &f.h.p},
          {"pw", &f.w.p},  {"dd", &f.d.d},  {"dh", &f.h.d},  {"dw", &f.w.d}};
}

Error desc_error(const std::string& text, const std::string& why) {
  return Error(fmt::format("benchdnn descriptor {}: {}", quote_text(text), why));
}

// The entries and the name, as written; '_' may follow any value.
Fields scan(const std::string& text, std::string* name) {
  Fields f;
  size_t at = 0;
  while (at < text.size()) {
    if (text[at] == 'n') {  // the name runs to the end; quotes are for readability (knobs_desc.md)
      *name = text.substr(at + 1);
      if (name->size() >= 2 && name->front() == '"' && name->back() == '"') *name = name->substr(1, name->size() - 2);
      break;
    }
    bool matched = false;
    for (auto [key, field] : entries(f)) {
      const size_t len = std::strlen(key);
      if (text.compare(at, len, key) != 0) continue;
      size_t end = at + len;
      int64_t v = 0;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) && v <= kMaxValue)
        v = v * 10 + (text[end++] - '0');
      if (end == at + len)
        throw desc_error(text, fmt::format("entry '{}' has no value; give a non-negative integer ('{}3')", key, key));
      if (v > kMaxValue) throw desc_error(text, fmt::format("entry '{}' is too large", key));
      *field = v;
      at = end;
      matched = true;
      break;
    }
    if (!matched)
      throw desc_error(text, fmt::format("unrecognized entry at {}; entries are g, mb, ic, id, ih, iw, oc, od, oh, "
                                         "ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, then n and a name",
                                         quote_text(text.substr(at))));
    if (at < text.size() && text[at] == '_') ++at;
  }
  return f;
}

// str2desc's deduction of one axis: the output from the pads (2*p: both
// sides) or the start pad from the output. C++ division as benchdnn's.
void deduce(Axis& a, char axis, const std::string& text) {
  auto need = [&](const char* what, int64_t v) {
    if (v <= 0)
      throw desc_error(text, fmt::format("'{}{}' is missing or 0; give it (the {} size)", what, axis,
                                         what[0] == 'i' ? "input" : "kernel"));
  };
  need("i", a.i);
  need("k", a.k);
  const int64_t span = (a.k - 1) * (a.d + 1) + 1;
  if (a.o == 0) {
    if (a.p < 0) a.p = 0;
    a.o = (a.i - span + 2 * a.p) / a.s + 1;
    if (a.o <= 0)
      throw desc_error(text, fmt::format("the kernel spans {} of i{}={} and pad {}: no output; give a smaller k{} or "
                                         "more padding",
                                         span, axis, a.i, a.p, axis));
  } else if (a.p < 0) {
    a.p = ((a.o - 1) * a.s - a.i + span) / 2;
  }
}

// The end pad benchdnn's init_pad_r gives: what the output size implies.
int64_t end_pad(const Axis& a) { return (a.o - 1) * a.s - a.i + ((a.k - 1) * (a.d + 1) + 1) - a.p; }

}  // namespace

BenchdnnDesc parse_benchdnn_desc(const std::string& text) {
  BenchdnnDesc r;
  Fields f = scan(text, &r.name);
  if (f.g == 0) throw desc_error(text, "g0: give at least 1 group, or leave g out");
  if (f.ic == 0 || f.oc == 0) throw desc_error(text, "'ic' and 'oc' are required and at least 1");
  for (auto [axis, a] : {std::pair<char, const Axis*>{'d', &f.d}, {'h', &f.h}, {'w', &f.w}})
    if (a->s == 0) throw desc_error(text, fmt::format("s{}0: strides are at least 1", axis));
  auto absent = [](const Axis& a) { return (a.i | a.k | a.o | a.d) == 0 && a.s == 1 && a.p < 1; };
  const bool no_d = absent(f.d), no_h = absent(f.h), no_w = absent(f.w);
  if (!no_d) deduce(f.d, 'd', text);
  if (!no_h) deduce(f.h, 'h', text);
  if (!no_w) deduce(f.w, 'w', text);
  // sanitize_desc: the dimensions from the outputs, smaller ones copied from larger.
  r.ndims = f.d.o ? 5 : f.h.o ? 4 : f.w.o ? 3 : 2;
  if (r.ndims == 2) throw desc_error(text, "no spatial size; give ih and kh (and iw, kw if they differ)");
  if (r.ndims == 5 && !f.h.o && !f.w.o) f.h = f.w = f.d;
  if (r.ndims == 5 && (!f.h.o || !f.w.o))
    throw desc_error(text, "a 3D descriptor gives all of its h and w sizes or none of them");
  if (r.ndims == 4 && !f.w.o) f.w = f.h;
  const Axis unit{1, 1, 1, 1, 0, 0};
  if (r.ndims < 5) f.d = unit;
  if (r.ndims < 4) f.h = unit;
  r.g = f.g < 0 ? 1 : f.g;
  r.mb = f.mb;
  r.ic = f.ic;
  r.oc = f.oc;
  r.id = f.d.i, r.ih = f.h.i, r.iw = f.w.i;
  r.od = f.d.o, r.oh = f.h.o, r.ow = f.w.o;
  r.kd = f.d.k, r.kh = f.h.k, r.kw = f.w.k;
  r.sd = f.d.s, r.sh = f.h.s, r.sw = f.w.s;
  r.pd = f.d.p, r.ph = f.h.p, r.pw = f.w.p;
  r.pd_r = end_pad(f.d), r.ph_r = end_pad(f.h), r.pw_r = end_pad(f.w);
  r.dd = f.d.d, r.dh = f.h.d, r.dw = f.w.d;
  return r;
}

bool benchdnn_2d(const BenchdnnDesc& d) {
  return d.ndims == 4 || (d.ndims == 5 && d.id == 1 && d.kd == 1 && d.od == 1 && d.pd == 0 && d.pd_r == 0);
}

namespace {

// The end pad of a shape with the descriptor's output size. Pads from the
// implied one up to stride-1 above it give the same outputs from the same
// inputs (the last window ends at the same row), so the start pad is taken
// there (a plain shape) and a negative one becomes 0; below that range
// trailing input rows are never read, which a convtune shape cannot say.
int64_t shape_end_pad(int64_t start, int64_t implied, int64_t stride, const char* axis, int64_t out) {
  if (start >= implied && start <= implied + stride - 1) return start;
  if (implied >= 0) return implied;
  if (implied + stride - 1 >= 0) return 0;
  throw Error(fmt::format("o{}={} reads none of the last {} input {} (end pad {}); a convtune shape reads every "
                          "input {} (pads >= 0)",
                          axis, out, -implied, axis[0] == 'h' ? "rows" : "columns", implied,
                          axis[0] == 'h' ? "row" : "column"));
}

}  // namespace

Shape benchdnn_shape(const BenchdnnDesc& d) {
  if (d.ndims == 3) throw Error("not 2D: a 1D convolution (no h sizes)");
  if (!benchdnn_2d(d))
    throw Error(fmt::format("not 2D: a 3D convolution (id={}, kd={}, od={}, pd={})", d.id, d.kd, d.od, d.pd));
  Shape s;
  s.N = 1;  // benchdnn's --mb=1
  s.K = d.oc;
  s.C = d.ic;
  s.H = d.ih;
  s.W = d.iw;
  s.R = d.kh;
  s.S = d.kw;
  s.stride_h = d.sh;
  s.stride_w = d.sw;
  s.pad_t = d.ph;
  s.pad_l = d.pw;
  s.pad_b = shape_end_pad(d.ph, d.ph_r, d.sh, "h", d.oh);
  s.pad_r = shape_end_pad(d.pw, d.pw_r, d.sw, "w", d.ow);
  s.dil_h = d.dh + 1;
  s.dil_w = d.dw + 1;
  s.groups = d.g;
  validate_shape(s);
  return s;
}

std::vector<BenchdnnEntry> read_benchdnn(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("--benchdnn: '{}' is a directory; give a benchdnn shape list file", path));
  errno = 0;
  std::ifstream f(path);
  if (!f)
    throw Error(fmt::format("--benchdnn: cannot read '{}': {}; give a benchdnn shape list file", path,
                            errno ? std::strerror(errno) : "unreadable"));
  std::vector<BenchdnnEntry> out;
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    BenchdnnEntry e;
    e.line = n;
    e.text = text;
    try {
      e.desc = parse_benchdnn_desc(text);
    } catch (const Error& err) {
      throw Error(fmt::format("{}:{}: {}", path, n, err.what()));
    }
    e.two_d = benchdnn_2d(e.desc);
    try {
      e.shape = benchdnn_shape(e.desc);
    } catch (const Error& err) {
      e.skip = err.what();
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string benchdnn_report(const std::vector<BenchdnnEntry>& entries) {
  std::string out;
  size_t two_d = 0, shapes = 0;
  for (const BenchdnnEntry& e : entries) {
    two_d += e.two_d;
    shapes += e.skip.empty();
    out += fmt::format("{:>5} {:<40} {}\n", e.line, e.desc.name.empty() ? "-" : escape_text(e.desc.name),
                       e.skip.empty() ? e.shape.to_string() : "skipped: " + e.skip);
  }
  out += fmt::format("{} entries, {} 2D, {} convtune shapes\n", entries.size(), two_d, shapes);
  return out;
}

}  // namespace convtune
