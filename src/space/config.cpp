// The configuration language of 000 §3.3: text form, parser and the rules a
// configuration must satisfy for a shape (000 §3.3, §4.1, §4.2).
#include "convtune/space/config.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "convtune/core/error.h"
#include "convtune/core/text.h"

namespace convtune {

char dim_char(Dim d) { return "nkchwrsg"[static_cast<int>(d)]; }

bool dim_from_char(char ch, Dim* d) {
  for (int i = 0; i < kNumDims; ++i)
    if ("nkchwrsg"[i] == ch) {
      *d = static_cast<Dim>(i);
      return true;
    }
  return false;
}

bool has_group_loop(const Shape& s) { return s.groups > 1 && !(s.depthwise() && s.Kg() == 1); }

Shape group_view(const Shape& s) {
  Shape v = s;
  v.C = s.Cg();
  v.K = s.Kg();
  v.groups = 1;
  return v;
}

int64_t dim_size(const Shape& s, Dim d, int64_t lanes) {
  if (d == Dim::g) return has_group_loop(s) ? s.groups : 1;
  if (has_group_loop(s)) return dim_size(group_view(s), d, lanes);
  switch (d) {
    case Dim::n: return s.N;
    case Dim::k: return s.padded_K(lanes);
    case Dim::c: return s.Cg();  // one group's channels: 1 for depthwise
    case Dim::h: return s.Ho();
    case Dim::w: return s.Wo();
    case Dim::r: return s.R;
    case Dim::s: return s.S;
    case Dim::g: return 1;
  }
  return 0;
}

// Compares only the fields that the kind uses, so unused ones never matter.
bool Spec::operator==(const Spec& o) const {
  if (kind != o.kind || dim != o.dim) return false;
  switch (kind) {
    case SpecKind::T: return factor == o.factor;
    case SpecKind::P: return factor == o.factor && threads == o.threads;
    case SpecKind::U: return alpha == o.alpha && (alpha || factor == o.factor);
    case SpecKind::Lseq: return seq == o.seq;
    case SpecKind::R:
    case SpecKind::V: return true;
  }
  return false;
}

std::string to_string(const Spec& s) {
  char d = dim_char(s.dim);
  switch (s.kind) {
    case SpecKind::R: return fmt::format("R({})", d);
    case SpecKind::T: return fmt::format("T({},{})", s.factor, d);
    case SpecKind::P:
      return s.threads > 0 ? fmt::format("P({},{},{})", s.factor, d, s.threads) : fmt::format("P({},{})", s.factor, d);
    case SpecKind::U:
      return s.alpha ? fmt::format("U(a,{})", d) : fmt::format("U({},{})", s.factor, d);
    case SpecKind::V: return fmt::format("V({})", d);
    case SpecKind::Lseq:
      return fmt::format("Lseq({},[({},{}),({},{})])", d, s.seq[0].first, s.seq[0].second,
                         s.seq[1].first, s.seq[1].second);
  }
  return "?";
}

bool flat_eligible(const Shape& s) {
  return s.R == 1 && s.S == 1 && s.pad_t + s.pad_l + s.pad_b + s.pad_r == 0 && s.groups == 1 && s.Wo() > 1;
}

// A column of `rows` pixels, 1x1, stride 1, no padding: both views' GEMM.
static Shape column(const Shape& s, int64_t rows) {
  Shape v = s;
  v.H = rows;
  v.W = 1;
  v.R = v.S = 1;
  v.set_stride(1);
  v.set_pad(0);
  v.dil_h = v.dil_w = 1;
  return v;
}

Shape flat_view(const Shape& s) { return column(s, s.Ho() * s.Wo()); }

bool wino_eligible(const Shape& s) {
  // The transforms assume one stride and one pad on every side, and adjacent taps.
  return s.R == 3 && s.S == 3 && s.square_window() && (s.stride() == 1 || s.stride() == 2) && s.dil_h == 1 &&
         s.dil_w == 1 && s.groups == 1 && s.Ho() >= 1 && s.Wo() >= 1;
}

int64_t wino_tiles(const Shape& s) { return ((s.Ho() + 1) / 2) * ((s.Wo() + 1) / 2); }

Shape wino_view(const Shape& s, int64_t block) {
  Shape v = column(s, block > 0 ? block : s.N * wino_tiles(s));
  v.N = 1;
  return v;
}

int64_t wino_blocks(const Shape& s, int64_t block) {
  const int64_t tiles = s.N * wino_tiles(s);
  return block > 0 ? (tiles + block - 1) / block : 1;
}

bool lanes_eligible(const Shape& s, int64_t lanes) {
  return s.groups > 1 && s.Cg() == s.Kg() && s.Cg() > 1 && s.Cg() < lanes && lanes % s.Cg() == 0;
}

Shape lanes_view(const Shape& s) {
  Shape v = s;
  v.groups = s.K;  // C = K: one channel per group, as depthwise
  return v;
}

Shape view_shape(const View& v, const Shape& s) {
  switch (v.kind) {
    case View::rows: return s;
    case View::flat: return flat_view(s);
    case View::wino: return wino_view(s, v.block);
    case View::lanes: return lanes_view(s);
  }
  return s;
}

std::string to_string(const View& v) {
  switch (v.kind) {
    case View::rows: return "";
    case View::flat: return "Flat(hw)";
    case View::wino:
      return v.block == 0     ? "Wino(2)"
             : v.threads > 1 ? fmt::format("Wino(2,{},{})", v.block, v.threads)
                             : fmt::format("Wino(2,{})", v.block);
    case View::lanes: return "Lanes(g)";
  }
  return "?";
}

std::string to_string(const Config& c) {
  std::vector<std::string> parts;
  if (c.view.kind != View::rows) parts.push_back(to_string(c.view));
  for (const Spec& s : c.specs) parts.push_back(to_string(s));
  if (c.fence != TapFence::none) parts.push_back(fence_text(c.fence));
  if (c.prefetch) parts.push_back("Pf(w)");
  if (c.prefetch_out) parts.push_back("Pf(o)");
  if (c.stream_out) parts.push_back("Nt(o)");
  std::string out = "[";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + "]";
}

namespace {

// Recursive-descent parser over the text form; every error names a 1-based column.
class Parser {
 public:
  explicit Parser(const std::string& text) : t_(text) {}

