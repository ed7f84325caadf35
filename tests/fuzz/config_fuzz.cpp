// Fuzzes the configuration text ("[T(2,k), ..., U(2,k), V(k)]"): parse_config
// gives a configuration whose canonical text parses back to it, and
// validate_config accepts it or throws one Error line. An input of two lines
// is "shape\nconfiguration"; otherwise the configuration is checked against a
// fixed small shape, at the lane counts of avx512 and avx2.
#include "convtune/core/shape.h"
#include "convtune/space/config.h"
#include "fuzz_check.h"

using namespace convtune;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string text = fuzz::text_of(data, size);
  Shape shape;
  shape.K = 32, shape.C = 8, shape.H = shape.W = 6, shape.R = shape.S = 3, shape.set_pad(1);
  const size_t nl = text.find('\n');
  if (nl != std::string::npos) {
    if (!fuzz::parses([&] { shape = parse_shape(text.substr(0, nl)); })) return 0;
    text = text.substr(nl + 1);
  }
  Config c;
  if (!fuzz::parses([&] { c = parse_config(text); })) return 0;
  const std::string canonical = to_string(c);
  Config back;
  if (!fuzz::parses([&] { back = parse_config(canonical); }))
    fuzz::fail("the canonical text of a parsed configuration does not parse", canonical);
  if (back != c) fuzz::fail("configuration text round trip", canonical + " vs " + to_string(back));
  for (int64_t lanes : {16, 8}) fuzz::parses([&] { validate_config(c, shape, lanes); });
  return 0;
}