  Config parse() {
    Config c;
    expect('[', "at the start of a configuration");
    if (peek() == ']') {
      ++i_;
    } else {
      if (word_at() == "Flat" || word_at() == "Wino" || word_at() == "Lanes") c.view = view();
      while (true) {
        peek();
        if (word_at() == "F" || word_at() == "Pf" || word_at() == "Nt") {  // the tail: F(r)/F(s), Pf(w), Pf(o), Nt(o), ']'
          tail(c);
          break;
        }
        c.specs.push_back(spec());
        char ch = peek();
        if (ch == ']') {
          ++i_;
          break;
        }
        if (ch != ',') fail("expected ',' or ']' after a specifier, got " + got());
        ++i_;
      }
    }
    if (peek() != '\0') fail("unexpected " + got() + " after the closing ']'");
    return c;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(fmt::format("config: at column {}: {}", i_ + 1, msg));
  }

  // Skips whitespace and returns the next character ('\0' at the end).
  char peek() {
    while (i_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[i_]))) ++i_;
    return i_ < t_.size() ? t_[i_] : '\0';
  }

  // What is at the cursor, for messages: 'x' or "end of input"; a long word
  // is cut, a character of several bytes (a full-width letter) shown whole,
  // and a control character or a byte that is not UTF-8 escaped (text.h
  // quote_text), so the message stays one line of valid text.
  std::string got() {
    if (peek() == '\0') return "end of input";
    std::string word = word_at();
    if (word.empty()) word = t_.substr(i_, std::max<size_t>(1, utf8_length(t_, i_)));
    if (word.size() > 40) word = word.substr(0, 40) + "...";
    return quote_text(word);
  }

  std::string word_at() const {
    size_t j = i_;
    while (j < t_.size() && std::isalnum(static_cast<unsigned char>(t_[j]))) ++j;
    return t_.substr(i_, j - i_);
  }

  void expect(char ch, const char* where) {
    if (peek() != ch) fail(fmt::format("expected '{}' {}, got {}", ch, where, got()));
    ++i_;
  }

  int64_t number() {
    if (!std::isdigit(static_cast<unsigned char>(peek())))
      fail("expected a number, got " + got());
    size_t start = i_;
    int64_t v = 0;
    while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) {
        i_ = start;
        fail("number " + got() + " is too large; a count is at most a problem size (about 2^20)");
      }
      v = v * 10 + (t_[i_++] - '0');
    }
    return v;
  }

  Dim dim() {
    Dim d;
    peek();
    std::string word = word_at();
    if (word.size() != 1 || !dim_from_char(word[0], &d))
      fail("expected a dimension (one of n,k,c,h,w,r,s,g), got " + got());
    ++i_;
    return d;
  }

  // Flat(hw), Wino(2), Wino(2,b), Wino(2,b,t) or Lanes(g) at the cursor, and the ',' before the loops.
  View view() {
    View v;
    const bool wino = word_at() == "Wino";
    if (word_at() == "Lanes") {
      i_ += 5;
      expect('(', "after 'Lanes'");
      peek();
      if (word_at() != "g") fail(fmt::format("expected g in Lanes(...), got {}; Lanes(g) puts the groups in the vector lanes", got()));
      ++i_;
      v.kind = View::lanes;
      expect(')', "to close the specifier");
      expect(',', "after Lanes(g) (the loops follow it)");
      return v;
    }
    const std::string name = wino ? "Wino" : "Flat", arg = wino ? "2" : "hw";
    i_ += name.size();
    expect('(', ("after '" + name + "'").c_str());
    peek();
    if (word_at() != arg)
      fail(fmt::format("expected {} in {}(...), got {}; {}", arg, name, got(),
                       wino ? "Wino(2) is Winograd F(2x2,3x3)" : "Flat(hw) tiles the Ho*Wo output pixels as one column"));
    i_ += arg.size();
    v.kind = wino ? View::wino : View::flat;
    // ",n" at the cursor, n >= 1; a 0 is `at_zero`, at the number's column.
    auto count = [&](const char* at_zero) {
      ++i_;
      peek();
      const size_t at = i_;
      const int64_t n = number();
      if (n < 1) {
        i_ = at;
        fail(at_zero);
      }
      return n;
    };
    if (wino && peek() == ',') {
      v.block = count("a block of 0 tiles in Wino(2,b); write Wino(2) for all tiles at once or b >= 1");
      if (peek() == ',') v.threads = count("0 threads in Wino(2,b,t); write Wino(2,b) for the calling thread or t >= 2");
    }
    expect(')', "to close the specifier");
    expect(',', fmt::format("after {} (the loops follow it)", to_string(v)).c_str());
    return v;
  }

  TapFence fence() {
    i_ += 1;
    expect('(', "after 'F'");
    peek();
    const std::string word = word_at();
    if (word != "r" && word != "s") fail("expected r or s in F(...), got " + got() + "; F(r) fences filter rows, F(s) every tap");
    ++i_;
    expect(')', "to close the specifier");
    return word == "r" ? TapFence::r : TapFence::s;
  }

  // [F(r) | F(s)] [, Pf(w)] [, Pf(o)] [, Nt(o)] ']': what follows the loops.
  // The switches come in that order, each at most once, so the text of a
  // configuration is one string (print/parse round-trips).
  void tail(Config& c) {
    static const char* const kSwitches[] = {"Pf(w)", "Pf(o)", "Nt(o)"};
    const std::string rule = "Pf(w), Pf(o) and Nt(o) come last, in that order, each at most once";
    std::string last;  // the element read last, for the messages
    if (word_at() == "F") {
      c.fence = fence();
      last = fence_text(c.fence);
      if (peek() == ',') {
        ++i_;
        peek();
        if (word_at() != "Pf" && word_at() != "Nt")
          fail("expected Pf(w), Pf(o) or Nt(o) after " + last + ", got " + got() +
               "; F(r) or F(s) comes last, after V(k), followed only by Pf(w), Pf(o) and Nt(o)");
      }
    }
    int at = -1;  // index in kSwitches of the switch read last
    while (word_at() == "Pf" || word_at() == "Nt") {
      const std::string name = word_at();
      const size_t start = i_;
      i_ += 2;
      expect('(', name == "Pf" ? "after 'Pf'" : "after 'Nt'");
      peek();
      const std::string what = word_at();
      if (name == "Pf" && what != "w" && what != "o")
        fail("expected w or o in Pf(...), got " + got() + "; Pf(w) prefetches the next weights, Pf(o) the output block");
      if (name == "Nt" && what != "o")
        fail("expected o in Nt(...), got " + got() + "; Nt(o) stores the output block with non-temporal stores");
      const std::string item = name + "(" + what + ")";
      const int index = item == kSwitches[0] ? 0 : item == kSwitches[1] ? 1 : 2;
      if (index <= at) {
        i_ = start;
        fail("unexpected " + item + " after " + last + "; " + rule);
      }
      (index == 0 ? c.prefetch : index == 1 ? c.prefetch_out : c.stream_out) = true;
      at = index;
      last = item;
      ++i_;
      expect(')', "to close the specifier");
      if (peek() != ',') break;
      ++i_;
      peek();
      if (word_at() != "Pf" && word_at() != "Nt")
        fail("expected Pf(w), Pf(o) or Nt(o) after " + last + ", got " + got() + "; " + rule);
    }
    if (peek() != ']')
      fail(at >= 0 ? "expected ']' after " + last + ", got " + got() + "; " + rule
                   : "expected ']' after " + last + ", got " + got() +
                         "; F(r) or F(s) comes last, after V(k), followed only by Pf(w), Pf(o) and Nt(o)");
    ++i_;
  }

  Spec spec() {
    Spec s;
    peek();
    std::string name = word_at();
    if (name == "R") s.kind = SpecKind::R;
    else if (name == "T") s.kind = SpecKind::T;
    else if (name == "U") s.kind = SpecKind::U;
    else if (name == "V") s.kind = SpecKind::V;
    else if (name == "Lseq") s.kind = SpecKind::Lseq;
    else if (name == "P") s.kind = SpecKind::P;
    else if (name == "Flat") fail("Flat(hw) comes first, before every loop");
    else if (name == "Wino") fail("Wino(2) comes first, before every loop");
    else if (name.empty()) fail("expected a specifier (R, T, U, V, Lseq, P or F), got " + got());
    else fail("unknown specifier '" + name + "'; expected R, T, U, V, Lseq, P or F");
    i_ += name.size();
    std::string after = "after '" + name + "'";
    expect('(', after.c_str());
    if (s.kind == SpecKind::T || s.kind == SpecKind::P) {
      s.factor = number();
      expect(',', "after the count");
    } else if (s.kind == SpecKind::U) {
      if (peek() == 'a' && word_at() == "a") {
        s.alpha = true;
        ++i_;
      } else if (std::isdigit(static_cast<unsigned char>(peek()))) {
        s.factor = number();
      } else {
        fail("expected a number or 'a', got " + got());
      }
      expect(',', "after the count");
    }
    s.dim = dim();
    if (s.kind == SpecKind::P && peek() == ',') {  // P(n,d,t)
      ++i_;
      const size_t at = i_;
      s.threads = number();
      if (s.threads < 2) {
        i_ = at;
        fail("a P loop's thread count is at least 2, got " + got() + "; write P(n,d) for one thread per iteration");
      }
    }
    if (s.kind == SpecKind::Lseq) {
      expect(',', "after the dimension");
      expect('[', "to open the list of (repeats,size) pairs");
      for (int j = 0; j < 2; ++j) {
        if (j) expect(',', "between the two pairs");
        expect('(', "to open a (repeats,size) pair");
        s.seq[j].first = number();
        expect(',', "between repeats and size");
        s.seq[j].second = number();
        expect(')', "to close the pair");
      }
      expect(']', "after two pairs (Lseq combines exactly two microkernels)");
    }
    expect(')', "to close the specifier");
    return s;
  }

  const std::string& t_;
  size_t i_ = 0;
};

// Product of counts that saturates instead of overflowing; huge products can
// never match a problem size, they only need to print sensibly.
struct Product {
  int64_t v = 1;
  bool over = false;
  void mul(int64_t f) {
    if (over || __builtin_mul_overflow(v, f, &v)) over = true;
  }
  void add(const Product& o) {
    if (over || o.over || __builtin_add_overflow(v, o.v, &v)) over = true;
  }
  std::string text() const { return over ? "at least 2^63" : std::to_string(v); }
};

int u_rank(Dim d) {  // 000 §4.1 microkernel order [U_s, U_r, U_c, U_w, U_h, U_k, V_k]
  switch (d) {
    case Dim::s: return 0;
    case Dim::r: return 1;
    case Dim::c: return 2;
    case Dim::w: return 3;
    case Dim::h: return 4;
    case Dim::k: return 5;
    case Dim::n:
    case Dim::g: return 6;  // n and g are never unrolled
  }
  return 6;
}

[[noreturn]] void reject(const std::string& msg) { throw Error("config: " + msg); }

void check_counts(const Config& c) {
  for (const Spec& s : c.specs) {
    if ((s.kind == SpecKind::T || s.kind == SpecKind::P || (s.kind == SpecKind::U && !s.alpha)) && s.factor < 1)
      reject(fmt::format("dimension {}: {} has count {}; every count must be >= 1",
                         dim_char(s.dim), to_string(s), s.factor));
    if (s.kind == SpecKind::Lseq)
      for (const auto& [reps, size] : s.seq)
        if (reps < 1 || size < 1)
          reject(fmt::format("dimension {}: {} has a repeat count or size below 1; every count "
                             "must be >= 1",
                             dim_char(s.dim), to_string(s)));
  }
}

// V innermost, the U block above it in 000 §4.1 order, T(n,c) above that.
void check_microkernel(const Config& c) {
  const auto& sp = c.specs;
  size_t nv = 0;
  for (const Spec& s : sp) nv += s.kind == SpecKind::V;
  if (nv == 0) reject("no V(k); the innermost specifier must be V(k) (000 §3.3)");
  if (nv > 1)
    reject(fmt::format("V appears {} times; exactly one V(k) is allowed, innermost (000 §3.3)",
                       nv));
  const Spec& last = sp.back();
  if (last.kind != SpecKind::V) {
    for (const Spec& s : sp)
      if (s.kind == SpecKind::V)
        reject(fmt::format("{} must be the innermost specifier but {} follows it (000 §3.3)",
                           to_string(s), to_string(last)));
  }
  if (last.dim != Dim::k)
    reject(fmt::format("dimension {}: {} vectorises {}; only k is vectorised (000 §4.1)",
                       dim_char(last.dim), to_string(last), dim_char(last.dim)));
  size_t first_u = sp.size() - 1;
  while (first_u > 0 && sp[first_u - 1].kind == SpecKind::U) --first_u;
  for (size_t i = 0; i < first_u; ++i)
    if (sp[i].kind == SpecKind::U)
      reject(fmt::format("dimension {}: {} is not in the microkernel; every U must be in the "
                         "block directly above V(k) (000 §4.1)",
                         dim_char(sp[i].dim), to_string(sp[i])));
  for (size_t i = first_u; i + 1 < sp.size(); ++i) {
    if (sp[i].dim == Dim::n)
      reject(fmt::format("dimension n: {} unrolls n; the microkernel unrolls only s, r, c, w, "
                         "h, k (000 §4.1)",
                         to_string(sp[i])));
    if (i > first_u && u_rank(sp[i - 1].dim) == u_rank(sp[i].dim))
      reject(fmt::format("dimension {}: U appears twice in the microkernel; each dimension is "
                         "unrolled at most once (000 §4.1)",
                         dim_char(sp[i].dim)));
    if (i > first_u && u_rank(sp[i - 1].dim) > u_rank(sp[i].dim))
      reject(fmt::format("dimension {}: {} comes after {}; the microkernel order is s, r, c, w, "
                         "h, k (000 §4.1)",
                         dim_char(sp[i].dim), to_string(sp[i]), to_string(sp[i - 1])));
  }
  if (first_u == 0)
    reject("nothing above the microkernel; it must be T(n,c) (000 §4.2: c first above the "
           "microkernel)");
  const Spec& above = sp[first_u - 1];
  if (above.kind != SpecKind::T || above.dim != Dim::c)
    reject(fmt::format("dimension c: the specifier above the microkernel is {}; it must be "
                       "T(n,c) (000 §4.2: c first above the microkernel)",
                       to_string(above)));
}

// Lseq placement and its link with U(a,h). Lseq can only sit above T(n,c):
// check_microkernel leaves nothing but U and V below it.
void check_lseq(const Config& c) {
  const Spec* lseq = nullptr;
  for (const Spec& s : c.specs) {
    if (s.kind != SpecKind::Lseq) continue;
    if (lseq) reject("dimension h: Lseq appears twice; at most one is allowed (000 §3.3)");
    lseq = &s;
    if (s.dim != Dim::h)
      reject(fmt::format("dimension {}: {} combines microkernels along {}; only h is combined "
                         "(000 §4.2)",
                         dim_char(s.dim), to_string(s), dim_char(s.dim)));
    if (s.seq[0].second == s.seq[1].second)
      reject(fmt::format("dimension h: {} uses the size {} twice; the two alternatives must "
                         "differ (000 §4.2)",
                         to_string(s), s.seq[0].second));
  }
  bool u_alpha = false;
  for (const Spec& s : c.specs) {
    if (s.kind != SpecKind::U || !s.alpha) continue;
    if (s.dim != Dim::h)
      reject(fmt::format("dimension {}: {} takes its size from an Lseq, which only h has "
                         "(000 §4.2)",
                         dim_char(s.dim), to_string(s)));
    if (!lseq)
      reject("dimension h: U(a,h) takes its size from an Lseq(h,...) above it, but there is "
             "none (000 §3.3)");
    u_alpha = true;  // check_microkernel put every U in the microkernel
  }
  if (lseq && !u_alpha)
    reject(fmt::format("dimension h: {} needs U(a,h) in the microkernel to take its size "
                       "(000 §3.3)",
                       to_string(*lseq)));
}

// P (issue 12): which dimensions, where, and how many (config.h).
void check_parallel(const Config& c) {
  std::vector<size_t> at;
  size_t lseq = c.specs.size();
  for (size_t i = 0; i < c.specs.size(); ++i) {
    const Spec& s = c.specs[i];
    if (s.kind == SpecKind::Lseq && lseq == c.specs.size()) lseq = i;
    if (s.kind != SpecKind::P) continue;
    if (s.threads != 0 && (s.threads < 2 || s.threads >= s.factor))
      reject(fmt::format("dimension {}: {} has {} threads for {} iterations; give 2 <= t < n in P(n,{},t), or "
                         "P({},{}) for one thread per iteration",
                         dim_char(s.dim), to_string(s), s.threads, s.factor, dim_char(s.dim), s.factor,
                         dim_char(s.dim)));
    if (s.dim == Dim::c || s.dim == Dim::r || s.dim == Dim::s)
      reject(fmt::format("dimension {}: {} runs a reduction dimension in parallel; only n, k, h, w may be "
                         "parallel (each output must be written by one thread only)",
                         dim_char(s.dim), to_string(s)));
    if (i > lseq)
      reject(fmt::format("dimension {}: {} is inside {}; a parallel loop must be above any Lseq",
                         dim_char(s.dim), to_string(s), to_string(c.specs[lseq])));
    at.push_back(i);
  }
  if (at.size() > 2)
    reject(fmt::format("P appears {} times; at most two parallel loops are allowed, adjacent (they become one "
                       "OpenMP collapse(2) loop)",
                       at.size()));
  if (at.size() == 2 && at[1] != at[0] + 1)
    reject(fmt::format("{} and {} are not adjacent; two parallel loops must be next to each other (they become "
                       "one OpenMP collapse(2) loop)",
                       to_string(c.specs[at[0]]), to_string(c.specs[at[1]])));
}

// g (config.h): a grouped shape's group loops, R, T or P and above every other loop.
void check_groups(const Config& c, const Shape& shape) {
  bool inner = false;  // a loop over another dimension came before
  const Spec* other = nullptr;
  for (const Spec& s : c.specs) {
    if (s.dim != Dim::g) {
      if (!inner) other = &s;
      inner = true;
      continue;
    }
    if (!has_group_loop(shape))
      reject(fmt::format("dimension g: {} loops over groups, but the shape {} has {}; drop the g loops", to_string(s),
                         shape.to_string(),
                         shape.groups == 1 ? std::string("no groups (groups=1)")
                                           : "one output per group (depthwise, its channels in the vector lanes)"));
    if (s.kind != SpecKind::R && s.kind != SpecKind::T && s.kind != SpecKind::P)
      reject(fmt::format("dimension g: {} is not a group loop; g takes only R(g), T(n,g) and P(n,g), above every "
                         "other loop",
                         to_string(s)));
    if (inner)
      reject(fmt::format("dimension g: {} comes after {}; the group loops come first, above every other loop",
                         to_string(s), to_string(*other)));
  }
}

// F(r) / F(s): a fence needs taps in the microkernel to stand between.
void check_fence(const Config& c) {
  if (c.fence == TapFence::none) return;
  UkSizes taps;  // only r and s matter
  for (const Spec& s : c.specs)
    if (s.kind == SpecKind::U && !s.alpha && s.factor <= std::numeric_limits<int>::max()) {
      if (s.dim == Dim::r) taps.r = int(s.factor);
      if (s.dim == Dim::s) taps.s = int(s.factor);
    }
  if (fence_fits(c.fence, taps)) return;
  if (c.fence == TapFence::r)
    reject("F(r) fences the microkernel's filter rows but it unrolls none; add U(n,r) with n >= 2 or drop F(r)");
  reject("F(s) fences the microkernel's taps but it holds one; add U(n,r) or U(n,s) with n >= 2 or drop F(s)");
}

// Flat(hw): the view exists only where outputs share no input and read no padding.
void check_flat(const Config& c, const Shape& shape) {
  if (!c.flat() || flat_eligible(shape)) return;
  reject(fmt::format("Flat(hw) needs a 1x1 filter, no padding, no groups and more than one output column, but the "
                     "shape is {} (Wo={}); drop Flat(hw)",
                     shape.to_string(), shape.Wo()));
}

// Wino(2): F(2x2,3x3) computes 3x3 filters at stride 1 or 2 (wino_transform.h); its GEMMs are
// scratch for one thread's output transform. Wino(2,b): blocks of b tiles,
// more than one of them (one block is Wino(2)), the last one short where b
// does not divide the tiles.
void check_wino(const Config& c, const Shape& shape) {
  if (!c.wino()) return;
  if (!wino_eligible(shape))
    reject(fmt::format("Wino(2) needs a dense 3x3 filter without dilation, at one stride of 1 or 2 and one pad on "
                       "every side, but the shape is {}; drop Wino(2)",
                       shape.to_string()));
  for (const Spec& s : c.specs)
    if (s.kind == SpecKind::P && s.factor > 1)
      reject("Wino(2) takes no P loops: its threads go over the blocks; drop the P loops and write Wino(2,b,t)");
  const int64_t tiles = shape.N * wino_tiles(shape), b = c.view.block;
  if (b >= tiles)
    reject(fmt::format("Wino(2,{}): a block must hold fewer than the {} tiles; pick a smaller block or write "
                       "Wino(2) for one block",
                       b, tiles));
  if (b == 0 && c.view.threads > 1)  // the text cannot say it (Wino(2,b,t)); a View built in code can
    reject(fmt::format("Wino(2) on {} threads needs blocks to share: write Wino(2,b,{})", c.view.threads,
                       c.view.threads));
  const int64_t blocks = wino_blocks(shape, b);
  if (b > 0 && c.view.threads > blocks)
    reject(fmt::format("{}: {} threads but {} blocks of {} tiles; give at most {} threads or a smaller block",
                       to_string(c.view), c.view.threads, blocks, b, blocks));
}

// Lanes(g): groups of one shape only, the microkernel's c steps being a group's inputs.
void check_lanes(const Config& c, const Shape& shape, int64_t lanes) {
  if (!c.lanes()) return;
  if (!lanes_eligible(shape, lanes))
    reject(fmt::format("Lanes(g) needs groups of Cg = Kg channels with 1 < Cg < {0} and Cg dividing {0} (the lanes), "
                       "but the shape is {1} (Cg={2}, Kg={3}); drop Lanes(g)",
                       lanes, shape.to_string(), shape.Cg(), shape.Kg()));
}

// Pf(w): the next iteration of a k or c loop is what it prefetches.
void check_prefetch(const Config& c) {
  if (!c.prefetch || prefetch_loop(c) >= 0) return;
  reject("Pf(w) prefetches the weights of the next iteration of the innermost k or c loop above the microkernel, "
         "but there is none (or it or a loop below it is a P); add T(n,k) or T(n,c) with n >= 2 above T(n,c) or drop Pf(w)");
}

void check_coverage(const Config& c, const Shape& shape, int64_t lanes) {
  for (int di = 0; di < kNumDims; ++di) {
    Dim d = static_cast<Dim>(di);
    char ch = dim_char(d);
    Product p;
    int rs = 0, specs = 0;
    for (const Spec& s : c.specs) {
      if (s.dim != d) continue;
      ++specs;
      if (s.kind == SpecKind::R) ++rs;
      if (s.kind == SpecKind::T || s.kind == SpecKind::P || (s.kind == SpecKind::U && !s.alpha)) p.mul(s.factor);
      if (s.kind == SpecKind::V) p.mul(lanes);
      if (s.kind == SpecKind::Lseq) {  // 000 §3.4: a1 tiles of v1 then a2 tiles of v2
        Product first, second;
        first.mul(s.seq[0].first);
        first.mul(s.seq[0].second);
        second.mul(s.seq[1].first);
        second.mul(s.seq[1].second);
        first.add(second);
        if (first.over) p.over = true;
        else p.mul(first.v);
      }
    }
    if (rs > 1)
      reject(fmt::format("dimension {}: R({}) appears {} times; R may appear at most once per "
                         "dimension (000 §3.3)",
                         ch, ch, rs));
    int64_t size = dim_size(shape, d, lanes);
    std::string with_lanes = d == Dim::k ? fmt::format(" (including {} lanes)", lanes) : "";
    if (rs == 1) {
      if (p.over || size % p.v != 0)
        reject(fmt::format("dimension {}: tile factors multiply to {}{}, which does not divide "
                           "the problem size {}; with R({}) they must divide it (000 §3.3 "
                           "divisibility)",
                           ch, p.text(), with_lanes, size, ch));
    } else if (specs == 0 && size != 1) {
      reject(fmt::format("dimension {}: no specifier covers it but the problem size is {}; add "
                         "T({},{}) or R({}) (000 §3.3 divisibility)",
                         ch, size, size, ch, ch));
    } else if (p.over || p.v != size) {
      reject(fmt::format("dimension {}: tile factors multiply to {}{} but the problem size is "
                         "{}; every dimension must be covered exactly (000 §3.3 divisibility)",
                         ch, p.text(), with_lanes, size));
    }
  }
}

}  // namespace

Config parse_config(const std::string& text) { return Parser(text).parse(); }

void validate_config(const Config& c, const Shape& shape, int64_t lanes) {
  if (lanes < 1) reject(fmt::format("the vector length is {}; it must be >= 1", lanes));
  check_counts(c);
  check_lanes(c, shape, lanes);
  check_groups(c, c.lanes() ? lanes_view(shape) : shape);
  check_microkernel(c);
  check_lseq(c);
  check_parallel(c);
  check_fence(c);
  check_prefetch(c);
  check_flat(c, shape);
  check_wino(c, shape);
  check_coverage(c, tiled_shape(c, shape), lanes);
}

int prefetch_loop(const Config& c) {
  size_t ublock = c.specs.size();
  while (ublock > 0 && (c.specs[ublock - 1].kind == SpecKind::U || c.specs[ublock - 1].kind == SpecKind::V)) --ublock;
  // specs[ublock - 1] is the reuse loop T(n,c), which the microkernel runs itself.
  for (size_t i = ublock >= 1 ? ublock - 1 : 0; i-- > 0;) {
    const Spec& s = c.specs[i];
    if (s.dim != Dim::k && s.dim != Dim::c) continue;
    if (s.kind == SpecKind::P && s.factor > 1) return -1;
    if (s.kind != SpecKind::R && !(s.kind == SpecKind::T && s.factor > 1)) continue;
    // Its calls count their share in one variable: no thread may run part of them.
    for (size_t j = i + 1; j + 1 < ublock; ++j)
      if (c.specs[j].kind == SpecKind::P && c.specs[j].factor > 1) return -1;
    return int(i);
  }
  return -1;
}

int64_t config_threads(const Config& c) {
  int64_t n = c.wino() ? std::max<int64_t>(1, c.view.threads) : 1;
  for (const Spec& s : c.specs)
    if (s.kind == SpecKind::P && s.factor > 0 && __builtin_mul_overflow(n, spec_threads(s), &n))
      return std::numeric_limits<int64_t>::max();  // never valid; only for unchecked input
  return n;
}

}  // namespace convtune
